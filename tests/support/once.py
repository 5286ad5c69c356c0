"""An expensive fixture built once per test run, whatever the number of pytest-xdist workers:
`make test` runs two (``-n 2``), and a session fixture would otherwise be built by each
(the demo build, the tiny checkpoints, the wheel). The first worker to ask builds it under a
file lock in a folder every worker of this run sees; the others wait, then read what it
wrote. A build that fails is not recorded, so the next worker to ask tries again and fails
with its own error."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

DONE = "done.json"


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of this run shared by its workers: the base temp's parent under xdist (each
    worker's base temp is ``popen-gwN`` inside it), else the base temp itself (its parent
    holds the other runs' folders)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]
) -> object:
    """``make(folder)``'s value (JSON), from the one call of this run: ``folder`` is
    ``<run root>/once-<name>/`` and empty when ``make`` starts; a later call, in any worker,
    returns the recorded value without calling ``make``."""
    folder = run_root(tmp_path_factory) / f"once-{name}"
    with FileLock(str(folder) + ".lock"):
        done = folder / DONE
        if done.is_file():
            return json.loads(done.read_text(encoding="utf-8"))["value"]
        if folder.exists():  # a failed attempt's leftovers
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        value = make(folder)
        done.write_text(json.dumps({"value": value}), encoding="utf-8")
        return value
