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


DATASETS_IMPORTED = re.compile(r"^import time:.*\|\s+datasets$")
GRADIO_IMPORTING = re.compile(r"^import time:.*\|\s+gradio")  # its first module imported


def test_taxonomy_prior_on_coin_says_what_it_does_first(tmp_path):
    """12 s of silence (importing `datasets`, which it never needs, then the scoring)."""
    argv = [sys.executable, "-X", "importtime", "-m", "splice_build.cli", "baseline"]
    argv += ["taxonomy-prior", "--coin", "--out", str(tmp_path / "prior.jsonl")]
    lines = list(_lines(argv, tmp_path))
    said = _first(lines, "splice baseline taxonomy-prior: ordering")
    assert said < _first(lines, DATASETS_IMPORTED) < _first(lines, "| 2 |")  # scores by steps


def test_leaderboard_init_and_serve_say_what_they_do_first(demo_build, tmp_path):
    """`init` was silent for 9 s, `serve` for 19 s before its address."""
    board = tmp_path / "board"
    argv = [sys.executable, "-m", "splice_build.cli", "leaderboard", "init"]
    lines = list(_lines([*argv, "--board", str(board), "--data", str(demo_build)], tmp_path))
    said = _first(lines, "splice leaderboard init: seeding")
    assert said < _first(lines, f"board {board}:")
    assert "scoring the baselines" in lines[said]
    argv = [sys.executable, "-X", "importtime", "-m", "splice_build.cli", "leaderboard", "serve"]
    argv += ["--board", str(board), "--port", "0"]
    lines = list(_lines(argv, tmp_path, until="| gradio"))
    said = _first(lines, "splice leaderboard serve: loading")
    assert said < _first(lines, GRADIO_IMPORTING)
