"""Fixtures of the toolkit tests (lmms-eval's task, its question and probe variants, the
model classes of lmms-eval and VLMEvalKit): the task's ``utils.py``, lmms-eval's Python, and
the tiny checkpoints both toolkits' model classes load."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.lmms_tasks import load_utils
from tests.support.once import build_once
from tests.support.paths import SUPPORT
from tests.support.side_venvs import lmms_python, offline_env
from tests.support.tiny_checkpoints import FAMILIES, PRINTED


@pytest.fixture(scope="module")
def utils():
    return load_utils()


@pytest.fixture(scope="module")
def lmms() -> Path:
    return lmms_python("lmms_eval.tasks, lmms_eval.evaluator, splice_dataset")


@pytest.fixture(scope="session")
def toolkit_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every family's ``--toolkit`` checkpoint and InternVL-Chat's (tests/support/
    tiny_checkpoints.py), built once per test run in the torch venv for lmms-eval's and
    VLMEvalKit's model classes alike: {family: {path, parameters} or {error}}."""
    python = lmms_python("transformers")

    def make(root: Path) -> dict[str, dict]:
        command = [str(python), str(SUPPORT / "tiny_checkpoints.py"), str(root), "--toolkit"]
        proc = subprocess.run(
            [*command, *FAMILIES, "internvl_chat"],
            capture_output=True,
            text=True,
            timeout=900,
            env=offline_env(root),
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(PRINTED + " ")]
        assert proc.returncode == 0 and lines, proc.stderr[-4000:]
        return json.loads(lines[-1].split(" ", 1)[1])

    return build_once(tmp_path_factory, "toolkit-checkpoints", make)
