"""The clips SPLICE's VLMEvalKit class hands video models: a build's clips (short side 448, so
a 16:9 clip is 796x448) reached Qwen2VLChat at qwen-vl-utils' own size cap, long side 784,
over the paper's 448; the class now writes them at most 448 px, frame for frame."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from splice_dataset import CLIP_SHORT_SIDE, PAPER_LONG_SIDE
from splice_eval.toolkits.vlmeval_clips import SCALED_FOLDER, scaled_clip

RATE = Fraction(10)


def write_clip(path: Path, width: int, height: int, frames: int = 30) -> Path:
    with av.open(str(path), mode="w", format="mp4") as sink:
        stream = sink.add_stream("libx264", rate=RATE)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for k in range(frames):
            pixels = np.full((height, width, 3), 8 * k, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            sink.mux(stream.encode(frame))
        sink.mux(stream.encode())
    return path


def described(path: str) -> tuple[int, int, int, float]:
    with av.open(path) as source:
        stream = source.streams.video[0]
        count = sum(1 for _ in source.decode(stream))
        return stream.width, stream.height, count, float(stream.average_rate)


def test_a_build_clip_reaches_video_models_at_the_papers_long_side(tmp_path):
    width = round(CLIP_SHORT_SIDE * 16 / 9) // 2 * 2  # a 16:9 build clip: 796x448
    clip = write_clip(tmp_path / "clip.mp4", width, CLIP_SHORT_SIDE)
    scaled = scaled_clip(str(clip), tmp_path / "root")
    assert Path(scaled).parent == tmp_path / "root" / SCALED_FOLDER
    w, h, count, rate = described(scaled)
    assert max(w, h) <= PAPER_LONG_SIDE and (w, h) == (448, 252)
    assert (count, rate) == (30, float(RATE))  # the clip's frames and seconds kept
    assert scaled_clip(str(clip), tmp_path / "root") == scaled  # written once


def test_a_small_clip_is_handed_over_as_it_is(tmp_path):
    clip = write_clip(tmp_path / "small.mp4", 320, 180)
    assert scaled_clip(str(clip), tmp_path / "root") == str(clip)
