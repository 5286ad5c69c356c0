"""Optional extras that are not installed, and a Ray address nobody answers (issue 21,
wall 3): one stderr line naming the extra (or the address), exit 2, never a traceback.

A missing module is simulated honestly in a fresh interpreter: ``sys.modules[name] = None``
makes every ``import name`` there raise ``ModuleNotFoundError``, exactly as on a machine
without it; the command then runs through the real dispatcher, as a user types it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from splice_build.demo import standin
from splice_build.stages.ingest import load_annotations
from tests.support.build_helpers import demo_database, subset_annotations
from tests.support.one_line_errors import assert_one_line, splice_without


@pytest.fixture(scope="module")
def tiny_build_inputs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("extras")
    annotations = subset_annotations(root, sorted(demo_database())[:1])
    videos = root / "videos"
    for entry in load_annotations(annotations).entries:
        standin.render_source(entry, videos / f"{entry.video_id}.mp4", size=(64, 36), fps=4)
    return annotations, videos


def test_report_without_matplotlib(tmp_path, demo_build):
    predictions = tmp_path / "p.jsonl"
    done = splice_without(
        None,
        ["baseline", "random", "--data", str(demo_build), "--config", "text",
         "--out", str(predictions)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = splice_without(
        "matplotlib",
        ["report", str(predictions), "--data", str(demo_build), "--out", str(tmp_path / "r")],
        tmp_path,
    )
    assert_one_line(done, "splice report", "matplotlib", "[report]")
    assert not (tmp_path / "r" / "report.md").exists()


def test_build_with_ray_executor_without_ray(tmp_path, tiny_build_inputs):
    annotations, videos = tiny_build_inputs
    done = splice_without(
        "ray",
        ["build", "--annotations", str(annotations), "--videos", str(videos),
         "--out", str(tmp_path / "splice"), "--executor", "ray", "--no-progress"],
        tmp_path,
    )  # fmt: skip
    assert_one_line(done, "splice build", "--executor ray", "[ray]")


def test_download_without_yt_dlp(tmp_path, tiny_build_inputs):
    annotations, _ = tiny_build_inputs
    done = splice_without(
        "yt_dlp",
        ["download", "--annotations", str(annotations), "--out", str(tmp_path / "videos"),
         "--no-progress"],
        tmp_path,
    )  # fmt: skip
    assert_one_line(done, "splice download", "yt-dlp", "[download]")


def test_unreachable_ray_address(tmp_path, tiny_build_inputs):
    """A closed port on 127.0.0.1: refused within a bounded time (the subprocess timeout
    fails the test otherwise; Ray alone retries for about 20 s, then raises)."""
    annotations, videos = tiny_build_inputs
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    done = splice_without(
        None,
        ["build", "--annotations", str(annotations), "--videos", str(videos),
         "--out", str(tmp_path / "splice"), "--executor", "ray",
         "--ray-address", f"127.0.0.1:{port}", "--no-progress"],
        tmp_path,
        timeout=60,
    )  # fmt: skip
    assert_one_line(done, "splice build", f"--ray-address 127.0.0.1:{port}")
    assert "gcs_client" not in done.stderr
    assert not (tmp_path / "splice").exists()
