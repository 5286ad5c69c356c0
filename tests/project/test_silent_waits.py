"""No phase is silent for long (issue 30, wall 7): each command says what it is doing
before the slow part starts. The tests check the ORDER of what a command prints (stdout
and stderr through one pipe, unbuffered), never how long anything takes.

``annotate serve`` (its address only once the page answers) is tested with the rest of
the annotation app, in ``tests/splice_eval/human/app/test_app.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from splice_eval.human import annotate
from tests.support.paths import REPO

BUILD_IMPORTED = re.compile(r"^import time:.*\|\s+splice_build\.running\.pipeline$")


def _lines(argv: list[str], cwd: Path, until: str | None = None) -> Iterator[str]:
    """What a command prints, line by line (a bar's redraws as lines of their own), in
    the order it printed it; with ``until``, the process is stopped at the first line
    holding that text."""
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        for raw in process.stdout:
            for line in raw.split("\r"):
                yield line.rstrip("\n")
                if until is not None and until in line:
                    return
        assert process.wait(timeout=600) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)
        process.stdout.close()


def _first(lines: list[str], pattern: str | re.Pattern) -> int:
    hits = [
        i
        for i, line in enumerate(lines)
        if (pattern.search(line) if isinstance(pattern, re.Pattern) else pattern in line)
    ]
    assert hits, f"nothing printed matches {pattern!r}: {lines[:40]}"
    return hits[0]


def test_demo_says_what_it_does_before_importing_or_building(tmp_path):
    """The first line comes before the build's machinery is even imported, then the
    stand-ins' bar, then the build's."""
    argv = [sys.executable, "-X", "importtime", "-m", "splice_build.cli", "demo"]
    argv += ["--out", str(tmp_path / "splice-data"), "--workers", "1"]
    lines = list(_lines(argv, tmp_path, until="probe+cut"))
    said = _first(lines, "splice demo: building")
    assert said < _first(lines, BUILD_IMPORTED)
    assert said < _first(lines, "stand-ins:") < _first(lines, "probe+cut")


def test_annotate_export_shows_a_bar_of_videos(demo_build, tmp_path):
    argv = [sys.executable, "-m", "splice_build.cli", "annotate", "export", str(demo_build)]
    argv += ["--out", str(tmp_path / "packages"), "--limit", "3"]
    lines = list(_lines(argv, tmp_path))
    started = _first(lines, "splice annotate export: 6 ordering tasks of 3 videos")
    assert started < _first(lines, "packages:") < _first(lines, "3/3") < _first(lines, "wrote ")
    assert (tmp_path / "packages" / annotate.KEY_NAME).is_file()


@pytest.mark.skipif(not (REPO / "bench" / "probe_sweep.py").is_file(), reason="no bench/")
def test_probe_sweep_says_what_it_does_run_by_run(tmp_path):
    """The sweep's first line, the build's bar, then a line as each run ends (the test
    stops it after its first run: the order is what is checked)."""
    argv = [sys.executable, str(REPO / "bench" / "probe_sweep.py"), "--workers", "1"]
    lines = list(_lines(argv, tmp_path, until="without cache: run 1/12"))
    said = _first(lines, "probe sweep: importing")
    assert said < _first(lines, "probe+cut") < _first(lines, "without cache: 12 runs")
    assert lines[-1].startswith("without cache: run 1/12 (model-a, ")
