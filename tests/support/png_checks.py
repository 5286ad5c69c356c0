"""A figure the report draws, checked as a picture: a PNG file, decoded, of a useful size,
not blank, with coloured marks (the plotted data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def assert_real_png(path: Path, min_w: int = 500, min_h: int = 300) -> None:
    """``path`` is a drawn figure: a PNG at least ``min_w`` x ``min_h`` px with coloured marks
    (matplotlib imported only when a figure is checked)."""
    from matplotlib import image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pixels = 255 * np.asarray(image.imread(path), dtype=np.float64)[..., :3]  # decodes it
    h, w = pixels.shape[:2]
    assert w >= min_w and h >= min_h, f"{path}: {w}x{h}"
    assert pixels.var() > 100, f"{path} is blank"
    # something other than white and black: the plotted data (coloured lines/bars)
    chroma = pixels.max(axis=2) - pixels.min(axis=2)
    assert (chroma > 60).mean() > 0.002, f"{path} has no coloured marks"
