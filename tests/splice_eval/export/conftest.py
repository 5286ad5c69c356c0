"""Fixtures of the export's parity tests: the toolkit venv WITHOUT this project, and a tiny
Qwen2.5-VL checkpoint built there (tests/support/tiny_checkpoints.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import SUPPORT
from tests.support.side_venvs import torch_python
from tests.support.tiny_checkpoints import PRINTED


@pytest.fixture(scope="session")
def torch_env() -> Path:
    python = torch_python()
    alone = subprocess.run(
        [str(python), "-c", "import splice_dataset"],
        capture_output=True,
        env={},
        cwd="/",  # not the checkout, whose modules a python started there imports
        timeout=300,
    )
    assert alone.returncode != 0, "the toolkit venv must not have this project installed"
    return python


@pytest.fixture(scope="session")
def qwen_checkpoint(torch_env, tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("tiny-qwen")
    proc = subprocess.run(
        [
            str(torch_env),
            str(SUPPORT / "tiny_checkpoints.py"),
            str(root),
            "--toolkit",
            "qwen2_5_vl",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HF_HOME": str(root / "hf")},
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(PRINTED + " ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return json.loads(lines[-1].split(" ", 1)[1])["qwen2_5_vl"]["path"]
