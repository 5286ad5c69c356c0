"""The clip files SPLICE's VLMEvalKit dataset class hands a model that takes videos.

VLMEvalKit's video classes read a clip file themselves and keep its stored size: Qwen2VLChat
passes it to qwen-vl-utils, whose video pixel cap (768 x 28 x 28) left a build's 796x448
clip at 784x448 (measured; the issue saw 1008x560 on larger sources), while the paper gives
every model frames whose longer side is at most 448 px (Appendix A.2). A dataset item
carries only a path, so the one place the size can be set for every such class is the file
itself: the clip is written again with its longer side at ``PAPER_LONG_SIDE``, frame for
frame at its own rate, so 1 fps and 16-frame sampling still see the clip's real seconds.
Written once per clip content, like the frames of image models.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from pathlib import Path

from splice_build.atomic import atomic_path
from splice_dataset import PAPER_LONG_SIDE
from splice_eval.run.sampling import scaled_size

SCALED_FOLDER = f"clips-{PAPER_LONG_SIDE}"  # beside $LMUData/SPLICE/clips


def even_size(width: int, height: int, long_side: int) -> tuple[int, int]:
    """``scaled_size`` rounded down to even sides (H.264's yuv420p needs them)."""
    w, h = scaled_size(width, height, long_side)
    return max(2, w - w % 2), max(2, h - h % 2)


def scaled_clip(clip_path: str, root: Path, long_side: int = PAPER_LONG_SIDE) -> str:
    """``clip_path`` with its longer side at most ``long_side``, as a file under
    ``root/clips-<long_side>`` named by the source's sha256; a clip already that small is
    handed back as it is."""
    import av

    data = Path(clip_path).read_bytes()
    target = root / SCALED_FOLDER / (hashlib.sha256(data).hexdigest() + ".mp4")
    if target.exists():
        return str(target)
    with av.open(clip_path) as source:
        stream = source.streams.video[0]
        width, height = stream.codec_context.width, stream.codec_context.height
        if max(width, height) <= long_side:
            return clip_path
        rate = stream.average_rate or stream.guessed_rate or Fraction(25)
        size = even_size(width, height, long_side)
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            _encode(source, stream, tmp, Fraction(rate), size)
    return str(target)


def _encode(source, stream, out: Path, rate: Fraction, size: tuple[int, int]) -> None:
    """Every decoded frame scaled to ``size`` and written at ``rate``, one after another,
    so the clip keeps its frame count and duration."""
    import av

    with av.open(str(out), mode="w", format="mp4") as sink:
        video = sink.add_stream("libx264", rate=rate, options={"crf": "18"})
        video.width, video.height = size
        video.pix_fmt = "yuv420p"
        video.codec_context.time_base = 1 / rate
        for count, frame in enumerate(source.decode(stream)):
            scaled = frame.reformat(width=size[0], height=size[1], format="yuv420p")
            scaled.pts, scaled.time_base = count, 1 / rate
            for packet in video.encode(scaled):
                sink.mux(packet)
        for packet in video.encode():
            sink.mux(packet)
