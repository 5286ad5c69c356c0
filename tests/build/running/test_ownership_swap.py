"""A kill inside the final swap loses no build (issue 20, defect 3).

A real ``splice build`` subprocess SIGKILLs itself at a named point of the swap (the
documented test hook ``ownership.KILL_AT_ENV``), on the atomic exchange and on the
two-rename path; then a failing rerun (an empty ``--videos``) and a good rerun follow.
After every step a complete build that ``splice validate`` accepts is at ``out``, or the
next run restores one before it does anything else, and no cleanup deletes it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_build.running import ownership
from splice_build.running.report import load_report
from tests.support.build_helpers import readme_build, subset_annotations
from tests.support.terminal import interrupt_when


def _validates(capsys, out: Path) -> bool:
    code = main(["validate", str(out)])
    capsys.readouterr()
    return code == 0


@pytest.fixture(scope="module")
def built_project(tmp_path_factory, sources, demo_ids) -> Path:
    """A user's folder after one good build: COIN.json, videos/, splice/, splice-work/."""
    project = tmp_path_factory.mktemp("recovery") / "project"
    (project / "videos").mkdir(parents=True)
    for vid in demo_ids[:2]:
        shutil.copy(sources / f"{vid}.mp4", project / "videos")
    subset_annotations(project, demo_ids[:2], "COIN.json")
    (project / "empty").mkdir()
    code = main(["build", "--annotations", str(project / "COIN.json"), "--videos",
                 str(project / "videos"), "--out", str(project / "splice"), "--workers", "1",
                 "--no-progress"])  # fmt: skip
    assert code == 0
    return project


def _killed_build(project: Path, point: str, swap: str) -> int:
    env = {**os.environ, ownership.KILL_AT_ENV: point, ownership.SWAP_ENV: swap}
    cmd = [sys.executable, "-m", "splice_build.cli", "build", "--annotations", "COIN.json",
           "--videos", "videos/", "--out", "splice/", "--workers", "1", "--no-progress",
           "--seed", "7"]  # fmt: skip
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, timeout=600)
    return done.returncode


@pytest.mark.parametrize(
    "swap, point",
    [
        (ownership.SWAP_EXCHANGE, ownership.KILL_MARKED),
        (ownership.SWAP_EXCHANGE, ownership.KILL_SWAPPED),
        (ownership.SWAP_RENAMES, ownership.KILL_MARKED),
        (ownership.SWAP_RENAMES, ownership.KILL_MOVED_ASIDE),
        (ownership.SWAP_RENAMES, ownership.KILL_SWAPPED),
        (ownership.SWAP_RENAMES, ownership.KILL_STAGED),  # past staging, before the swap
    ],
)
def test_a_kill_in_the_swap_then_a_failing_and_a_good_rerun_keep_a_complete_build(
    capsys, tmp_path, built_project, swap, point
) -> None:
    if swap == ownership.SWAP_EXCHANGE and not ownership.exchange_supported(tmp_path):
        pytest.skip(f"{tmp_path}: the file system cannot exchange two folders atomically")
    project = tmp_path / "project"
    shutil.copytree(built_project, project, symlinks=True)
    out = project / "splice"

    assert _killed_build(project, point, swap) == -signal.SIGKILL
    if swap == ownership.SWAP_EXCHANGE or point != ownership.KILL_MOVED_ASIDE:
        assert _validates(capsys, out), f"no complete build at out after a kill at {point}"
    else:
        assert not out.exists()  # the instant the hook names: only the next run restores

    # A failing rerun restores first, says the truth, and deletes no complete copy.
    code, err = readme_build(capsys, project, "--videos", "empty/")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "left as it was" in err, err
    assert _validates(capsys, out), f"the failing rerun after a kill at {point} lost out"
    assert load_report(out)["settings"]["seed"] in (0, 7)  # the old build or the finished one
    hidden = sorted(p.name for p in project.iterdir() if p.name.startswith("."))
    assert hidden == [], hidden  # leftovers of the killed build: only what it made, gone

    code, err = readme_build(capsys, project)
    assert code == 0, err
    assert _validates(capsys, out)
    assert load_report(out)["settings"]["seed"] == 0
    assert sorted(p.name for p in project.iterdir()) == [
        "COIN.json", "empty", "splice", "splice-work", "videos",
    ]  # fmt: skip


def test_a_swap_left_half_done_by_an_older_build_is_restored(capsys, tmp_path, built_project):
    """What the defect left on disk (``out`` moved aside, the finished build beside it, no
    record): the next run puts the previous build back before anything else."""
    project = tmp_path / "project"
    shutil.copytree(built_project, project, symlinks=True)
    os.replace(project / "splice", project / ".splice.replaced-old")
    shutil.copytree(project / ".splice.replaced-old", project / ".splice.incomplete-new")
    code, err = readme_build(capsys, project, "--videos", "empty/")
    assert code == 2 and "left as it was" in err, err
    assert _validates(capsys, project / "splice")
    assert not [p for p in project.iterdir() if p.name.startswith(".")]


def test_a_failed_first_build_does_not_claim_to_leave_out_as_it_was(capsys, tmp_path) -> None:
    project = tmp_path / "project"
    (project / "videos").mkdir(parents=True)
    subset_annotations(project, ["-LhNzREgSIU"], "COIN.json")
    code, err = readme_build(capsys, project)
    assert code == 2, err
    assert "left as it was" not in err and "not created" in err, err
    assert not (project / "splice").exists()


def _committed(work: Path) -> dict[str, dict[str, int]]:
    """The work folder's committed entries: each file's mtime (a re-cut rewrites them)."""
    videos = work / "videos"
    if not videos.is_dir():
        return {}
    return {
        d.name: {f.name: f.stat().st_mtime_ns for f in d.iterdir()}
        for d in videos.iterdir()
        if not d.name.startswith(".")
    }


@pytest.mark.parametrize(
    ("signum", "status", "words"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
)
def test_ctrl_c_during_build_is_one_line_exit_130_and_the_rerun_resumes(
    signum, status, words, capsys, tmp_path, sources, demo_ids
) -> None:
    """Wall 3 (issue 30): Ctrl-C during ``splice build`` printed about 40 lines of
    ``KeyboardInterrupt`` traceback through ``executors.py``. The terminal's SIGINT (sent to
    the whole process group, workers included) now ends the build with one line and exit
    130, as ``splice run`` does; the rerun keeps every video already cut. SIGTERM (a batch
    system's stop, issue 47 §4) killed the build where it stood (exit -15): it is handled
    the same way, exit 143."""
    project = tmp_path / "project"
    (project / "videos").mkdir(parents=True)
    for vid in demo_ids:
        shutil.copy(sources / f"{vid}.mp4", project / "videos")
    subset_annotations(project, demo_ids, "COIN.json")
    cmd = [sys.executable, "-m", "splice_build.cli", "build", "--annotations", "COIN.json",
           "--videos", "videos/", "--out", "splice/", "--workers", "2",
           "--no-progress"]  # fmt: skip

    done = interrupt_when(
        cmd, lambda: bool(_committed(project / "splice-work")), cwd=project, signum=signum
    )
    stderr = done.stderr  # interrupted once the first video is cut and committed
    assert done.returncode == status, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith(f"splice build: {words};") and "resume" in lines[0]
    kept = _committed(project / "splice-work")
    assert kept and len(kept) < len(demo_ids)
    assert not (project / "splice").exists()

    code, err = readme_build(capsys, project, "--workers", "2")
    assert code == 0, err
    after = _committed(project / "splice-work")
    assert {vid: after[vid] for vid in kept} == kept  # reused as they were, not cut again
    assert sorted(v["video_id"] for v in load_report(project / "splice")["videos"]) == demo_ids
