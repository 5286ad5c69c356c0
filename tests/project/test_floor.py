"""The lowest `datasets` release setup.cfg allows: the loading tests, run on it.

setup.cfg's `datasets>=` floor must be a release on which every public function of
`splice_dataset` works, streaming included (datasets 4.0 and 4.1 refuse the
`fragment_scan_options` that `load(..., streaming=True)` passes). `make floor-venv` makes
`.venv-floor` with exactly that release (and the project, editable, with its other
dependencies as pip resolves them); this runs the loading, viewer, card and writer tests
with its Python (or ``SPLICE_FLOOR_PYTHON``). `make test` sets ``SPLICE_REQUIRE_FLOOR=1``,
so there a missing venv fails instead of skipping.
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
from pathlib import Path

import splice_dataset as sd
from tests.support.paths import REPO
from tests.support.side_venvs import side_venv_python

FLOOR_TESTS = (
    "tests/test_splice_dataset.py",
    "tests/test_viewer.py",
    "tests/build/output/test_card.py",
    "tests/build/output/test_write.py",
)


def setup_cfg_floor() -> str:
    """The version in setup.cfg's ``datasets>=X`` requirement."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg", encoding="utf-8")
    requires = cfg["options"]["install_requires"]
    found = re.findall(r"^\s*datasets\s*>=\s*([0-9][0-9.]*)\s*$", requires, re.M)
    assert len(found) == 1, f"setup.cfg: no single `datasets>=X` in install_requires:\n{requires}"
    return found[0]


def test_setup_cfg_floor_is_the_schema_constant() -> None:
    assert setup_cfg_floor() == sd.DATASETS_MIN_VERSION


def test_loading_tests_pass_on_the_datasets_floor(tmp_path: Path) -> None:
    python = side_venv_python(
        ".venv-floor", "SPLICE_FLOOR_PYTHON", "SPLICE_REQUIRE_FLOOR", "floor-venv", "datasets"
    )
    probe = subprocess.run(
        [str(python), "-c", "import datasets, splice_dataset; print(datasets.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert probe.stdout.strip() == setup_cfg_floor(), (
        f"{python} has datasets {probe.stdout.strip()}, not setup.cfg's floor "
        f"{setup_cfg_floor()}: run `make floor-venv`"
    )
    env = {
        **os.environ,
        # its own caches: another datasets version must not read this one's Arrow files
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets"),
        "HF_HUB_OFFLINE": "1",
    }
    proc = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'pytest'}",  # never the outer session's temp folders
            *FLOOR_TESTS,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", proc.stdout) and " failed" not in proc.stdout
