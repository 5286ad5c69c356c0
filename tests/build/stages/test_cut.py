"""Stage 4, cut: frame-exact clips from real footage and from generated edge cases.

Expected frames always come from decoding the source independently (tests/support/videos.py),
and clip frames are identified by their pixels, not by the cutter's own report.
"""

from __future__ import annotations

import itertools
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from splice_build.records import CutSettings, SkipVideo
from splice_build.running.worker import check_clips
from splice_build.stages import cut as cut_module
from splice_build.stages import frames as frames_module
from splice_build.stages.cut import cut_video, output_rate, output_size
from splice_build.stages.probe import probe
from tests.support.videos import (
    clip_frames,
    entry,
    grey_levels,
    mp4_top_level_boxes,
    read_index,
    set_display_rotation,
    source_frames,
    truncate,
    write_corner_video,
    write_levels_video,
    write_sparse_avi,
    write_video,
)

DEFAULT = CutSettings()


def _source(src: Path, tmp_path: Path, video_id: str = "vid") -> Path:
    """``src`` copied into ``tmp_path/videos`` as the source of ``video_id``: the copy."""
    videos = tmp_path / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(src, videos / f"{video_id}{src.suffix}"))


def _probed(src: Path, tmp_path: Path, segments, video_id: str = "vid"):
    """``src`` as the source of ``video_id`` with ``segments``, probed."""
    return probe(entry(video_id, segments), _source(src, tmp_path, video_id).parent)


def _cut(src: Path, tmp_path: Path, segments, settings=DEFAULT, video_id="vid"):
    probed = _probed(src, tmp_path, segments, video_id)
    return probed, cut_video(probed, tmp_path / "clips" / video_id, settings)


def _expected(frames, start: float, end: float) -> list[int]:
    """Indices of the source frames of [start, end), by the source's own timestamps."""
    s, e = Fraction(repr(start)), Fraction(repr(end))
    return [i for i, (t, _) in enumerate(frames) if s <= t < e]


def _gray(frame: av.VideoFrame, size: tuple[int, int]) -> np.ndarray:
    return frame.reformat(width=size[0], height=size[1], format="gray").to_ndarray().astype(float)


def _closest_source_frame(clip_frame, frames, around: int, size) -> int:
    """Index of the source frame (near ``around``) that a clip frame's pixels match best."""
    candidates = range(max(0, around - 3), min(len(frames), around + 4))
    picture = _gray(clip_frame, size)
    errors = {i: np.mean((picture - _gray(frames[i][1], size)) ** 2) for i in candidates}
    return min(errors, key=errors.get)


REAL_CASES = [
    # bikes: 25 fps from 0; boundaries on a frame (2.32), between frames, adjacent steps
    ("bikes_mp4", [(0.5, 2.32), (2.32, 4.0), (7.01, 9.99)], 448),
    # city: MPEG-2 PS starting at 0.54 s, odd height; also downscaled
    ("city_mpg", [(0.1, 1.0), (1.3, 3.33), (5.0, 7.3)], 448),
    ("city_mpg", [(0.0, 2.0), (6.0, 7.5)], 200),
]


@pytest.mark.parametrize(("fixture", "segments", "short_side"), REAL_CASES)
def test_real_footage_is_cut_frame_exact(request, tmp_path, fixture, segments, short_side):
    src = request.getfixturevalue(fixture)
    frames = source_frames(src)
    _, cut = _cut(src, tmp_path, segments, CutSettings(short_side=short_side))
    assert len(cut.clips) == len(segments)
    fps = 25
    for clip, (start, end) in zip(cut.clips, segments, strict=True):
        want = _expected(frames, start, end)
        got = clip_frames(clip.path)
        size = (got[0].width, got[0].height)
        assert len(got) == clip.num_frames == len(want)
        # first and last frame: the source's own times, and the pixels agree
        assert clip.first_time == pytest.approx(float(frames[want[0]][0]), abs=1e-9)
        assert clip.last_time == pytest.approx(float(frames[want[-1]][0]), abs=1e-9)
        assert frames[want[0]][0] >= Fraction(repr(start))
        assert want[0] == 0 or frames[want[0] - 1][0] < Fraction(repr(start))
        assert frames[want[-1]][0] < Fraction(repr(end))
        assert want[-1] + 1 == len(frames) or frames[want[-1] + 1][0] >= Fraction(repr(end))
        assert _closest_source_frame(got[0], frames, want[0], size) == want[0]
        assert _closest_source_frame(got[-1], frames, want[-1], size) == want[-1]
        # clip time starts at 0 and runs at the source rate
        assert got[0].pts == 0
        assert [float(f.time) for f in got] == pytest.approx([k / fps for k in range(len(got))])
        assert abs(clip.duration - (end - start)) <= 1 / fps + 1e-9


def test_output_properties(bikes_mp4, city_mpg, tmp_path):
    _, cut = _cut(bikes_mp4, tmp_path, [(1.0, 3.0), (4.0, 6.0)])
    _, city = _cut(city_mpg, tmp_path, [(1.0, 3.0)], video_id="city")
    _, small = _cut(bikes_mp4, tmp_path, [(1.0, 2.0)], CutSettings(short_side=136), "small")
    for clip, (w, h) in [
        (cut.clips[0], (640, 272)),  # short side 272 < 448: never upscaled
        (cut.clips[1], (640, 272)),
        (city.clips[0], (720, 404)),  # odd 405 -> even
        (small.clips[0], (320, 136)),  # short side capped
    ]:
        assert (clip.width, clip.height) == (w, h)
        with av.open(str(clip.path)) as container:
            assert not container.streams.audio
            assert len(container.streams) == 1
            stream = container.streams.video[0]
            assert stream.codec_context.name == "h264"
            assert stream.codec_context.pix_fmt == "yuv420p"
            assert (stream.width, stream.height) == (w, h)
            assert stream.width % 2 == 0 and stream.height % 2 == 0
            assert not any("time" in key for key in container.metadata)  # no creation_time
            assert not any("time" in key for key in stream.metadata)
            first = next(container.decode(stream))
            assert first.pts == 0 and first.time == 0
        boxes = mp4_top_level_boxes(clip.path)
        assert boxes.index("moov") < boxes.index("mdat")  # +faststart


def test_source_is_opened_once_per_lane_not_per_segment(bikes_mp4, tmp_path, monkeypatch):
    opened = []
    real_open = cut_module.open_video

    def counting_open(path, threads=None):
        opened.append(path)
        return real_open(path, threads)

    monkeypatch.setattr(cut_module, "open_video", counting_open)
    segments = [(0.2, 1.0), (1.0, 2.0), (3.0, 4.0), (8.0, 9.0), (9.0, 9.5)]
    _, cut = _cut(bikes_mp4, tmp_path, segments)
    assert len(opened) == cut_module.LANES == 2 and len(cut.clips) == 5


def test_split_steps_keeps_runs_of_consecutive_steps_balanced():
    steps = entry("v", [(0, 4), (4, 6), (6, 8), (10, 12), (20, 21)]).steps
    lanes = cut_module.split_steps(steps, 2)
    assert [[i for i, _ in lane] for lane in lanes] == [[0, 1], [2, 3, 4]]
    assert cut_module.split_steps(steps[:1], 2) == [[(0, steps[0])]]
    assert cut_module.split_steps(steps, 1) == [list(enumerate(steps))]


@pytest.mark.parametrize("fixture", ["bikes_mp4", "city_mpg"])
def test_clip_bytes_do_not_depend_on_the_thread_budget(request, tmp_path, fixture):
    """Lanes run together with 2+ threads and in turn with 1: the clips must not change."""
    src = request.getfixturevalue(fixture)
    segments = [(0.5, 1.5), (1.5, 2.2), (3.0, 4.0)]
    probed = _probed(src, tmp_path, segments, "v")
    cuts = [cut_video(probed, tmp_path / str(n), DEFAULT, threads=n) for n in (1, 2, 3)]
    for clips in zip(*(c.clips for c in cuts), strict=True):
        assert len({c.path.read_bytes() for c in clips}) == 1


GENERATED = {
    # variable frame rate: alternating 40 ms and 120 ms frame gaps, in mp4; the clip
    # evens it out at the average rate, so one of the last two frames may be thinned out
    "vfr.mp4": dict(
        n_frames=40,
        fps=Fraction(25, 2),
        time_base=Fraction(1, 1000),
        pts=[sum(40 if j % 2 == 0 else 120 for j in range(i)) for i in range(40)],
    ),
    # AVI stores no pts: B-frames come out of the decoder labelled in decode order
    "bframes.avi": dict(fmt="avi", b_frames=2),
    "mpeg4.avi": dict(fmt="avi", codec="mpeg4", b_frames=2),
    # 29.97 fps in a millisecond time base: jittered timestamps
    "ntsc.mkv": dict(fps=Fraction(30000, 1001), n_frames=90),
    "vp8.webm": dict(codec="libvpx", size=(80, 60)),
    # MPEG-TS: non-zero start time, B-frames
    "mpeg2.ts": dict(codec="mpeg2video", fmt="mpegts", b_frames=2),
    # odd sizes, 4:4:4 and RGB sources
    "odd444.mp4": dict(size=(99, 75), pix_fmt="yuv444p"),
    "rgb.mkv": dict(codec="libx264rgb", pix_fmt="rgb24", size=(66, 50)),
    "png.mov": dict(codec="png", pix_fmt="rgb24", size=(65, 49)),
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_sources_are_cut_frame_exact(tmp_path, name):
    src = write_video(tmp_path / name, **GENERATED[name])
    frames = source_frames(src)
    assert [read_index(f) for _, f in frames] == list(range(len(frames)))
    end = float(frames[-1][0]) + 0.01
    segments = [(0.15, 1.0), (1.0, 1.65), (2.05, end)]
    probed, cut = _cut(src, tmp_path, segments)
    variable = name.startswith("vfr")
    rate = output_rate(Fraction(probed.source.fps).limit_denominator(1001), None)
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        want = _expected(frames, start, stop)
        got = [read_index(f) for f in clip_frames(clip.path)]
        assert clip.width % 2 == 0 and clip.height % 2 == 0
        assert clip.width <= probed.source.width and clip.height <= probed.source.height
        if variable:  # evened out to a constant rate: same ends, in order, nothing foreign
            assert got[0] == want[0] and got[-1] in want[-2:]
            assert got == sorted(got) and set(got) <= set(want)
        else:
            assert got == want
        assert clip.num_frames == len(got)
        assert clip.duration == pytest.approx(len(got) / float(rate))
        assert abs(clip.duration - (stop - start)) <= 1 / float(rate) + 1e-6


SEEK_CASES = {
    "long.mp4": dict(),
    "long.mkv": dict(codec="mpeg4"),
    "long.webm": dict(codec="libvpx"),
    "long.avi": dict(fmt="avi", b_frames=2),
    "long.mov": dict(codec="mpeg4", b_frames=2),
    "long.flv": dict(codec="flv"),
    "long.ts": dict(fmt="mpegts", codec="mpeg2video"),
    "long.mpg": dict(fmt="mpeg", codec="mpeg2video"),
}


@pytest.mark.parametrize("name", sorted(SEEK_CASES))
def test_seeks_over_gaps_stay_frame_exact(tmp_path, monkeypatch, name):
    """With a tiny seek threshold every long gap is a seek, where seeks keep exact times.

    MPEG-PS labels frames one frame late after a seek, so it is decoded straight through.
    """
    src = write_video(tmp_path / name, n_frames=200, fps=10, gop=12, **SEEK_CASES[name])
    frames = source_frames(src)
    segments = [(0.3, 1.05), (4.15, 5.0), (9.93, 11.0), (11.0, 11.3), (17.0, 19.0)]
    probed = _probed(src, tmp_path, segments)
    monkeypatch.setattr(frames_module, "SEEK_GAP_SECONDS", 0.5)
    readers = []  # every reader the cutter opens (one per lane), for their seek counts
    real_init = frames_module.FrameReader.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        readers.append(self)

    monkeypatch.setattr(frames_module.FrameReader, "__init__", init)
    cut = cut_video(probed, tmp_path / "clips", CutSettings())
    assert readers
    seeks = sum(reader.seeks for reader in readers)
    if name.endswith(".mpg"):
        assert seeks == 0
    else:
        assert seeks >= 3
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        assert [read_index(f) for f in clip_frames(clip.path)] == _expected(frames, start, stop)


def test_reader_goes_back_when_asked(tmp_path):
    """Segments out of order still come out right (a backward seek, or a restart)."""
    for name, fmt in [("back.mp4", None), ("back.mpg", "mpeg")]:
        src = write_video(tmp_path / name, n_frames=60, fps=10, fmt=fmt, codec="mpeg2video")
        frames = source_frames(src)
        container, stream = frames_module.open_video(src)
        with container:
            reader = frames_module.FrameReader(container, stream)
            got = []
            for start in (4.0, 1.0):
                pts = frames_module.to_pts(start, Fraction(stream.time_base), reader.origin)
                item = next(reader.frames_from(pts))
                got.append(read_index(item[1]))
        assert got == [_expected(frames, 4.0, 9.0)[0], _expected(frames, 1.0, 9.0)[0]]


def test_fps_option_lowers_the_rate_but_never_raises_it(tmp_path):
    src = write_video(tmp_path / "ten.mp4", n_frames=40, fps=10)
    _, low = _cut(src, tmp_path, [(0.3, 2.3)], CutSettings(fps=5), "low")
    got = [read_index(f) for f in clip_frames(low.clips[0].path)]
    assert got == list(range(3, 23, 2))  # first frame is still the step's first frame
    assert low.clips[0].duration == pytest.approx(2.0)
    _, high = _cut(src, tmp_path, [(0.3, 2.3)], CutSettings(fps=50), "high")
    assert [read_index(f) for f in clip_frames(high.clips[0].path)] == list(range(3, 23))
    with av.open(str(high.clips[0].path)) as container:
        assert container.streams.video[0].average_rate == 10


@pytest.mark.parametrize("threads", [1, 2])
def test_step_without_frames_is_skipped_and_its_clips_removed(tmp_path, threads):
    """With 2 threads the lanes run together: the other lane's clips go as well."""
    # frames at 0.0-0.9 s, then one frame at 3.0 s: a step inside the hole has no frame
    pts = [*range(0, 1000, 100), 3000, 3100]
    src = write_video(tmp_path / "hole.mp4", n_frames=12, time_base=Fraction(1, 1000), pts=pts)
    probed = _probed(src, tmp_path, [(0.2, 0.6), (1.5, 2.5), (3.0, 3.2)])
    with pytest.raises(SkipVideo) as raised:
        cut_video(probed, tmp_path / "clips" / "vid", DEFAULT, threads=threads)
    assert raised.value.stage == "cut"
    assert "step 2" in raised.value.reason and "vid.mp4" in raised.value.reason
    assert not list((tmp_path / "clips" / "vid").glob("*.mp4"))


def test_source_damaged_after_probe_is_skipped(tmp_path):
    src = write_video(tmp_path / "gone.mp4", n_frames=60, fps=10)
    source = _source(src, tmp_path)  # vid.mp4
    probed = probe(entry("vid", [(0.5, 1.0), (4.0, 5.9)]), source.parent)
    source.write_bytes(b"")
    with pytest.raises(SkipVideo) as raised:
        cut_video(probed, tmp_path / "clips", CutSettings())
    assert raised.value.stage == "cut" and "vid.mp4" in raised.value.reason


def test_truncated_tail_gives_skip_not_crash(tmp_path):
    src = write_video(tmp_path / "tail.mkv", n_frames=100, fps=10)
    source = _source(src, tmp_path)  # vid.mkv
    probed = probe(entry("vid", [(0.5, 1.0), (8.5, 9.5)]), source.parent)
    truncate(source, 0.4)
    with pytest.raises(SkipVideo) as raised:
        cut_video(probed, tmp_path / "clips", CutSettings())
    assert raised.value.stage == "cut" and "vid.mkv" in raised.value.reason


@pytest.mark.parametrize(
    ("size", "short_side", "sar", "expected"),
    [
        ((640, 272), 448, None, (640, 272)),
        ((1920, 1080), 448, None, (796, 448)),
        ((1080, 1920), 448, None, (448, 796)),
        ((720, 405), 448, None, (720, 404)),
        ((99, 75), 448, None, (98, 74)),
        ((720, 480), 448, Fraction(32, 27), (720, 404)),  # anamorphic: height shrinks
        ((720, 480), 448, Fraction(8, 9), (598, 448)),
    ],
)
def test_output_size(size, short_side, sar, expected):
    width, height = output_size(*size, short_side, sar)
    assert (width, height) == expected
    assert width <= size[0] and height <= size[1]


def test_audio_clips_are_refused_clearly(bikes_mp4, tmp_path):
    probed = _probed(bikes_mp4, tmp_path, [(1.0, 2.0)], "b")
    with pytest.raises(ValueError, match="audio"):
        cut_video(probed, tmp_path / "c", CutSettings(audio=True))


def test_cutting_twice_gives_identical_bytes(bikes_mp4, tmp_path):
    """Builds must be reproducible: same source, same settings, same clip files."""
    _, first = _cut(bikes_mp4, tmp_path / "a", [(0.5, 3.0), (5.0, 8.0)])
    _, second = _cut(bikes_mp4, tmp_path / "b", [(0.5, 3.0), (5.0, 8.0)])
    for a, b in zip(first.clips, second.clips, strict=True):
        assert a.path.read_bytes() == b.path.read_bytes()


def _gapped_times(starts: list[float], end_ms: int = 9000) -> list[int]:
    """10 fps in milliseconds, with no frame from 350 ms before to 250 ms after each start
    (a variable frame rate source that pauses over its step boundaries)."""
    return [t for t in range(0, end_ms, 100) if not any(-350 < t - s * 1000 < 250 for s in starts)]


def test_frame_gap_at_a_step_start_keeps_the_source_timing(tmp_path):
    """A clip shows its segment's content at the source's timing: slot k shows what is on
    screen at start + k / rate (within a slot), the step's first frame standing in for
    the frame before the start, which is not the step's."""
    segments = [(1.0, 3.0), (4.0, 6.0), (7.0, 8.5)]
    times = _gapped_times([s for s, _ in segments])
    src = write_video(
        tmp_path / "gaps.mp4", n_frames=len(times), fps=10, time_base=Fraction(1, 1000), pts=times
    )
    frames = source_frames(src)
    _, cut = _cut(src, tmp_path, segments)
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        want = _expected(frames, start, stop)
        got = [read_index(f) for f in clip_frames(clip.path)]
        with av.open(str(clip.path)) as container:
            slot = 1 / Fraction(container.streams.video[0].average_rate)

        def on_screen(t: Fraction, want: list[int] = want) -> int:
            shown = [i for i in want if frames[i][0] <= t]
            return shown[-1] if shown else want[0]

        assert got[0] == want[0] and got[-1] == want[-1]
        assert abs(len(got) * slot - Fraction(repr(stop - start))) <= slot
        assert clip.duration == pytest.approx(float(len(got) * slot))
        for k, index in enumerate(got):
            t = Fraction(repr(start)) + k * slot
            assert on_screen(t - slot) <= index <= on_screen(t + slot), (start, k)


def test_constant_rate_sources_are_cut_one_to_one(tmp_path):
    """The grid extended back over a start gap never moves for a constant rate source."""
    src = write_video(tmp_path / "cfr.mp4", n_frames=90, fps=10)
    frames = source_frames(src)
    segments = [(0.95, 2.0), (3.01, 4.5), (6.0, 8.99)]
    _, cut = _cut(src, tmp_path, segments)
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        assert [read_index(f) for f in clip_frames(clip.path)] == _expected(frames, start, stop)


@pytest.mark.parametrize("noise", [1e-7, -1e-7], ids=["overlap", "gap"])
def test_boundaries_within_the_rounding_are_one_boundary(tmp_path, noise):
    """A step ending 1e-7 s after (or before) the next starts, on a frame (2.0 s at 10 fps):
    float noise, one boundary; the frame there opens the later clip only, whichever lane
    cuts each step."""
    src = write_video(tmp_path / "cfr.mp4", n_frames=50, fps=10)
    segments = [(0.5, 2.0 + noise), (2.0, 3.0 + noise), (3.0, 4.0)]
    _, cut = _cut(src, tmp_path, segments)
    shown = [[read_index(f) for f in clip_frames(clip.path)] for clip in cut.clips]
    assert shown == [list(range(5, 20)), list(range(20, 30)), list(range(30, 40))]
    check_clips(cut, DEFAULT.tolerance)  # and the worker commits them


# Where the stored picture's top-left corner is seen once the display matrix is applied
# (a player turns it counterclockwise by the rotation FFmpeg reports).
SEEN_CORNER = {-90: "top-right", 90: "bottom-left", 180: "bottom-right"}


def _red_corner(frame: av.VideoFrame) -> str:
    rgb = frame.to_ndarray(format="rgb24").astype(float)
    h, w = rgb.shape[:2]
    corners = {
        "top-left": rgb[: h // 8, : w // 8],
        "top-right": rgb[: h // 8, -w // 8 :],
        "bottom-left": rgb[-h // 8 :, : w // 8],
        "bottom-right": rgb[-h // 8 :, -w // 8 :],
    }
    red = {k: v[..., 0].mean() - v[..., 1].mean() for k, v in corners.items()}
    best = max(red, key=red.get)
    assert red[best] > 100 and sorted(red.values())[-2] < 30, red
    return best


@pytest.mark.parametrize("rotation", sorted(SEEN_CORNER))
def test_rotated_source_is_cut_as_it_is_displayed(tmp_path, rotation):
    """A phone video stores a landscape picture and a display matrix; the clips show it
    the way players do: turned, with the displayed width and height."""
    src = set_display_rotation(write_corner_video(tmp_path / "phone.mp4"), rotation)
    with av.open(str(src)) as container:  # the file really carries the matrix
        assert next(container.decode(video=0)).rotation % 360 == rotation % 360
    _, cut = _cut(src, tmp_path, [(0.5, 1.5), (2.0, 2.9)])
    size = (64, 96) if rotation % 180 else (96, 64)
    for clip in cut.clips:
        assert (clip.width, clip.height) == size
        frames = clip_frames(clip.path)
        assert (frames[0].width, frames[0].height) == size
        assert all(f.rotation == 0 for f in frames)  # turned pixels, no matrix left
        assert {_red_corner(f) for f in frames} == {SEEN_CORNER[rotation]}


# Sources whose video starts after their container (issue 20, defect 1): annotations count
# from the start of playback, the container's start, so a step at 3 s shows what a player
# shows 3 s after pressing play, however late the video stream itself begins.
LATE_VIDEO = {
    # an empty edit: audio from 0, video from 2.0 s (a DASH merge, ``-itsoffset``)
    "late.mp4": dict(n_frames=150, fps=25, pts=[50 + i for i in range(150)], audio=True),
    # a capture whose audio starts before its video
    "late.ts": dict(
        n_frames=150,
        fps=25,
        fmt="mpegts",
        codec="mpeg2video",
        pts=[13 + i for i in range(150)],
        audio=True,
    ),
    # no audio: the container starts with the video, so the video starts at 0 (as ffmpeg)
    "alone.mp4": dict(n_frames=150, fps=25, pts=[50 + i for i in range(150)]),
}


def _player_start(path: Path) -> Fraction:
    """Where a player's timeline puts the first video frame (PyAV, not the cutter)."""
    with av.open(str(path)) as container:
        first = next(container.decode(video=0))
        return Fraction(first.pts) * first.time_base - Fraction(container.start_time, av.time_base)


@pytest.mark.parametrize("name", sorted(LATE_VIDEO))
def test_clips_follow_the_containers_start_not_the_video_streams(tmp_path, name):
    src = write_video(tmp_path / name, time_base=Fraction(1, 25), **LATE_VIDEO[name])
    frames = source_frames(src)
    late = _player_start(src)
    assert late == (0 if name == "alone.mp4" else frames[0][0]) and frames[0][0] == late
    if name != "alone.mp4":
        assert late >= Fraction(1, 2)  # the file really starts its video late
    segments = [(3.0, 5.0), (5.0, 6.3)]
    probed, cut = _cut(src, tmp_path, segments)
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        want = _expected(frames, start, stop)
        assert [read_index(f) for f in clip_frames(clip.path)] == want
        assert clip.first_time == pytest.approx(float(frames[want[0]][0]), abs=1e-4)
        assert clip.last_time == pytest.approx(float(frames[want[-1]][0]), abs=1e-4)
    if name == "late.mp4":
        assert want == list(range(75, 108))  # 5.0-6.3 s: frames 3.0-4.28 s into the video
        assert _expected(frames, 3.0, 5.0) == list(range(25, 75))  # the example
    # the probe measures the source on the same timeline
    assert probed.source.start_time == pytest.approx(0.0 if late else 2.0)
    assert probed.source.duration == pytest.approx(float(frames[-1][0]) + 0.04, abs=0.05)


def test_a_step_before_the_first_video_frame_shows_the_first_frame(tmp_path):
    """A player shows nothing new before the video starts; the clip holds the first frame
    over that time (as over any frame gap at a step's start) and keeps the segment's length;
    a step that ends before the video starts has no frame and skips the video."""
    src = write_video(tmp_path / "late.mp4", time_base=Fraction(1, 25), **LATE_VIDEO["late.mp4"])
    _, cut = _cut(src, tmp_path, [(1.0, 2.5)])
    got = [read_index(f) for f in clip_frames(cut.clips[0].path)]
    assert got == [0] * 26 + list(range(1, 13))  # 1.0-2.02 s: frame 0 (shown from 2.0 s)
    assert abs(cut.clips[0].duration - 1.5) <= 0.04 + 1e-9
    with pytest.raises(SkipVideo) as raised:
        _cut(src, tmp_path / "early", [(0.5, 1.5), (3.0, 4.0)])
    assert "step 1" in raised.value.reason and "no frame" in raised.value.reason


def test_probe_coverage_counts_from_the_containers_start(tmp_path):
    src = write_video(tmp_path / "late.mp4", time_base=Fraction(1, 25), **LATE_VIDEO["late.mp4"])
    videos = _source(src, tmp_path).parent  # vid.mp4
    # the video ends 8.0 s after playback starts (6 s of frames from 2.0 s)
    assert probe(entry("vid", [(1.0, 7.9)]), videos, tolerance=0.5).source.duration == (
        pytest.approx(8.0)
    )
    with pytest.raises(SkipVideo) as raised:
        probe(entry("vid", [(1.0, 9.0)]), videos, tolerance=0.5)
    assert "8.00 s long" in raised.value.reason


LEVEL_SOURCES = {
    "yuvj.mkv": dict(pix_fmt="yuvj420p"),  # H.264 in a JPEG-range pixel format
    "mjpeg.avi": dict(codec="mjpeg", pix_fmt="yuvj420p"),  # a webcam's MJPEG
    "full.webm": dict(codec="libvpx-vp9", full_range=True),  # yuv420p tagged full range
    "limited.mp4": dict(),  # the common case: must stay as it is
}


@pytest.mark.parametrize("name", sorted(LEVEL_SOURCES))
def test_clips_keep_the_sources_levels(tmp_path, name):
    """Decoded by its own range tag, a clip shows the levels the source shows (issue 20,
    defect 2: full-range samples written untagged read back as limited, 20/230 -> 4/249)."""
    src = write_levels_video(tmp_path / name, **LEVEL_SOURCES[name])
    with av.open(str(src)) as container:
        want = grey_levels(next(container.decode(video=0)))
    _, cut = _cut(src, tmp_path, [(0.3, 1.5)])
    for frame in clip_frames(cut.clips[0].path):
        assert grey_levels(frame) == pytest.approx(want, abs=2.5)
    _, again = _cut(src, tmp_path / "again", [(0.3, 1.5)])  # still byte for byte the same
    assert again.clips[0].path.read_bytes() == cut.clips[0].path.read_bytes()


def test_sparse_variable_rate_source_is_cut_as_a_player_shows_it(tmp_path):
    """Issue 20, defect 4: a Cinepak AVI at a nominal 15 fps whose frames really come
    0.4-0.47 s apart. The clips hold the rule the worker and ``splice validate`` apply
    (``clipcheck``), every slot shows a frame a player shows within the source's actual
    frame interval there, and the last frame is held until the segment's end."""
    src = write_sparse_avi(tmp_path / "sparse.avi")
    frames = source_frames(src)
    times = [t for t, _ in frames]
    assert [read_index(f) for _, f in frames] == list(range(len(frames)))
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= Fraction(2, 5)
    last = float(times[-1])
    segments = [(2.0, 9.5), (22.0, 28.5), (35.0, round(last + 0.3, 2))]
    probed, cut = _cut(src, tmp_path, segments)
    assert probed.source.fps == 15  # the nominal rate: the clips run at it
    check_clips(cut, DEFAULT.tolerance)  # what the worker holds a cut to before commit
    for clip, (start, stop) in zip(cut.clips, segments, strict=True):
        want = _expected(frames, start, stop)
        got = [read_index(f) for f in clip_frames(clip.path)]
        slot = Fraction(1, 15)
        assert got[0] == want[0] and got[-1] == want[-1] and set(got) == set(want)
        for k, index in enumerate(got):
            t = Fraction(repr(start)) + k * slot
            on_screen = max([i for i in want if times[i] <= t], default=want[0])
            interval = times[min(on_screen + 1, len(times) - 1)] - times[max(on_screen - 1, 0)]
            assert abs(times[index] - max(t, times[want[0]])) <= interval, (start, k)
        # held until the segment's end, within a clip frame, also past the source's last frame
        assert abs(clip.duration - (stop - start)) <= float(slot) + 1e-6, (start, stop)


@pytest.mark.parametrize("codec", ["mpeg4", "libx264"])
def test_avi_with_b_frames_follows_the_players_timeline(tmp_path, monkeypatch, codec):
    """Issue 20, defect 8: AVI stores no presentation times, and a decoder that reorders
    B-frames hands out its first frame one frame late; every FFmpeg-based player (and
    ``ffmpeg -ss``) then shows frame k at (k + 1) / fps. The clips follow that timeline,
    the one a player shows, not the encoder's intent (k / fps), through seeks and lanes."""
    src = write_video(
        tmp_path / "b.avi", fmt="avi", codec=codec, b_frames=2, n_frames=200, fps=10, gop=12
    )
    with av.open(str(src)) as container:  # the player's timeline, as PyAV decodes it
        start = Fraction(container.start_time or 0, av.time_base)
        decoded = [(f.pts * f.time_base - start, read_index(f)) for f in container.decode(video=0)]
    shown = sorted(t for t, _ in decoded)  # AVI labels H.264's frames in decode order
    assert [i for _, i in decoded] == list(range(200))
    assert shown == [Fraction(k + 1, 10) for k in range(200)]  # one frame late, in the file
    monkeypatch.setattr(frames_module, "SEEK_GAP_SECONDS", 0.5)
    segments = [(0.0, 1.0), (1.0, 2.0), (4.15, 5.0), (9.93, 11.0), (17.0, 19.0)]
    _, cut = _cut(src, tmp_path, segments)
    for clip, (begin, stop) in zip(cut.clips, segments, strict=True):
        b, e = Fraction(repr(begin)), Fraction(repr(stop))
        want = [k for k, t in enumerate(shown) if b <= t < e]
        got = [read_index(f) for f in clip_frames(clip.path)]
        if begin == 0.0:  # nothing is shown before 0.1 s: the first frame stands in
            want = [0, *want]
        assert got == want, (begin, stop)
        assert clip.first_time == pytest.approx(float(shown[want[0]]) if begin else 0.1)
    assert [read_index(f) for f in clip_frames(cut.clips[1].path)] == list(range(9, 19))


# Segments of a COIN entry for tree.avi (29.6 s): step 4 is [22.0, 28.5), the issue's.
TREE_SEGMENTS = [(2.0, 6.0), (8.0, 12.0), (14.0, 20.0), (22.0, 28.5)]


def _player_frames(path: Path) -> list[tuple[Fraction, int]]:
    """(time a player shows it, pts) of each frame, by PyAV alone: frame time minus the
    container's start, independently of the cutter."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        origin = Fraction(container.start_time or 0, 1_000_000)
        return [
            (frame.pts * stream.time_base - origin, frame.pts) for frame in container.decode(stream)
        ]


def test_real_sparse_vfr_tree_avi_clips_meet_their_own_rule(tree_avi, tmp_path):
    """Issue 31, defect 6: step 4 [22.0, 28.5) of Debian's tree.avi came out 6.600 s
    against 6.500 s and the video was dropped. Every clip now meets the rule the worker and
    validate apply, lasts its segment within one clip frame, and holds exactly the source
    frames a player shows in its segment (the first one at or after its start)."""
    timeline = _player_frames(tree_avi)
    assert len(timeline) == 68  # the real file, as the issue describes it
    gaps = {b - a for (_, a), (_, b) in zip(timeline, timeline[1:], strict=False)}
    assert min(gaps) == 5 and max(gaps) == 11  # ticks of 1/15 s: sparse and variable
    probed, cut = _cut(tree_avi, tmp_path, TREE_SEGMENTS)
    check_clips(cut, DEFAULT.tolerance)  # raised SkipVideo("validate", ... 6.600 s ...)
    for clip, (start, stop) in zip(cut.clips, TREE_SEGMENTS, strict=True):
        assert abs(clip.duration - (stop - start)) <= 1 / 15 + 1e-6, (start, stop)
        shown = [t for t, _ in timeline if Fraction(repr(start)) <= t < Fraction(repr(stop))]
        assert clip.first_time == pytest.approx(float(shown[0]), abs=1e-6)
        assert clip.last_time == pytest.approx(float(shown[-1]), abs=1e-6)


class _ListReader:
    """Frames (pts, None) from a list, with the two calls ``_slots`` makes of a FrameReader."""

    def __init__(self, pts: list[int]):
        self.pts, self.held = pts, None

    def frames_from(self, start: int):
        for p in self.pts:
            if p >= start:
                yield (p, None)

    def push_back(self, item) -> None:
        self.held = item


# the old cutter (bounds rounded up to whole ticks) cut these 1.8 s for 1.868 s, 1.6 s for 1.53 s
@example(
    25,
    Fraction(15),
    [
        12,
        11,
        11,
        11,
        10,
        1,
        4,
        3,
        9,
        8,
        6,
        12,
        12,
        7,
        10,
        7,
        12,
        8,
        9,
        9,
        5,
        7,
        9,
        7,
        5,
        2,
        12,
        10,
        10,
        12,
    ],
    1292,
    1868,
)
@example(
    25,
    Fraction(1_000_000, 66_667),
    [2, 3, 3, 3, 9, 12, 1, 12, 3, 9, 8, 10, 3, 1, 2, 1, 12, 5, 6, 8, 7, 5, 6, 5, 4, 6, 4, 9, 4, 5],
    2714,
    1530,
)
@settings(max_examples=300, deadline=None)
@given(
    ticks_per_second=st.sampled_from([15, 25, 90_000, 1000]),
    nominal=st.sampled_from(
        [Fraction(1_000_000, 66_667), Fraction(15), Fraction(30_000, 1001), Fraction(25)]
    ),
    gaps=st.lists(st.integers(1, 12), min_size=30, max_size=80),
    start_ms=st.integers(0, 4000),
    length_ms=st.integers(1000, 6000),
)
def test_slots_last_their_step_within_one_slot(
    ticks_per_second, nominal, gaps, start_ms, length_ms
):
    """Whatever the ticks and the nominal rate (tree.avi's 1/14.99993 s ticks at 15 fps, and
    the other way round), a step whose source continues past it gets slots lasting its
    length within one slot: clipcheck's rule, so the cutter never makes a clip its own rule
    drops (issue 31, defect 6)."""
    time_base = Fraction(1, ticks_per_second) if ticks_per_second != 15 else 1 / nominal
    rate = min(nominal, 1 / time_base) if ticks_per_second in (15, 25) else nominal
    unit = max(1, round(1 / (rate * time_base)))  # a frame gap of k source frames
    pts = list(itertools.accumulate([0] + [g * unit for g in gaps]))
    start = Fraction(start_ms, 1000) / time_base
    end = start + Fraction(length_ms, 1000) / time_base
    if pts[-1] <= end or not [p for p in pts if start <= p < end]:
        return  # the source must run past the step, and the step hold a frame
    plan = cut_module._Plan(time_base=time_base, origin=0, rate=rate, size=(16, 16))
    count = sum(1 for _ in cut_module._slots(_ListReader(pts), plan, start, end))
    length = Fraction(length_ms, 1000)
    assert abs(count / rate - length) <= 1 / rate, (count, float(count / rate), float(length))
