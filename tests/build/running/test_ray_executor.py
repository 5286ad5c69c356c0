"""The Ray executor on a local Ray instance: same output as the local executor (for a build
and for an import of the release), broken sources reported, and a build resumed after its
driver was killed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import ray  # the optional extra splice-benchmark[ray]; the test extra installs it

from splice_build.cli import main
from splice_build.remote.release.command import ImportConfig, run_import
from splice_build.running.pipeline import run_build
from tests.support.build_helpers import (
    alive,
    committed,
    config,
    descendants,
    process_title,
    subset_annotations,
    tree_digest,
    wait_for_first_commit,
)
from tests.support.release_folder import IMPORTED, make_release
from tests.support.terminal import terminal_sigint


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_matches_local_and_reports_broken_source(
    ray_local, tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    ids = demo_ids[:4]
    videos = tmp_path / "videos"
    videos.mkdir()
    for vid in ids[:3]:
        shutil.copy(sources / f"{vid}.mp4", videos / f"{vid}.mp4")
    (videos / f"{ids[3]}.mp4").write_bytes(b"\x00" * 1000)  # broken: not a video
    annotations = subset_annotations(tmp_path, ids)
    local = run_build(config(annotations, videos, tmp_path / "local" / "splice"))
    remote = run_build(config(annotations, videos, tmp_path / "ray" / "splice", executor="ray"))
    assert tree_digest(remote.out) == tree_digest(local.out)
    skipped = {v.video_id: v for v in remote.report.skipped}
    assert list(skipped) == [ids[3]]
    assert skipped[ids[3]].stage == "probe" and skipped[ids[3]].reason
    assert remote.problems == []


def test_ray_build_resumes_after_driver_is_killed(
    ray_local, tmp_path: Path, sources: Path, demo_ids: list[str], subset_build
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    straight, _ = subset_build(4)  # the session's build of these videos, read only
    out = tmp_path / "c" / "splice"
    work = tmp_path / "c" / "work"
    cmd = [
        sys.executable, "-m", "splice_build.cli", "build", "--annotations", str(annotations),
        "--videos", str(sources), "--out", str(out), "--work", str(work),
        "--executor", "ray", "--workers", "1", "--no-progress", "--no-validate",
    ]  # fmt: skip
    # The killed driver starts (and takes down) its own Ray instance.
    env = {**os.environ, "RAY_ADDRESS": "local"}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        start_new_session=True,
    )  # fmt: skip
    wait_for_first_commit(proc, work)
    started = descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # the driver alone
    proc.wait()
    # The task workers, which cut into the work folder, are gone within seconds: they die
    # with their raylet, which Ray fate-shares with the driver of a local instance. (Its
    # dashboard and runtime-env agents, which write nothing there, may idle on: cleaned up
    # below.)
    workers = {p for p in started if not process_title(p).endswith("Agent")}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in workers):
        time.sleep(0.1)
    assert not [process_title(p) for p in workers if alive(p)]
    os.killpg(proc.pid, signal.SIGKILL)  # what Ray left
    assert 1 <= len(committed(work)) < 4 and not out.exists()
    resumed = run_build(config(annotations, sources, out, work=work, executor="ray")).out
    assert tree_digest(resumed) == tree_digest(straight)


def test_ray_import_matches_local(ray_local, tmp_path: Path) -> None:
    """``splice import-release --executor ray`` runs each video's conversion as a Ray task
    and writes the same bytes as the local pool, skips and reasons included."""
    release = make_release(tmp_path / "splice-benchmark")
    local = run_import(ImportConfig(source=str(release), out=tmp_path / "local" / "splice"))
    out = tmp_path / "ray" / "splice"
    args = ["import-release", str(release), "--out", str(out), "--executor", "ray"]
    assert main([*args, "--no-progress"]) == 0
    assert tree_digest(out) == tree_digest(local.out)
    assert {v.video_id for v in local.report.included} == IMPORTED


def test_ctrl_c_twice_during_a_ray_build_is_one_line_exit_130(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    """Issue 31, wall 2: a build on a Ray instance of its own ends with Ray's shutdown at
    exit (seconds, waiting for its processes), outside any handler: a second Ctrl-C, the
    one a user presses when the first seems slow, printed Ray's ``KeyboardInterrupt``
    traceback after the build's line. The build's line stays the last, with exit 130."""
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    work = tmp_path / "work"
    cmd = [
        sys.executable, "-m", "splice_build.cli", "build", "--annotations", str(annotations),
        "--videos", str(sources), "--out", str(tmp_path / "splice"), "--work", str(work),
        "--executor", "ray", "--workers", "1", "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "RAY_ADDRESS": "local"}  # its own instance, as a user's first run
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True, preexec_fn=terminal_sigint,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        wait_for_first_commit(proc, work)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        deadline = time.monotonic() + 120
        while not any("interrupted" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # into Ray's shutdown at exit
        assert proc.poll() is None, "Ray's shutdown ended before the second Ctrl-C"
        os.killpg(proc.pid, signal.SIGINT)  # and Ctrl-C again
        proc.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # what Ray left
    stderr = "".join(lines)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert lines[-1].startswith("splice build: interrupted"), stderr


def test_ray_builds_another_source_as_the_local_pool(ray_local, tmp_path, tmp_path_factory):
    """``splice build --source crosstask --executor ray`` writes the same bytes as the
    session's CrossTask build on the local pool (its annotations and stand-in videos)."""
    from tests.build.sources.test_crosstask import write_release
    from tests.support.source_builds import build_source, splice

    made = build_source(tmp_path_factory, "crosstask", write_release)
    out = tmp_path / "ray" / "splice"
    code, stdout, stderr = splice(
        "build", "--source", "crosstask", "--annotations", made["annotations"],
        "--videos", made["videos"], "--out", out, "--workers", "1", "--no-progress",
        "--executor", "ray",
    )  # fmt: skip
    assert code == 0, stdout + stderr
    assert tree_digest(out) == tree_digest(Path(made["out"]))
