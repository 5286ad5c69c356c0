"""`sample_frames`: exactly which frames, at which size, from every accepted input form.

The generated clips carry their frame index as black/white bars (``tests.support.videos``, which
survive H.264 and downscaling), so a test can read back which frame it got. They are
encoded with B-frames and a fixed short keyframe interval so that both frame reordering
and the keyframe-skipping path are exercised.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import av
import datasets
import numpy as np
import pytest

import splice_dataset as sd
from splice_eval.run import sampling
from tests.support import videos


def read_index(img: np.ndarray) -> int:
    """The index `videos.index_image` drew, read from an RGB array as sample_frames gives."""
    return videos.read_index(av.VideoFrame.from_ndarray(img, format="rgb24"))


def encode_index_clip(
    path: Path,
    num_frames: int,
    rate: int = 10,
    width: int = 160,
    height: int = 96,
    keyint: int = 10,
) -> Path:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {
            "x264-params": f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes=2",
            "crf": "18",
        }
        for i in range(num_frames):
            image = videos.index_image(i, width, height)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


@pytest.fixture(scope="module")
def clip60(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 frames at 10 fps (6.0 s), keyframe every 10 frames, 2 B-frames."""
    return encode_index_clip(tmp_path_factory.mktemp("clips") / "clip60.mp4", 60)


def indices(frames: sampling.Frames) -> list[int]:
    return [read_index(f) for f in frames.frames]


def test_generated_clip_is_readable(clip60: Path) -> None:
    with av.open(str(clip60)) as c:
        got = [read_index(f.to_ndarray(format="rgb24")) for f in c.decode(video=0)]
    assert got == list(range(60))


def test_num_frames_takes_frame_on_screen_at_bin_centres(clip60: Path) -> None:
    got = sampling.sample_frames(clip60, num_frames=16, long_side=None)
    # D = 6.0 s, bin centre i = (i + 1/2) * 6 / 16 s, on screen: frame floor(centre * 10).
    expected = [math.floor((2 * i + 1) * 60 / 32) for i in range(16)]
    assert indices(got) == expected
    assert got.frames.shape == (16, 96, 160, 3) and got.frames.dtype == np.uint8
    np.testing.assert_allclose(got.times, np.array(expected) / 10)


@pytest.mark.parametrize(
    ("fps", "expected"),
    [
        (1.0, [0, 10, 20, 30, 40, 50]),
        (3.0, [math.floor(Fraction(k, 3) * 10) for k in range(18)]),
        (0.7, [math.floor(Fraction(k * 10, 7) * 10) for k in range(5)]),  # ceil(4.2) = 5
        (10.0, list(range(60))),
        (25.0, [math.floor(Fraction(k, 25) * 10) for k in range(150)]),  # repeats frames
    ],
)
def test_fps_takes_frame_on_screen_at_multiples_of_period(
    clip60: Path, fps: float, expected: list[int]
) -> None:
    got = sampling.sample_frames(clip60, fps=fps, long_side=None)
    assert indices(got) == expected
    np.testing.assert_allclose(got.times, np.array(expected) / 10)


def test_default_is_one_fps(clip60: Path) -> None:
    assert indices(sampling.sample_frames(clip60)) == [0, 10, 20, 30, 40, 50]


def test_short_clip_repeats_frames_to_give_num_frames(tmp_path: Path) -> None:
    clip = encode_index_clip(tmp_path / "short.mp4", 5)
    got = sampling.sample_frames(clip, num_frames=16)
    assert indices(got) == [math.floor((2 * i + 1) * 5 / 32) for i in range(16)]
    # A clip shorter than one period still gives one frame at 1 fps.
    assert indices(sampling.sample_frames(clip, fps=1.0)) == [0]


def test_long_side_caps_the_longer_side_and_never_upscales(tmp_path: Path, clip60: Path) -> None:
    assert sampling.sample_frames(clip60, fps=1, long_side=80).frames.shape == (6, 48, 80, 3)
    assert sampling.sample_frames(clip60, fps=1, long_side=448).frames.shape == (6, 96, 160, 3)
    assert sampling.sample_frames(clip60, fps=1, long_side=160).frames.shape == (6, 96, 160, 3)
    portrait = encode_index_clip(tmp_path / "portrait.mp4", 12, width=96, height=160)
    assert sampling.sample_frames(portrait, fps=1, long_side=80).frames.shape == (2, 80, 48, 3)
    # Downscaled frames still show the right content.
    assert indices(sampling.sample_frames(clip60, fps=1, long_side=80)) == [0, 10, 20, 30, 40, 50]


class _DecoderWithSource:
    """What `datasets.Video` decodes a local file to, duck-typed: torchcodec's decoder API
    plus the `metadata.path` datasets sets. Only the attributes sample_frames reads."""

    def __init__(self, path: str) -> None:
        self.metadata = type("Meta", (), {"path": path})()

    def get_frames_played_at(self, seconds: list[float]) -> None:
        raise AssertionError("a decoder with a readable source must be read with PyAV")


def test_every_input_form_gives_the_same_frames(clip60: Path, tmp_path: Path) -> None:
    data = clip60.read_bytes()
    reference = sampling.sample_frames(clip60, num_frames=7)
    forms = [
        str(clip60),
        data,
        bytearray(data),
        {"bytes": data, "path": "vid_video1.mp4"},
        {"bytes": None, "path": str(clip60)},
        _DecoderWithSource(str(clip60)),
    ]
    if sd.torchcodec_available():  # a real decoder of embedded bytes, as datasets makes it
        forms.append(datasets.Video().decode_example({"bytes": data, "path": "vid_video1.mp4"}))
    for form in forms:
        got = sampling.sample_frames(form, num_frames=7)
        np.testing.assert_array_equal(got.frames, reference.frames)
        np.testing.assert_array_equal(got.times, reference.times)


class _PlayedAtDecoder:
    """torchcodec's `get_frames_played_at` contract (frames on screen at given seconds,
    NCHW data, pts_seconds), implemented by a full PyAV decode: exercises the path used
    when a decoder has no readable source (e.g. streamed from the Hub)."""

    def __init__(self, path: Path) -> None:
        with av.open(str(path)) as c:
            frames = list(c.decode(video=0))
        self._pts = np.array([float(f.time) for f in frames])
        self._data = np.stack([f.to_ndarray(format="rgb24") for f in frames]).transpose(0, 3, 1, 2)
        step = self._pts[1] - self._pts[0]
        self.metadata = type(
            "Meta",
            (),
            {"begin_stream_seconds": 0.0, "end_stream_seconds": self._pts[-1] + step, "path": None},
        )()

    def get_frames_played_at(self, seconds: list[float]):
        idx = [int(np.searchsorted(self._pts, s + 1e-9, side="right")) - 1 for s in seconds]
        return type("Batch", (), {"data": self._data[idx], "pts_seconds": self._pts[idx]})()


def test_decoder_without_source_uses_played_at_with_the_same_targets(clip60: Path) -> None:
    decoder = _PlayedAtDecoder(clip60)
    got = sampling.sample_frames(decoder, num_frames=16, long_side=80)
    ref = sampling.sample_frames(clip60, num_frames=16, long_side=80)
    assert indices(got) == indices(ref)
    assert got.frames.shape == ref.frames.shape
    np.testing.assert_allclose(got.times, ref.times)


def _reference_pick(path: Path, targets_fn, long_side: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Decode EVERY frame, then pick the one on screen at each target: independent of
    sample_frames' packet bookkeeping and keyframe skipping."""
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        frames = [(f.pts, f) for f in c.decode(stream)]
        tb = stream.time_base
        last_dur = frames[-1][0] - frames[-2][0]
    frames.sort(key=lambda x: x[0])
    first = frames[0][0]
    duration = (frames[-1][0] + last_dur - first) * tb
    w, h = sampling.scaled_size(frames[0][1].width, frames[0][1].height, long_side)
    chosen = []
    for t in targets_fn(duration):
        on_screen = [f for f in frames if (f[0] - first) * tb <= t]
        chosen.append(on_screen[-1] if on_screen else frames[0])
    imgs = np.stack(
        [f.to_ndarray(width=w, height=h, format="rgb24", interpolation="AREA") for _, f in chosen]
    )
    return imgs, np.array([float((p - first) * tb) for p, _ in chosen])


@pytest.mark.parametrize("footage", ["bikes_mp4", "city_mpg"])
@pytest.mark.parametrize("setting", [{"fps": 1.0}, {"num_frames": 16}])
def test_real_footage_matches_full_decode(
    footage: str, setting: dict, request: pytest.FixtureRequest
) -> None:
    path = request.getfixturevalue(footage)
    if "fps" in setting:

        def targets(d):
            return [Fraction(k) for k in range(max(1, math.ceil(d)))]
    else:

        def targets(d):
            return [(2 * i + 1) * d / 32 for i in range(16)]

    ref_imgs, ref_times = _reference_pick(path, targets, 448)
    got = sampling.sample_frames(path, long_side=448, **setting)
    if "fps" in setting:
        assert got.times[0] == 0.0  # times count from the clip's first frame
    np.testing.assert_allclose(got.times, ref_times)
    np.testing.assert_array_equal(got.frames, ref_imgs)
    assert max(got.frames.shape[1:3]) == 448


def test_keyframe_skipping_decodes_only_what_is_needed(clip60: Path) -> None:
    with av.open(str(clip60)) as c:
        stream = c.streams.video[0]
        packets = [(p.pts, p) for p in c.demux(stream) if p.size]
        timeline = sorted(pts for pts, _ in packets)
        wanted = [timeline[i] for i in (0, 30, 50)]
        frames, packets_fed = sampling.decode_wanted(stream, packets, wanted, "clip60")
    assert sorted(frames) == wanted
    assert [read_index(frames[p].to_ndarray(format="rgb24")) for p in wanted] == [0, 30, 50]
    # Wanted frames are keyframes here: each needs its own packet plus the B-frame delay,
    # never the 9 packets of each GOP in between.
    assert packets_fed <= 3 * 4 < len(packets)


def test_bad_inputs_name_the_clip(tmp_path: Path, clip60: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.mp4"):
        sampling.sample_frames(tmp_path / "nope.mp4")
    with pytest.raises(FileNotFoundError, match="vid_video2.mp4"):
        sampling.sample_frames({"bytes": None, "path": "vid_video2.mp4"})
    with pytest.raises(ValueError, match="vid_video3.mp4"):
        sampling.sample_frames({"bytes": b"not a video at all" * 20, "path": "vid_video3.mp4"})
    with pytest.raises(ValueError, match="neither"):
        sampling.sample_frames({"bytes": None, "path": None})
    with pytest.raises(TypeError, match="unsupported clip type"):
        sampling.sample_frames(12)
    with pytest.raises(ValueError, match="not both"):
        sampling.sample_frames(clip60, fps=1.0, num_frames=4)
    with pytest.raises(ValueError, match="num_frames"):
        sampling.sample_frames(clip60, num_frames=0)
    with pytest.raises(ValueError, match="fps"):
        sampling.sample_frames(clip60, fps=-1)
