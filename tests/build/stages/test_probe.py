"""Stage 3, probe: real footage opens with the right facts; every broken source is skipped
with a reason that names the file."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from splice_build.records import SkipVideo
from splice_build.stages.probe import probe
from tests.support.videos import entry, truncate, write_audio_only, write_not_video, write_video


def _probe_copy(src: Path, tmp_path: Path, segments, name: str = "vid"):
    videos = tmp_path / "videos"
    videos.mkdir(exist_ok=True)
    shutil.copy(src, videos / f"{name}{src.suffix}")
    return probe(entry(name, segments), videos)


def _skip(videos: Path, segments, video_id: str = "vid") -> str:
    with pytest.raises(SkipVideo) as raised:
        probe(entry(video_id, segments), videos)
    assert raised.value.stage == "probe"
    return raised.value.reason


def test_real_mp4(bikes_mp4, tmp_path):
    info = _probe_copy(bikes_mp4, tmp_path, [(1.0, 3.0), (5.0, 9.9)]).source
    assert info.path.name == "vid.mp4"
    assert info.container.startswith("mov,mp4")
    assert (info.codec, info.width, info.height, info.fps) == ("h264", 640, 272, 25.0)
    assert info.duration == pytest.approx(10.0)
    assert info.start_time == 0.0 and not info.has_audio


def test_real_mpeg_ps_with_start_time(city_mpg, tmp_path):
    info = _probe_copy(city_mpg, tmp_path, [(0.5, 2.0), (4.0, 7.5)]).source
    assert info.container == "mpeg" and info.codec == "mpeg2video"
    assert (info.width, info.height) == (720, 405)
    assert info.start_time == pytest.approx(0.54)
    assert info.duration == pytest.approx(7.6, abs=0.05)


def test_source_with_audio(tmp_path):
    src = write_video(tmp_path / "a.mp4", n_frames=20, audio=True)
    assert _probe_copy(src, tmp_path, [(0.0, 1.0)]).source.has_audio


@pytest.mark.parametrize("suffix", [".mkv", ".webm", ".avi", ".mov", ".ts", ".mpg", ".flv"])
def test_other_containers_are_found_and_open(tmp_path, suffix):
    codec = {".webm": "libvpx", ".mpg": "mpeg2video", ".ts": "mpeg2video", ".flv": "flv"}
    fmt = {".ts": "mpegts", ".mpg": "mpeg"}
    src = write_video(
        tmp_path / f"src{suffix}",
        n_frames=30,
        codec=codec.get(suffix, "libx264"),
        fmt=fmt.get(suffix),
    )
    info = _probe_copy(src, tmp_path, [(0.5, 1.5), (2.0, 2.9)]).source
    assert info.path.suffix == suffix and (info.width, info.height) == (64, 48)


def test_missing_source(tmp_path):
    reason = _skip(tmp_path, [(0.0, 1.0)], "nosuchid")
    assert "nosuchid" in reason and "0 files" in reason
    assert str(tmp_path) not in reason  # the report is published: no local paths


def test_zero_byte_source(tmp_path):
    (tmp_path / "vid.mp4").write_bytes(b"")
    reason = _skip(tmp_path, [(0.0, 1.0)])
    assert "vid.mp4" in reason and "empty" in reason


@pytest.mark.parametrize("suffix", [".mp4", ".webm"])
def test_not_a_video(tmp_path, suffix):
    write_not_video(tmp_path / f"vid{suffix}")
    reason = _skip(tmp_path, [(0.0, 1.0)])
    assert f"vid{suffix}" in reason and "cannot open" in reason


def test_random_bytes(tmp_path):
    (tmp_path / "vid.mkv").write_bytes(bytes(range(256)) * 40)
    assert "vid.mkv" in _skip(tmp_path, [(0.0, 1.0)])


def test_audio_only(tmp_path):
    write_audio_only(tmp_path / "vid.mp4", seconds=3.0)
    reason = _skip(tmp_path, [(0.0, 1.0)])
    assert "vid.mp4" in reason and "no video stream" in reason and "audio only" in reason


def test_truncated_mp4_without_faststart_cannot_open(tmp_path):
    truncate(write_video(tmp_path / "vid.mp4", n_frames=100), 0.6)
    reason = _skip(tmp_path, [(0.0, 1.0), (8.0, 9.5)])
    assert "vid.mp4" in reason and "cannot open" in reason


@pytest.mark.parametrize(
    ("name", "options"),
    [("vid.mp4", {"movflags": "+faststart"}), ("vid.mkv", None), ("vid.webm", None)],
)
def test_truncated_with_full_header(tmp_path, name, options):
    """The header still claims 10 s, but the frames of the last step are gone."""
    codec = "libvpx" if name.endswith(".webm") else "libx264"
    src = write_video(tmp_path / name, n_frames=100, codec=codec, container_options=options)
    truncate(src, 0.5)
    reason = _skip(tmp_path, [(0.0, 1.0), (8.0, 9.5)])
    assert name in reason and "truncated" in reason


def test_segment_past_the_end(bikes_mp4, tmp_path):
    with pytest.raises(SkipVideo) as raised:
        _probe_copy(bikes_mp4, tmp_path, [(1.0, 3.0), (9.0, 12.5)])
    reason = raised.value.reason
    assert raised.value.stage == "probe"
    assert "vid.mp4" in reason and "10.00 s long" in reason and "12.50" in reason


def test_tolerance(bikes_mp4, tmp_path):
    assert _probe_copy(bikes_mp4, tmp_path, [(9.0, 10.9)]).source.duration == pytest.approx(10)
    with pytest.raises(SkipVideo):
        probe(entry("vid", [(9.0, 10.9)]), tmp_path / "videos", tolerance=0.5)


@pytest.mark.parametrize(
    ("size", "fps", "n_frames", "what"),
    [((8, 48), 10, 30, "under 16 px"), ((64, 48), Fraction(1, 2), 6, "frames per second")],
)
def test_source_below_the_least_clip_is_skipped(tmp_path, size, fps, n_frames, what):
    """The cutter never upscales nor raises the rate: such a source could only give clips
    that `splice validate` rejects."""
    videos = tmp_path / "videos"
    videos.mkdir()
    write_video(videos / "vid.mp4", n_frames=n_frames, fps=fps, size=size)
    assert what in _skip(videos, [(0.0, 1.0), (1.0, 2.0)])
