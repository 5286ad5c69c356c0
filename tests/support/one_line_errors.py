"""The dispatcher's promise for a user's mistake, checked from outside: `splice` run in a fresh
interpreter (optionally without a module, as on a machine that lacks an extra) ends with one
stderr line naming what to do, exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def splice_without(
    module: str | None, argv: list[str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``splice argv`` through the real dispatcher in a fresh interpreter where ``import
    module`` raises ``ModuleNotFoundError`` (``sys.modules[module] = None``), exactly as on a
    machine without it; ``module=None`` blocks nothing."""
    blocker = f"sys.modules[{module!r}] = None; " if module else ""
    code = f"import sys; {blocker}from splice_build.cli import main; sys.exit(main({argv!r}))"
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path), "SPLICE_DEBUG": "0"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=timeout,
    )  # fmt: skip


def assert_one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    """``done`` refused the user: exit 2, one stderr line holding every one of ``words``."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]
