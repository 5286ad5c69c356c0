"""An installed toolkit with exported files added, without touching the installed copy.

The parity tests put an export where the toolkit's pull request puts it (lmms-eval's task in
``lmms_eval/tasks/splice/``) in a throwaway overlay: a folder first on the subprocess's
PYTHONPATH whose ``lmms_eval`` package links every file and folder of the venv's own and adds
the exported folder. The shared venv's site-packages are never written, and lmms-eval, which
indexes the task folders it finds under its own ``tasks/`` (``os.walk`` does not enter the
linked ones), indexes the exported task alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def installed_package(python: Path, package: str) -> Path:
    """The folder of ``package`` as ``python`` imports it (no PYTHONPATH of ours)."""
    proc = subprocess.run(
        [str(python), "-c", f"import {package}, os; print(os.path.dirname({package}.__file__))"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def overlay_package(installed: Path, root: Path, add: dict[str, Path]) -> Path:
    """``root/<package>``: links to every entry of ``installed``, but the folders on the way
    to ``add``'s paths ("tasks/splice" -> a copy of that folder), which are made real."""
    _mirror(installed, root / installed.name, {tuple(k.split("/")): v for k, v in add.items()})
    return root


def _mirror(source: Path, dest: Path, add: dict[tuple[str, ...], Path]) -> None:
    dest.mkdir(parents=True)
    heads = {path[0] for path in add}
    for entry in source.iterdir():
        if entry.name not in heads:
            (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for head in heads:
        deeper = {path[1:]: folder for path, folder in add.items() if path[0] == head and path[1:]}
        if deeper:
            _mirror(source / head, dest / head, deeper)
        else:
            shutil.copytree(add[(head,)], dest / head)
