"""Stand-in source videos for real COIN entries, for the demo and the tests.

No COIN video can be downloaded here, so the demo renders one video per annotation entry,
as long as the real one, in which every annotated step looks different: its own colour,
its step number in big block digits, its label and a progress bar moving through the step.
Time outside the steps is grey with stripes. Every frame says STAND-IN, so nobody mistakes
a build from these for the benchmark.

Speed matters (the demo renders ~25 videos of up to two minutes within about a minute on
two cores): each step's picture is drawn once in numpy and converted to YUV once; a frame
only picks, column by column, between the empty and the full progress bar.
"""

from __future__ import annotations

import math
import textwrap
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from splice_build.atomic import atomic_path
from splice_build.records import VideoEntry

# Distinct, saturated step colours (RGB); a video has at most 7 steps in SPLICE.
STEP_COLOURS: tuple[tuple[int, int, int], ...] = (
    (200, 30, 30),  # red
    (230, 130, 0),  # orange
    (210, 190, 0),  # yellow
    (30, 150, 40),  # green
    (0, 160, 170),  # teal
    (40, 70, 200),  # blue
    (140, 50, 180),  # purple
    (200, 40, 130),  # magenta
)
GAP_COLOURS = ((70, 70, 70), (95, 95, 95))  # stripes between steps
LABEL = "STAND-IN"

# A 5x7 bitmap font: each glyph is seven rows of five pixels ('#' on).
_GLYPHS_TEXT = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": ".###. #.... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ....# .###.",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    " ": "..... ..... ..... ..... ..... ..... .....",
    "-": "..... ..... ..... ##### ..... ..... .....",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "'": "..#.. ..#.. .#... ..... ..... ..... .....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "&": ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
}
GLYPHS: dict[str, np.ndarray] = {
    char: np.array([[c == "#" for c in row] for row in rows.split()], dtype=bool)
    for char, rows in _GLYPHS_TEXT.items()
}


def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """The pixels of a line of text (upper-cased; unknown characters become '?')."""
    glyphs = [GLYPHS.get(c, GLYPHS["?"]) for c in text.upper()] or [GLYPHS[" "]]
    spaced = [np.pad(g, ((0, 0), (0, 1))) for g in glyphs]  # one column between letters
    mask = np.concatenate(spaced, axis=1)[:, :-1]
    return np.kron(mask, np.ones((scale, scale), dtype=bool)).astype(bool)


def render_source(
    entry: VideoEntry, path: Path, *, size: tuple[int, int] = (320, 180), fps: int = 10
) -> Path:
    """Render a stand-in for ``entry``'s source video covering its whole duration.

    The file is written next to ``path`` and renamed into place, so an interrupted render
    never leaves a half video that a later build would probe.
    """
    width, height = size
    if width % 2 or height % 2 or width < 64 or height < 36:
        raise ValueError(f"stand-in size must be even and at least 64x36, got {size}")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n_frames = max(1, math.ceil(entry.duration * fps))
    pictures = _Pictures(entry, width, height)
    fmt = {".webm": "webm", ".mkv": "matroska"}.get(path.suffix.lower(), "mp4")
    codec = "libvpx" if fmt == "webm" else "libx264"
    with atomic_path(path) as partial, av.open(str(partial), mode="w", format=fmt) as container:
        options = {"preset": "ultrafast", "crf": "26"} if codec == "libx264" else {}
        stream = container.add_stream(codec, rate=fps, options=options)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = 2 * fps  # keyframes every 2 s, like YouTube
        stream.codec_context.thread_type = "FRAME"
        time_base = Fraction(1, fps)
        for index in range(n_frames):
            frame = av.VideoFrame.from_ndarray(pictures.at(index / fps), format="yuv420p")
            frame.pts, frame.time_base = index, time_base
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


class _Pictures:
    """Each step's picture (and the gap's), pre-drawn as YUV 4:2:0 with the bar empty and
    full; `at(t)` fills the bar up to the time's progress through its step or gap."""

    def __init__(self, entry: VideoEntry, width: int, height: int):
        self.entry = entry
        self.width, self.height = width, height
        self.bar_rows = slice(height - max(6, height // 12) - 4, height - 4)
        self.bar_cols = (4, width - 4)
        n = entry.num_steps
        self.steps = [self._yuv_pair(self._step_rgb(i, n)) for i in range(n)]
        self.gap = self._yuv_pair(self._gap_rgb())
        # Horizontal position (in full-resolution pixels) of every sample of the packed
        # yuv420p array: Y rows, then U and V rows that each hold two half-width rows.
        half = width // 2
        chroma = (np.arange(width) % half) * 2
        self.columns = np.vstack(
            [np.tile(np.arange(width), (height, 1)), np.tile(chroma, (height // 2, 1))]
        )

    def at(self, t: float) -> np.ndarray:
        pair, progress = self.gap, 0.0
        previous_end = 0.0
        for i, step in enumerate(self.entry.steps):
            if t < step.start:
                progress = (t - previous_end) / max(step.start - previous_end, 1e-9)
                break
            if t < step.end:
                pair, progress = self.steps[i], (t - step.start) / (step.end - step.start)
                break
            previous_end = step.end
        else:
            progress = (t - previous_end) / max(self.entry.duration - previous_end, 1e-9)
        left, right = self.bar_cols
        edge = left + int(round(min(max(progress, 0.0), 1.0) * (right - left)))
        empty, full = pair
        return np.where(self.columns < edge, full, empty)

    def _yuv_pair(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        empty, full = rgb.copy(), rgb.copy()
        left, right = self.bar_cols
        empty[self.bar_rows, left:right] = (25, 25, 25)
        full[self.bar_rows, left:right] = (245, 245, 245)
        return _to_yuv(empty), _to_yuv(full)

    def _step_rgb(self, index: int, count: int) -> np.ndarray:
        colour = STEP_COLOURS[index % len(STEP_COLOURS)]
        image = np.empty((self.height, self.width, 3), np.uint8)
        image[:] = colour
        ink = (0, 0, 0) if sum(colour) > 360 else (255, 255, 255)
        h = self.height
        digits = text_mask(str(index + 1), scale=max(2, h // 14))
        _stamp(image, digits, (h - digits.shape[0]) // 2 - h // 16, self.width // 12, ink)
        label = self.entry.steps[index].label
        small = max(1, h // 90)
        _stamp(image, text_mask(LABEL, small * 2), 4, 4, ink)
        x = self.width // 12 + digits.shape[1] + self.width // 16
        _stamp(image, text_mask(f"STEP {index + 1} OF {count}", small), h // 3, x, ink)
        per_line = max(1, (self.width - x - 2) // (6 * small))
        for row, line in enumerate(textwrap.wrap(label, per_line)[:3]):
            _stamp(image, text_mask(line, small), h // 3 + (10 + 9 * row) * small, x, ink)
        return image

    def _gap_rgb(self) -> np.ndarray:
        y, x = np.mgrid[0 : self.height, 0 : self.width]
        stripes = ((x + y) // 12) % 2
        image = np.where(stripes[..., None] == 0, GAP_COLOURS[0], GAP_COLOURS[1])
        image = image.astype(np.uint8)
        small = max(1, self.height // 90)
        _stamp(image, text_mask(LABEL, small * 2), 4, 4, (255, 255, 255))
        top = self.height // 2 - 7 * small
        _stamp(image, text_mask("NO STEP", small * 2), top, 4, (220, 220, 220))
        return image


def _stamp(image: np.ndarray, mask: np.ndarray, top: int, left: int, colour) -> None:
    """Paint a text mask onto an image, clipped at its edges."""
    h = max(0, min(mask.shape[0], image.shape[0] - top))
    w = max(0, min(mask.shape[1], image.shape[1] - left))
    region = image[top : top + h, left : left + w]
    region[mask[:h, :w]] = colour


def _to_yuv(rgb: np.ndarray) -> np.ndarray:
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
    return frame.reformat(format="yuv420p").to_ndarray()
