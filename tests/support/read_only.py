"""A folder refused for writing for real, for the tests of caches that must be read where
they cannot be written (the frame cache, the lmms task's clip cache)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` refused for writing for real: a read-only bind mount as root (whom
    permissions do not stop), its permissions otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
    for path in modes:
        path.chmod(0o555)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
