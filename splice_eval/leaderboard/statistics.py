"""Intervals and honest ranks over videos, vectorised with numpy and seeded.

Every entry of a config is scored over the same videos (the build's; a video not answered
is wrong), so one set of bootstrap resamples of the videos serves them all: a resample is a
row of counts (how often each video was drawn), and every entry's resampled means are one
matrix product. The same resamples give each entry's percentile 95% interval and the
paired comparisons behind the ranks.

Ranks (paired bootstrap, honest ties): A is better than B when the 2.5% quantile of the
resampled A - B is above 0, the quantile being the empirical one (the smallest d with at
least 2.5% of the resampled differences <= d), i.e. when fewer than 2.5% of the resamples
have A <= B. ``rank_low`` = 1 + the entries better than it; ``rank_high`` = the entries not
worse than it (itself included). A metric where lower is better is compared negated.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

CONFIDENCE = 0.95
MIN_RESAMPLES = 1000
_BLOCK = 64  # entries compared at once: (block x entries x resamples) booleans


@functools.lru_cache(maxsize=4)
def resample_counts(videos: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` x ``videos`` float32 counts of each video in a bootstrap resample (rows
    sum to ``videos``), drawn from ``seed`` alone (read-only: every caller shares them)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, videos, size=(resamples, videos), dtype=np.int64)
    picks += np.arange(resamples, dtype=np.int64)[:, None] * videos
    counts = np.bincount(picks.ravel(), minlength=resamples * videos)
    counts = counts.reshape(resamples, videos).astype(np.float32)
    counts.flags.writeable = False
    return counts


def resampled_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Entries x resamples: each entry's (row of ``values``, entries x videos) mean in each
    resample."""
    values = np.atleast_2d(np.asarray(values, dtype=np.float32))
    return values @ counts.T / np.float32(counts.shape[1])


def intervals(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's percentile interval (CONFIDENCE) of its resampled means."""
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(np.atleast_2d(means), [tail, 1 - tail], axis=1)
    return low.astype(float), high.astype(float)


def group_intervals(
    values: np.ndarray, counts: np.ndarray, masks: Sequence[np.ndarray]
) -> list[tuple[float, float, float]]:
    """Each group's (a mask over the videos) mean and interval, on the resamples of all the
    videos: a group's resampled mean is its drawn videos' mean, however many were drawn
    (one product for every group at once)."""
    if not len(masks):
        return []
    onehot = np.stack(masks, axis=1).astype(np.float32)  # videos x groups
    values = np.asarray(values, dtype=np.float32)
    drawn = counts @ onehot  # resamples x groups
    means = (counts * values[None, :]) @ onehot / np.maximum(drawn, 1)
    means = np.where(drawn > 0, means, np.nan)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.nanquantile(means, [tail, 1 - tail], axis=0)
    out = []
    for g, mask in enumerate(masks):
        mean = float(values[mask].mean()) if mask.any() else math.nan
        out.append((mean, float(low[g]), float(high[g])))
    return out


def interval_of(values: np.ndarray, resamples: int, seed: int) -> tuple[float, float, float]:
    """One vector's mean and bootstrap interval, resampled within it (a breakdown's subset
    of videos, a paired difference)."""
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return math.nan, math.nan, math.nan
    counts = resample_counts(len(values), resamples, seed)
    low, high = intervals(resampled_means(values, counts))
    return float(values.mean()), float(low[0]), float(high[0])


def honest_ranks(means: np.ndarray, higher_better: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``rank_low`` and ``rank_high`` of each entry (a row of resampled means, all rows on
    the same resamples). Pairs whose resampled means never overlap are decided from their
    ranges; only overlapping pairs are compared resample by resample."""
    m = np.asarray(means if higher_better else -np.asarray(means), dtype=np.float32)
    entries, resamples = m.shape
    if entries == 0:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    # fewer A <= B resamples than this: A better (rounded: 0.025 * 1000 is 25.000000000000004)
    limit = round((1 - CONFIDENCE) / 2 * resamples, 9)
    lo, hi = m.min(axis=1), m.max(axis=1)
    better_than = np.zeros(entries, dtype=np.int64)  # how many entries each beats
    beaten_by = np.zeros(entries, dtype=np.int64)
    for start in range(0, entries, _BLOCK):
        block = slice(start, min(start + _BLOCK, entries))
        # clearly apart: every resample of one above every resample of the other
        better_than[block] += (lo[block][:, None] > hi[None, :]).sum(axis=1)
        beaten_by[block] += (hi[block][:, None] < lo[None, :]).sum(axis=1)
    # overlapping ranges, each pair once: by lowest resampled mean, A and the entries after
    # it whose lowest mean is within A's range
    order = np.argsort(lo, kind="stable")
    sorted_lo = lo[order]
    ms = m[order]  # rows in that order: the entries near A are one slice, never copied
    uptos = np.searchsorted(sorted_lo, hi[order], side="right")
    for k, a in enumerate(order):
        upto = int(uptos[k])
        if upto <= k + 1:
            continue
        near = order[k + 1 : upto]
        # B - A >= 0 is B >= A for floats; booleans counted as bytes (2.5x the bool sum)
        b_ge = (ms[k + 1 : upto] >= ms[k]).view(np.uint8).sum(axis=1, dtype=np.int32)
        b_le = (ms[k + 1 : upto] <= ms[k]).view(np.uint8).sum(axis=1, dtype=np.int32)
        a_better = b_ge < limit  # few resamples with A <= B
        b_better = b_le < limit
        better_than[a] += int(a_better.sum())
        beaten_by[a] += int(b_better.sum())
        beaten_by[near] += a_better
        better_than[near] += b_better
    return 1 + beaten_by, entries - better_than


def ranks_of(
    vectors: Mapping[str, np.ndarray],
    counts: np.ndarray,
    higher_better: bool = True,
) -> dict[str, tuple[int, int]]:
    """Entry name -> (rank_low, rank_high) from per-video values on shared resamples."""
    names: Sequence[str] = list(vectors)
    if not names:
        return {}
    means = resampled_means(np.stack([vectors[n] for n in names]), counts)
    low, high = honest_ranks(means, higher_better)
    return {n: (int(a), int(b)) for n, a, b in zip(names, low, high, strict=True)}
