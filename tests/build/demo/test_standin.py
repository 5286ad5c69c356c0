"""Stand-in sources: cover the real entry's duration, every step looks different, every
frame says STAND-IN, and probe + cut accept them."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import av
import numpy as np
import pytest

from splice_build.demo.standin import GAP_COLOURS, LABEL, STEP_COLOURS, render_source, text_mask
from splice_build.records import CutSettings, VideoEntry
from splice_build.stages import ingest
from splice_build.stages.cut import cut_video
from splice_build.stages.probe import probe

FPS = 10


@pytest.fixture(scope="module")
def coin_entry(coin_json_path: Path) -> VideoEntry:
    """A real COIN entry with gaps between several steps, short enough for a test."""
    entries = ingest.load_annotations(coin_json_path).entries
    return next(
        e
        for e in sorted(entries, key=lambda e: e.video_id)
        if 4 <= e.num_steps <= 7
        and e.duration < 90
        and e.steps[0].start >= 2
        and all(b.start - a.end >= 1 for a, b in pairwise(e.steps))
    )


@pytest.fixture(scope="module")
def rendered(coin_entry: VideoEntry, tmp_path_factory) -> tuple[Path, list[np.ndarray]]:
    folder = tmp_path_factory.mktemp("standin")
    path = render_source(coin_entry, folder / f"{coin_entry.video_id}.mp4")
    with av.open(str(path)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return path, frames


def _colour(image: np.ndarray) -> np.ndarray:
    """The median colour of a frame's plain background (right-hand middle band)."""
    h, w, _ = image.shape
    return np.median(image[h // 2 - 10 : h // 2 + 10, -30:-10].reshape(-1, 3), axis=0)


def _index(t: float) -> int:
    return round(t * FPS)


def test_covers_the_whole_duration(coin_entry, rendered):
    path, frames = rendered
    assert len(frames) == int(np.ceil(coin_entry.duration * FPS))
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height) == (320, 180)
        assert stream.average_rate == FPS
    assert probe(coin_entry, path.parent, tolerance=0.0).source.duration >= coin_entry.duration


def test_each_step_has_its_own_look(coin_entry, rendered):
    _, frames = rendered
    seen = []
    for i, step in enumerate(coin_entry.steps):
        middle = frames[_index((step.start + step.end) / 2)]
        colour = _colour(middle)
        assert np.abs(colour - STEP_COLOURS[i]).max() < 25, (i, colour)
        seen.append(tuple(colour))
    assert len(set(seen)) == coin_entry.num_steps
    gap = frames[_index(coin_entry.steps[0].start / 2)]
    assert np.abs(_colour(gap) - np.mean(GAP_COLOURS, axis=0)).max() < 30
    assert gap.std() > 10  # stripes, not a flat colour


def test_progress_bar_moves_through_a_step(coin_entry, rendered):
    _, frames = rendered
    step = max(coin_entry.steps, key=lambda s: s.end - s.start)
    span = step.end - step.start
    h = frames[0].shape[0]
    filled = []
    for fraction in (0.2, 0.5, 0.8):
        row = frames[_index(step.start + fraction * span)][h - 8, 4:-4].mean(axis=1)
        filled.append(float((row > 128).mean()))
    assert filled[0] < filled[1] < filled[2]
    assert filled == pytest.approx([0.2, 0.5, 0.8], abs=0.08)


def test_every_frame_says_stand_in(coin_entry, rendered):
    _, frames = rendered
    mask = text_mask(LABEL, 4)
    for image in frames[:: len(frames) // 7]:
        region = image[4 : 4 + mask.shape[0], 4 : 4 + mask.shape[1]].astype(float).mean(axis=2)
        assert abs(region[mask].mean() - region[~mask].mean()) > 60


def test_probe_and_cut_accept_it(coin_entry, rendered, tmp_path):
    path, _ = rendered
    cut = cut_video(probe(coin_entry, path.parent), tmp_path, CutSettings())
    assert len(cut.clips) == coin_entry.num_steps
    for i, (clip, step) in enumerate(zip(cut.clips, coin_entry.steps, strict=True)):
        assert clip.first_time == pytest.approx(float(Fraction(np.ceil(step.start * FPS)) / FPS))
        assert abs(clip.duration - (step.end - step.start)) <= 1 / FPS + 1e-9
        with av.open(str(clip.path)) as container:
            colours = [_colour(f.to_ndarray(format="rgb24")) for f in container.decode(video=0)]
        assert all(np.abs(c - STEP_COLOURS[i]).max() < 25 for c in colours)


def test_text_mask_draws_known_glyphs_and_marks_unknown_ones():
    assert text_mask("1").shape == (7, 5)
    assert text_mask("AB", 2).shape == (14, 22)
    assert (text_mask("é") == text_mask("?")).all()
    assert not (text_mask("8") == text_mask("0")).all()


def test_bad_size_is_refused(coin_entry, tmp_path):
    with pytest.raises(ValueError, match="even"):
        render_source(coin_entry, tmp_path / "x.mp4", size=(321, 180))
