"""Sources as downloaders and taggers really leave them, built and validated through the CLI
(issue 20, defect 7): a still picture before the real video (a thumbnail track, cover art)
must not hide it, and a source file that cannot be read (a dangling link) must not hide the
good file beside it. The sources are index-bar videos (tests/support/videos.py), so the test reads
which source frame each clip starts with instead of trusting the cutter."""

from __future__ import annotations

import json
import os
from pathlib import Path

import av
import pytest

from splice_build.running.report import REPORT_JSON
from tests.support.build_helpers import (
    cli_build,
    clip_first_frames,
    ids_with_steps,
    retimed_annotations,
    run_splice,
)
from tests.support.videos import move_tags_first, write_video, write_with_still

SEGMENTS = [(0.5, 2.0), (3.0, 5.0), (6.0, 8.0)]
FPS = 10
# The source frame each clip starts with: the first at or after its step's start.
FIRST_FRAMES = sorted(round(start * FPS) for start, _ in SEGMENTS)
# What a build report's reason must never read like: an exception's class or errno text.
RAW_ERROR_WORDS = ("Errno", "Error:", "Operation not permitted", "FileNotFoundError")


def build_and_validate(tmp_path: Path, videos: Path, video_id: str) -> Path:
    """``splice build`` then ``splice validate``; both must exit 0 with the video kept."""
    annotations = retimed_annotations(tmp_path, {video_id: SEGMENTS}, duration=10.0)
    out = tmp_path / "splice"
    cli_build(annotations, videos, out)
    report = json.loads((out / REPORT_JSON).read_text("utf-8"))
    assert [v["status"] for v in report["videos"]] == ["included"], report["videos"]
    checked = run_splice("validate", out)
    assert checked.returncode == 0, (checked.stdout, checked.stderr)
    return out


@pytest.mark.parametrize(
    ("name", "options"),
    [
        # A one-frame still as stream 0 of an mkv (a thumbnail track), plus a PNG attachment
        # that FFmpeg reads as an attached-picture stream (PyAV cannot write PNG as a
        # Matroska track: the muxer refuses the codec at normal compliance).
        ("thumbnail.mkv", dict(fmt="matroska", still="mjpeg", attached_pic=False, attachment=True)),
        # An mp4 with audio and PNG cover art (the attached_pic disposition), its tags moved
        # before the tracks as tag editors write them: FFmpeg then lists the cover first.
        ("cover.mp4", dict(fmt="mp4", still="png", attached_pic=True, audio=True)),
    ],
)
def test_a_still_picture_stream_does_not_hide_the_video(
    tmp_path: Path, name: str, options: dict
) -> None:
    (video_id,) = ids_with_steps(1, len(SEGMENTS))
    videos = tmp_path / "videos"
    videos.mkdir()
    source = write_with_still(videos / f"{video_id}{Path(name).suffix}", **options)
    if source.suffix == ".mp4":
        move_tags_first(source)
    with av.open(str(source)) as container:  # the file is what the case says it is
        kinds = [(s.type, s.codec_context.name) for s in container.streams]
    assert kinds[0] == ("video", options["still"]) and ("video", "h264") in kinds, kinds
    out = build_and_validate(tmp_path, videos, video_id)
    assert clip_first_frames(out) == FIRST_FRAMES


def test_a_dangling_link_does_not_hide_the_good_source(tmp_path: Path) -> None:
    (video_id,) = ids_with_steps(1, len(SEGMENTS))
    videos = tmp_path / "videos"
    videos.mkdir()
    write_video(videos / f"{video_id}.webm", n_frames=100, fps=FPS, codec="libvpx")
    os.symlink(tmp_path / "gone" / f"{video_id}.mp4", videos / f"{video_id}.mp4")
    out = build_and_validate(tmp_path, videos, video_id)
    assert clip_first_frames(out) == FIRST_FRAMES
    report = json.loads((out / REPORT_JSON).read_text("utf-8"))
    printed = json.dumps(report)
    assert not any(word in printed for word in RAW_ERROR_WORDS), printed


def test_a_dangling_link_alone_is_skipped_with_a_reason_in_words(tmp_path: Path) -> None:
    good, dangling = ids_with_steps(2, len(SEGMENTS))
    videos = tmp_path / "videos"
    videos.mkdir()
    write_video(videos / f"{good}.mp4", n_frames=100, fps=FPS)
    os.symlink(tmp_path / "gone.mp4", videos / f"{dangling}.mp4")
    annotations = retimed_annotations(tmp_path, {good: SEGMENTS, dangling: SEGMENTS}, duration=10.0)
    out = tmp_path / "splice"
    cli_build(annotations, videos, out)
    status = {v["video_id"]: v for v in json.loads((out / REPORT_JSON).read_text())["videos"]}
    assert status[good]["status"] == "included"
    skipped = status[dangling]
    assert skipped["status"] == "skipped", skipped
    assert "link" in skipped["reason"] and f"{dangling}.mp4" in skipped["reason"], skipped
    assert not any(word in skipped["reason"] for word in RAW_ERROR_WORDS), skipped
    assert run_splice("validate", out).returncode == 0
