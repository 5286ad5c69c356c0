"""Burn a step caption into a clip, for the human video+text packages (paper Appendix A.5:
the parts "contain embedded labels as secondary context").

Annotators watch plain MP4 files in any player, so the caption has to be in the pixels
rather than in a subtitle track a player may hide. The caption is drawn once into a band
(white on black, wrapped to the frame width) with Pillow's built-in font, then pasted
under every decoded frame; the clip is re-encoded with H.264 (PyAV) at its own frame
rate and size, the band added below the picture so nothing of the picture is covered.
"""

from __future__ import annotations

import io
import textwrap
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

MARGIN = 4  # pixels around the caption text
FONT_SIZE = 14


def caption_band(caption: str, width: int) -> np.ndarray:
    """An RGB uint8 band (H, width, 3) with the caption in white on black, wrapped."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=FONT_SIZE)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    char_w = max(1.0, probe.textlength("abcdefghijklmnopqrstuvwxyz", font=font) / 26)
    per_line = max(8, int((width - 2 * MARGIN) / char_w))
    lines = textwrap.wrap(caption.strip(), per_line) or [""]
    ascent, descent = font.getmetrics()
    line_h = ascent + descent + 2
    height = len(lines) * line_h + 2 * MARGIN
    height += height % 2  # yuv420p needs even sizes
    image = Image.new("RGB", (width, height), (0, 0, 0))
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((MARGIN, MARGIN + i * line_h), line, fill=(255, 255, 255), font=font)
    return np.asarray(image, dtype=np.uint8)


def burn_caption(clip: bytes, caption: str, out: str | Path, crf: int = 23) -> Path:
    """Write ``clip`` (encoded video bytes) to ``out`` with ``caption`` under each frame."""
    out = Path(out)
    with av.open(io.BytesIO(clip)) as src:
        if not src.streams.video:
            raise ValueError(f"{out.name}: clip has no video stream")
        stream = src.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate or Fraction(25)
        width = stream.codec_context.width
        width += width % 2
        band = caption_band(caption, width)
        tmp = out.with_name(out.name + ".tmp")
        with av.open(str(tmp), "w", format="mp4") as dst:
            enc = dst.add_stream("libx264", rate=rate)
            enc.pix_fmt = "yuv420p"
            enc.options = {"crf": str(crf), "preset": "veryfast"}
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
    tmp.replace(out)
    return out
