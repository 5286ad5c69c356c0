"""A shuffled video as its dataset row, the one row every writer writes (the Parquet
shards whole, the WebDataset tars as JSON beside the clips), and the video-id order they
all rely on."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from splice_build.records import ShuffledVideo
from splice_dataset import (
    ANSWER,
    CAPTIONS,
    CLIP_DURATIONS,
    CLIPS,
    COIN_SUBSET,
    DOMAIN,
    DURATION,
    NUM_CLIPS,
    RECIPE_TYPE,
    TASK,
    VIDEO_ID,
    clip_file_name,
)


def video_row(video: ShuffledVideo) -> dict[str, Any]:
    """The full (``video_text``) row of one video, clip bytes read from the work folder.

    Clip names are ``clip_file_name(video_id, label)``: they name the shuffled label only.
    """
    entry = video.entry
    vid = entry.video_id
    n = len(video.clips)
    if not (len(video.steps) == n == len(video.order)):
        raise ValueError(
            f"video {vid}: {n} clips, {len(video.steps)} steps and an order of "
            f"{len(video.order)} labels; they must all be equal"
        )
    if sorted(video.order) != list(range(1, n + 1)):
        raise ValueError(f"video {vid}: order {list(video.order)} is not a permutation of 1..{n}")
    clips = []
    for label, clip in enumerate(video.clips, start=1):
        try:
            data = Path(clip.path).read_bytes()
        except OSError as exc:
            raise ValueError(
                f"video {vid}: cannot read clip {label} at {clip.path}: {exc}"
            ) from None
        if not data:
            raise ValueError(f"video {vid}: clip {label} at {clip.path} is empty")
        clips.append({"bytes": data, "path": clip_file_name(vid, label)})
    clip_durations = [float(c.duration) for c in video.clips]
    return {
        VIDEO_ID: vid,
        TASK: entry.task,
        DOMAIN: entry.domain,
        RECIPE_TYPE: entry.recipe_type,
        COIN_SUBSET: entry.subset,
        NUM_CLIPS: n,
        DURATION: math.fsum(clip_durations),
        CLIPS: clips,
        CAPTIONS: [s.label for s in video.steps],
        CLIP_DURATIONS: clip_durations,
        ANSWER: {
            "order": list(video.order),
            "segments": [{"start": float(s.start), "end": float(s.end)} for s in video.steps],
            "step_ids": [s.step_id for s in video.steps],
        },
    }


def check_order(video_id: str, previous: str | None) -> None:
    """Refuse a video that does not come strictly after ``previous``: every writer relies
    on the pipeline's video-id order, which is part of the build's content."""
    if previous is not None and video_id <= previous:
        raise ValueError(
            f"video {video_id}: videos must arrive sorted by video_id without duplicates "
            f"(previous was {previous}); the shards' order is part of the build"
        )


__all__ = ["check_order", "video_row"]
