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


# Run in the toolkit venv: the files of every distribution a package declares it needs
# (transitively, extras left out) as that venv installs them, as JSON.
CLOSURE = """
import importlib.metadata as md, json, re, sys
from packaging.requirements import Requirement
seen, todo = {}, sys.argv[1:]
while todo:
    name = todo.pop()
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    try:
        seen[key] = dist = md.distribution(name)
    except md.PackageNotFoundError:
        seen[key] = None
        continue
    for text in dist.requires or []:
        req = Requirement(text)
        if not req.marker or req.marker.evaluate({"extra": ""}):
            todo.append(req.name)
tops = {
    str(d.locate_file(f.parts[0]))
    for d in seen.values() if d is not None
    for f in d.files or [] if f.parts[0] != ".." and not f.parts[0].endswith(".data")
}
print(json.dumps({"tops": sorted(tops), "have": sorted(k for k, d in seen.items() if d)}))
"""
# A declared dependency the toolkit venv has as its drop-in (the Makefile installs the
# headless OpenCV: the same `cv2`, without the GUI libraries a server lacks).
DROP_INS = {"ms-vlmeval": ["opencv-python-headless"]}


def declared_deps_python(torch_env: Path, package: str, root: Path) -> tuple[Path, list[str]]:
    """A venv holding only what ``package`` declares it needs (its distributions as the
    toolkit venv installs them, linked into the new venv's site-packages; a declared one
    not installed there is simply absent): a user who installed the toolkit alone. Its
    Python, and the distributions it has."""
    done = subprocess.run(
        [str(torch_env), "-c", CLOSURE, package, *DROP_INS.get(package, [])],
        capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    base = subprocess.run(
        [str(torch_env), "-c", "import sys; print(sys._base_executable)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True, timeout=300)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    for top in map(Path, found["tops"]):
        link = Path(site) / top.name
        if not link.exists() and top.exists():
            link.symlink_to(top, target_is_directory=top.is_dir())
    return python, found["have"]
