"""Shortcut probes: the pure function on hand-made frames, and ``splice run --probe`` on the
demo build against a fake endpoint on 127.0.0.1, checked by decoding the images the server
received."""

from __future__ import annotations

import base64
import io
import re

import av
import numpy as np
import pytest

from splice_build.cli import main as splice_main
from splice_eval.predictions import read_metadata
from splice_eval.run.probes import PROBES, apply_probe
from splice_eval.run.sampling import Frames
from tests.support.fake_openai_server import FakeOpenAIServer, Reply, Request, count_clips


def _frames(count: int, h: int = 6, w: int = 8) -> Frames:
    """Frames that differ from each other: frame i is filled with 10 * i + 5."""
    pixels = np.stack([np.full((h, w, 3), 10 * i + 5, np.uint8) for i in range(count)])
    return Frames(pixels, np.arange(count, dtype=np.float64) / 2)


def _values(frames: Frames) -> list[int]:
    return [int(f[0, 0, 0]) for f in frames.frames]


def test_none_is_unchanged_and_unknown_is_refused():
    f = _frames(4)
    assert apply_probe("none", f, 0, "v", 0) is f
    with pytest.raises(ValueError, match="unknown probe 'upside-down'"):
        apply_probe("upside-down", f, 0, "v", 0)


@pytest.mark.parametrize("count", [1, 2, 5, 16])
def test_single_frame_keeps_the_middle_frame(count):
    out = apply_probe("single-frame", _frames(count), 0, "v", 0)
    assert _values(out) == [10 * (count // 2) + 5]
    assert out.times.tolist() == [(count // 2) / 2]


def test_reversed_reverses_frames_and_their_times():
    out = apply_probe("reversed", _frames(5), 0, "v", 0)
    assert _values(out) == [45, 35, 25, 15, 5]
    assert out.times.tolist() == [2.0, 1.5, 1.0, 0.5, 0.0]


@pytest.mark.parametrize("count", [2, 3, 7])
def test_frame_shuffle_is_another_order_seeded_per_clip(count):
    f = _frames(count)
    out = apply_probe("frame-shuffle", f, 0, "v", 1)
    assert sorted(_values(out)) == _values(f) and _values(out) != _values(f)
    assert out.times.tolist() == [(v - 5) / 20 for v in _values(out)]  # times travel along
    again = apply_probe("frame-shuffle", f, 0, "v", 1)
    assert _values(again) == _values(out)  # seeded: the same in every run
    orders = {
        tuple(_values(apply_probe("frame-shuffle", _frames(7), seed, vid, clip)))
        for seed in (0, 1)
        for vid in ("a", "b")
        for clip in (0, 1)
    }
    assert len(orders) > 1  # the seed, the video and the clip all enter the order


def test_blind_is_mid_grey_of_the_same_size():
    f = _frames(3, h=5, w=9)
    out = apply_probe("blind", f, 0, "v", 0)
    assert out.frames.shape == f.frames.shape and out.frames.dtype == np.uint8
    assert (out.frames == 128).all()
    assert (f.frames != 128).any()  # the input is untouched


# --- splice run --probe, end to end ----------------------------------------------------


def _decode(url: str) -> np.ndarray:
    prefix = "data:image/jpeg;base64,"
    assert url.startswith(prefix)
    with av.open(io.BytesIO(base64.b64decode(url[len(prefix) :])), format="jpeg_pipe") as c:
        return next(c.decode(video=0)).to_ndarray(format="rgb24")


def _clips_sent(request: Request) -> list[list[np.ndarray]]:
    """The decoded images of each clip, in the order the prompt shows the clips."""
    clips: list[list[np.ndarray]] = []
    for part in request.body["messages"][0]["content"]:
        if part["type"] == "text" and re.fullmatch(r"Video \d+", part["text"]):
            clips.append([])
        elif part["type"] == "image_url":
            clips[-1].append(_decode(part["image_url"]["url"]))
    return clips


def _identity(request: Request) -> Reply:
    n = count_clips(request)
    return Reply(content="<order>" + ", ".join(f"Video {k}" for k in range(1, n + 1)) + "</order>")


def _run(demo_build, out, probe: str | None, extra=()) -> list[list[list[np.ndarray]]]:
    """One ``splice run`` (video config, 4 frames a clip, one request at a time, so in the
    build's row order) -> the images sent, per request and clip."""
    with FakeOpenAIServer(_identity) as server:
        argv = ["run", "--endpoint", server.url, "--model", "m", "--config", "video"]
        argv += ["--data", str(demo_build), "--frames", "num_frames=4,long_side=64"]
        argv += ["--out", str(out), "--limit", "3", "--concurrency", "1", *extra]
        if probe is not None:
            argv += ["--probe", probe]
        assert splice_main(argv) == 0
        requests = list(server.requests)
    assert len(requests) == 3
    for request in requests:
        assert "split into" in request.body["messages"][0]["content"][0]["text"]
    return [_clips_sent(request) for request in requests]


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def baseline(demo_build, tmp_path_factory):
    out = tmp_path_factory.mktemp("probe-none") / "none.jsonl"
    return _run(demo_build, out, None)


def _by_request(baseline, probed):
    """(clips as sent without a probe, clips as sent with it) per request: the k-th request
    of each run asks about the same video (the build's row order, --concurrency 1)."""
    return list(zip(baseline, probed, strict=True))


def test_probe_metadata_and_default_none(baseline, demo_build, tmp_path):
    out = tmp_path / "none.jsonl"
    _run(demo_build, out, None)
    meta = read_metadata(out)
    assert meta["probe"] == "none" and meta["probe_seed"] == 0
    assert meta["frames"] == {"num_frames": 4, "long_side": 64}
    for plain, probed in _by_request(baseline, _run(demo_build, tmp_path / "n2.jsonl", "none")):
        assert all(_same(a, b) for a, b in zip(plain, probed, strict=True))


def test_single_frame_sends_one_frame_per_clip(baseline, demo_build, tmp_path):
    probed = _run(demo_build, tmp_path / "single.jsonl", "single-frame")
    for plain, seen in _by_request(baseline, probed):
        assert len(seen) == len(plain) >= 2
        for frames, one in zip(plain, seen, strict=True):
            assert len(frames) == 4 and len(one) == 1
            assert np.array_equal(one[0], frames[2])  # the middle of four: index 4 // 2
    assert read_metadata(tmp_path / "single.jsonl")["probe"] == "single-frame"


def test_reversed_sends_each_clips_frames_in_reverse(baseline, demo_build, tmp_path):
    for plain, seen in _by_request(baseline, _run(demo_build, tmp_path / "rev.jsonl", "reversed")):
        for frames, back in zip(plain, seen, strict=True):
            assert _same(back, frames[::-1])


def test_frame_shuffle_sends_the_same_frames_in_another_order(baseline, demo_build, tmp_path):
    out = tmp_path / "shuffle.jsonl"
    probed = _run(demo_build, out, "frame-shuffle", ["--probe-seed", "7"])
    moved = 0
    for plain, seen in _by_request(baseline, probed):
        for frames, shuffled in zip(plain, seen, strict=True):
            assert len(shuffled) == len(frames) == 4
            # a permutation of the same frames: each sent frame is one of the clip's
            remaining = list(range(4))
            for image in shuffled:
                match = next(i for i in remaining if np.array_equal(frames[i], image))
                remaining.remove(match)
            distinct = len({f.tobytes() for f in frames}) > 1
            moved += distinct and not _same(shuffled, frames)
    assert moved > 0
    meta = read_metadata(out)
    assert meta["probe"] == "frame-shuffle" and meta["probe_seed"] == 7
    # seeded: the same run again sends the same orders
    again = _run(demo_build, tmp_path / "shuffle2.jsonl", "frame-shuffle", ["--probe-seed", "7"])
    for (_p, a), (_q, b) in zip(
        _by_request(baseline, probed), _by_request(baseline, again), strict=True
    ):
        assert all(_same(x, y) for x, y in zip(a, b, strict=True))


def test_blind_sends_grey_frames_of_the_same_size(baseline, demo_build, tmp_path):
    for plain, seen in _by_request(baseline, _run(demo_build, tmp_path / "blind.jsonl", "blind")):
        for frames, grey in zip(plain, seen, strict=True):
            assert len(grey) == len(frames)
            for original, image in zip(frames, grey, strict=True):
                assert image.shape == original.shape
                assert np.abs(image.astype(int) - 128).max() <= 2  # JPEG of flat mid-grey
                assert np.abs(original.astype(int) - 128).max() > 2


def test_rerun_with_another_probe_is_refused(demo_build, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    _run(demo_build, out, "reversed")
    with FakeOpenAIServer(_identity) as server:
        argv = ["run", "--endpoint", server.url, "--model", "m", "--config", "video"]
        argv += ["--data", str(demo_build), "--frames", "num_frames=4,long_side=64"]
        argv += ["--out", str(out), "--limit", "3", "--probe", "blind"]
        assert splice_main(argv) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert "other settings: probe 'reversed' (in the file) vs 'blind' (this run)" in err


def test_probe_needs_frames(demo_build, tmp_path, capsys):
    base = ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"]
    base += ["--data", str(demo_build), "--out", str(tmp_path / "x.jsonl")]
    assert splice_main([*base, "--config", "text", "--probe", "blind"]) == 2
    assert "--probe blind changes sampled frames" in capsys.readouterr().err
    assert splice_main([*base, "--config", "video", "--as", "video", "--probe", "reversed"]) == 2
    assert "needs --as images" in capsys.readouterr().err
    assert set(PROBES) == {"none", "single-frame", "frame-shuffle", "reversed", "blind"}
