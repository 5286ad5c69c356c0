"""Shortcut probes: run conditions that change what the model sees and nothing else.

A score alone does not say whether a model orders clips by what happens in them. Asking
again with each clip cut to one frame, its frames shuffled or reversed, or every frame
replaced by grey (the prompt unchanged) shows how much of the score rests on motion within
a clip, on the frames' order, or on the words alone (after TOMATO's and TempVS's probes).

``apply_probe`` is one pure function over a clip's sampled frames; ``probed_frames`` samples
a prompt's clips and applies it, so every runner that sends frames probes the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from splice_eval.run.sampling import Frames, sample_frames

NONE = "none"
PROBES = (NONE, "single-frame", "frame-shuffle", "reversed", "blind")
DEFAULT_SEED = 0
GREY = 128  # mid-grey in uint8 RGB


def probe_rng(seed: int, video_id: str, clip_index: int) -> np.random.Generator:
    """A generator for one clip, the same in every run and process for the same seed: the
    shuffle of a clip does not depend on which other clips or rows were asked first."""
    digest = hashlib.sha256(f"{seed}\x1f{video_id}\x1f{clip_index}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def shuffled_positions(count: int, rng: np.random.Generator) -> np.ndarray:
    """A random order of ``count`` frames that is not their own order when there are two
    or more (an unchanged clip would test nothing)."""
    if count < 2:
        return np.arange(count)
    while True:
        perm = rng.permutation(count)
        if not np.array_equal(perm, np.arange(count)):
            return perm


def apply_probe(name: str, frames: Frames, seed: int, video_id: str, clip_index: int) -> Frames:
    """One clip's sampled frames as the probe ``name`` shows them (``clip_index`` counts the
    clips of the row from 0, as the prompt shows them). Times travel with their frames."""
    count = len(frames.frames)
    if name == NONE or count == 0:
        return frames
    if name == "single-frame":
        keep = np.array([count // 2])
    elif name == "frame-shuffle":
        keep = shuffled_positions(count, probe_rng(seed, video_id, clip_index))
    elif name == "reversed":
        keep = np.arange(count)[::-1]
    elif name == "blind":
        return Frames(np.full_like(frames.frames, GREY), frames.times.copy())
    else:
        raise ValueError(f"unknown probe {name!r}; expected one of {', '.join(PROBES)}")
    return Frames(frames.frames[keep], frames.times[keep])


def probed_frames(
    prompt: Any,
    frame_kwargs: Mapping[str, Any],
    probe: str,
    seed: int,
    sample: Callable[[Any, Mapping[str, Any]], Frames] | None = None,
) -> list[Frames]:
    """Each clip of a prompt (``prompts.Prompt``) sampled with ``frame_kwargs`` (by
    ``sample``, e.g. ``FrameCache.sample``; else decoded afresh) and shown through
    ``probe``: what ``prompts.to_chat_messages`` sends as images."""
    video_id = str(prompt.video_id)
    sample = sample or _decode
    return [
        apply_probe(probe, sample(clip.clip, frame_kwargs), seed, video_id, index)
        for index, clip in enumerate(prompt.clips)
    ]


def _decode(clip: Any, frame_kwargs: Mapping[str, Any]) -> Frames:
    return sample_frames(clip, **frame_kwargs)
