"""Burn a step caption into a clip, for the human video+text packages (paper Appendix A.5:
the parts "contain embedded labels as secondary context").

Annotators watch plain MP4 files in any player, so the caption has to be in the pixels
rather than in a subtitle track a player may hide. The caption is drawn once into a band
(white on black, wrapped to the frame width) with the bitmap font of
``splice_build.demo.standin``, then pasted under every decoded frame; the clip is re-encoded
with H.264 (PyAV) at its own frame rate and size, the band added below the picture so
nothing of the picture is covered.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import av
import numpy as np

from splice_build.atomic import atomic_path
from splice_build.demo.standin import GLYPHS, text_mask
from splice_build.stages.cut import X264_REPRODUCIBLE
from splice_build.stages.frames import FALLBACK_RATE

MARGIN = 4  # pixels around the caption text
# A character's cell: the stand-in font's glyph with one pixel of spacing each way.
GLYPH_H, GLYPH_W = (side + 1 for side in GLYPHS["?"].shape)


def caption_band(caption: str, width: int) -> np.ndarray:
    """An RGB uint8 band (H, width, 3) with the caption in white on black, wrapped.

    Uses the stand-in renderer's 5x7 bitmap font (upper case), scaled x2 when the frame
    is wide enough for about 25 characters a line."""
    scale = 2 if width >= 2 * GLYPH_W * 25 + 2 * MARGIN else 1
    per_line = max(4, (width - 2 * MARGIN) // (GLYPH_W * scale))
    lines = textwrap.wrap(" ".join(caption.split()), per_line) or [""]
    line_h = GLYPH_H * scale + scale
    height = len(lines) * line_h + 2 * MARGIN
    height += height % 2  # yuv420p needs even sizes
    band = np.zeros((height, width, 3), np.uint8)
    for i, line in enumerate(lines):
        mask = text_mask(line, scale)[:, : width - 2 * MARGIN]
        top = MARGIN + i * line_h
        band[top : top + mask.shape[0], MARGIN : MARGIN + mask.shape[1]][mask] = 255
    return band


def burn_caption(clip: bytes, caption: str, out: str | Path, crf: int = 23) -> Path:
    """Write ``clip`` (encoded video bytes) to ``out`` with ``caption`` under each frame."""
    out = Path(out)
    with av.open(io.BytesIO(clip)) as src:
        if not src.streams.video:
            raise ValueError(f"{out.name}: clip has no video stream")
        stream = src.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate or FALLBACK_RATE
        width = stream.codec_context.width
        width += width % 2
        band = caption_band(caption, width)
        with atomic_path(out) as tmp:
            with av.open(str(tmp), "w", format="mp4") as dst:
                enc = dst.add_stream("libx264", rate=rate)
                enc.pix_fmt = "yuv420p"
                enc.options = {"crf": str(crf), "preset": "veryfast", **X264_REPRODUCIBLE}
                index = 0
                for frame in src.decode(stream):
                    rgb = frame.to_ndarray(format="rgb24")
                    h, w = rgb.shape[:2]
                    canvas = np.zeros((h + h % 2 + band.shape[0], width, 3), np.uint8)
                    canvas[:h, :w] = rgb
                    canvas[h + h % 2 :] = band
                    if index == 0:
                        enc.width, enc.height = canvas.shape[1], canvas.shape[0]
                    new = av.VideoFrame.from_ndarray(canvas, format="rgb24")
                    new.pts = index
                    index += 1
                    for packet in enc.encode(new):
                        dst.mux(packet)
                if index == 0:
                    raise ValueError(f"{out.name}: clip has no decodable frames")
                for packet in enc.encode():
                    dst.mux(packet)
    return out
