"""``splice lmms-tasks`` in a checkout: the folder it prints is the repository's own task
folder (the wheel's copy is tests/project/test_wheel.py's), found from the module's place in
the package, whatever sub-package the module sits in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def test_lmms_tasks_prints_the_checkouts_task_folder(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "splice_build.cli", "lmms-tasks"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder == REPO / "lmms_eval_tasks" / "splice"
    assert (folder / "splice.yaml").is_file() and (folder / "utils.py").is_file()
