"""Clone to first score as a new user meets it (issue 49: "first score in 60 s"), phase by
phase: make the venv, install the project with its core dependencies, run `splice demo`.

Two ways measured in the same run, on a fresh clone of this checkout's HEAD each, with empty
package caches (a new user has none): the baseline (pip, as `make demo` did: `venv`, `pip
install -U pip`, `pip install -e .`) and `make demo`'s way (`venv`, `pip install uv`, `uv
pip install -e .`, no pip upgrade). The demo is run once, after the second install (it does
not depend on the installer). Prints each phase's seconds and the install ratio.

    .venv/bin/python bench/first_score.py [--skip-demo]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def uv_pin() -> str:
    """The uv the Makefile installs (its ``UV :=`` line): one pin."""
    for line in (REPO / "Makefile").read_text("utf-8").splitlines():
        if line.startswith("UV := "):
            return line.split(":=", 1)[1].strip()
    raise SystemExit("Makefile: no UV := line")


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-3000:]}")
    return time.monotonic() - start


def clone(root: Path, name: str) -> Path:
    subprocess.run(
        ["git", "clone", "-q", "--no-hardlinks", str(REPO), str(root / name)], check=True
    )
    return root / name


def phases(root: Path, name: str, installer: str, demo: bool) -> dict[str, float]:
    """The seconds of each phase in a fresh clone, caches empty and private to this run."""
    checkout = clone(root, name)
    env = os.environ | {
        "PIP_CACHE_DIR": str(root / f"{name}-pip-cache"),
        "UV_CACHE_DIR": str(root / f"{name}-uv-cache"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    py = str(checkout / ".venv" / "bin" / "python")
    times = {"venv": timed([sys.executable, "-m", "venv", ".venv"], checkout, env)}
    if installer == "pip":
        times["venv"] += timed([py, "-m", "pip", "install", "-q", "-U", "pip"], checkout, env)
        times["install"] = timed([py, "-m", "pip", "install", "-q", "-e", "."], checkout, env)
    else:
        times["venv"] += timed([py, "-m", "pip", "install", "-q", uv_pin()], checkout, env)
        uv = str(checkout / ".venv" / "bin" / "uv")
        argv = [uv, "pip", "install", "-q", "--python", py, "-e", "."]
        times["install"] = timed(argv, checkout, env)
    if demo:
        splice = str(checkout / ".venv" / "bin" / "splice")
        times["demo"] = timed([splice, "demo", "--out", "splice-data"], checkout, env)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-demo", action="store_true", help="measure the installs only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="splice-first-score-") as tmp:
        root = Path(tmp)
        base = phases(root, "pip", "pip", demo=False)
        made = phases(root, "uv", "uv", demo=not args.skip_demo)
    print("first score: phase seconds, fresh clone, empty caches, 2 cores")
    print(f"{'phase':10s} {'pip (baseline)':>15s} {'make demo (uv)':>15s}")
    for phase in ("venv", "install"):
        print(f"{phase:10s} {base[phase]:15.1f} {made[phase]:15.1f}")
    if "demo" in made:
        print(f"{'demo':10s} {'':>15s} {made['demo']:15.1f}")
    ratio = (base["venv"] + base["install"]) / (made["venv"] + made["install"])
    print(f"venv + install: uv is {ratio:.1f}x faster than pip")
    total = made["venv"] + made["install"] + made.get("demo", 0.0)
    print(f"clone to first score with make demo's way: {total:.1f} s")


if __name__ == "__main__":
    main()
