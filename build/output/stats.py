"""Statistics of a build in the form of the paper's Table 1 and Table 6, plus per-domain counts.

They are computed from small per-video records (``VideoStats``) that the shard writer
collects while streaming, so the card never has to reopen the clip shards; the validator
computes the same records from the shards and checks the card against them.

Choices the paper leaves open:
- A video's duration is the sum of its clips' durations (what a model actually watches),
  which is also the ``duration`` column.
- "Std Dev" is the sample standard deviation (ddof=1), the default of pandas' ``std()``
  that such tables are usually made with; it is undefined (None) for a single video.
- Table 6's bins are left-open, right-closed like its headers, ``(2, 35]`` ... ``(198, 330]``.
  Two extra bins, ``<= 2`` and ``> 330``, hold videos outside them, so that every video is
  counted somewhere and the bin counts always add up to the number of videos.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from splice_dataset import (
    COIN_SUBSET,
    DOMAIN,
    DURATION,
    MAX_CLIPS,
    MIN_CLIPS,
    NUM_CLIPS,
    RECIPE_TYPE,
    TASK,
    VIDEO_ID,
)

# Table 6's duration bins in seconds, each (low, high]: the paper's headers.
DURATION_BINS: tuple[tuple[float, float], ...] = (
    (2, 35),
    (35, 68),
    (68, 100),
    (100, 133),
    (133, 166),
    (166, 198),
    (198, 330),
)
UNDER_LABEL = f"<= {DURATION_BINS[0][0]:g}"
OVER_LABEL = f"> {DURATION_BINS[-1][1]:g}"
BIN_LABELS: tuple[str, ...] = (
    UNDER_LABEL,
    *(f"({lo:g}, {hi:g}]" for lo, hi in DURATION_BINS),
    OVER_LABEL,
)


@dataclass(frozen=True)
class VideoStats:
    """What the statistics need to know about one written video (no clip bytes)."""

    video_id: str
    task: str
    domain: str
    recipe_type: int
    coin_subset: str
    num_clips: int
    duration: float  # sum of the clip durations, seconds

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> VideoStats:
        """The record of a row as the shards store it. The writer keeps these while
        streaming and the validator rebuilds them from the shards; one constructor keeps
        the card's statistics and the validator's check of them from drifting apart.
        Missing values (a damaged shard) become None, 0 clips and 0 s rather than errors:
        the validator reports the row itself."""
        return cls(
            video_id=row.get(VIDEO_ID),
            task=row.get(TASK),
            domain=row.get(DOMAIN),
            recipe_type=row.get(RECIPE_TYPE),
            coin_subset=row.get(COIN_SUBSET),
            num_clips=row.get(NUM_CLIPS) or 0,
            duration=row.get(DURATION) or 0.0,
        )


@dataclass(frozen=True)
class ClipCountRow:
    """One row of Table 1 / Table 6: all videos with the same number of clips."""

    num_clips: int
    videos: int
    clips: int
    mean_duration: float | None  # None when there is no video with this many clips
    std_duration: float | None  # sample standard deviation; None for fewer than 2 videos
    bins: tuple[int, ...]  # counts aligned with BIN_LABELS (under, paper's seven, over)


@dataclass(frozen=True)
class DomainRow:
    domain: str
    videos: int
    clips: int
    tasks: int
    duration: float  # total seconds


@dataclass(frozen=True)
class BuildStats:
    """Everything the card reports about the build's content."""

    rows: tuple[ClipCountRow, ...]  # one per clip count, MIN_CLIPS..MAX_CLIPS (and any other)
    domains: tuple[DomainRow, ...]  # sorted by domain name
    subsets: tuple[tuple[str, int], ...]  # COIN official subset -> videos, sorted
    videos: int
    clips: int
    tasks: int
    duration: float  # total seconds

    @property
    def bin_totals(self) -> tuple[int, ...]:
        return tuple(sum(r.bins[i] for r in self.rows) for i in range(len(BIN_LABELS)))


def duration_bin(duration: float) -> int:
    """Index into BIN_LABELS of a video duration (the paper's (low, high] bins)."""
    if duration <= DURATION_BINS[0][0]:
        return 0
    for i, (_lo, hi) in enumerate(DURATION_BINS, start=1):
        if duration <= hi:
            return i
    return len(BIN_LABELS) - 1


def compute_stats(videos: Iterable[VideoStats]) -> BuildStats:
    """Table 1 / Table 6 / per-domain statistics of a set of written videos."""
    by_count: dict[int, list[float]] = defaultdict(list)
    domain_videos: Counter[str] = Counter()
    domain_clips: Counter[str] = Counter()
    domain_tasks: dict[str, set[str]] = defaultdict(set)
    domain_duration: dict[str, list[float]] = defaultdict(list)
    subsets: Counter[str] = Counter()
    tasks: set[str] = set()
    for v in videos:
        by_count[v.num_clips].append(v.duration)
        domain_videos[v.domain] += 1
        domain_clips[v.domain] += v.num_clips
        domain_tasks[v.domain].add(v.task)
        domain_duration[v.domain].append(v.duration)
        subsets[v.coin_subset] += 1
        tasks.add(v.task)

    rows = []
    for n in sorted(set(range(MIN_CLIPS, MAX_CLIPS + 1)) | set(by_count)):
        durations = by_count.get(n, [])
        bins = [0] * len(BIN_LABELS)
        for d in durations:
            bins[duration_bin(d)] += 1
        rows.append(
            ClipCountRow(
                num_clips=n,
                videos=len(durations),
                clips=n * len(durations),
                mean_duration=math.fsum(durations) / len(durations) if durations else None,
                std_duration=statistics.stdev(durations) if len(durations) > 1 else None,
                bins=tuple(bins),
            )
        )
    domains = tuple(
        DomainRow(
            domain=d,
            videos=domain_videos[d],
            clips=domain_clips[d],
            tasks=len(domain_tasks[d]),
            duration=math.fsum(domain_duration[d]),
        )
        for d in sorted(domain_videos)
    )
    return BuildStats(
        rows=tuple(rows),
        domains=domains,
        subsets=tuple(sorted(subsets.items())),
        videos=sum(r.videos for r in rows),
        clips=sum(r.clips for r in rows),
        tasks=len(tasks),
        duration=math.fsum(d.duration for d in domains),
    )


__all__ = [
    "BIN_LABELS",
    "DURATION_BINS",
    "BuildStats",
    "ClipCountRow",
    "DomainRow",
    "VideoStats",
    "compute_stats",
    "duration_bin",
]
