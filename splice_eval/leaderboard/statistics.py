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

import math
from collections.abc import Mapping, Sequence

import numpy as np

CONFIDENCE = 0.95
MIN_RESAMPLES = 1000
_BLOCK = 64  # entries compared at once: (block x entries x resamples) booleans


def resample_counts(videos: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` x ``videos`` float32 counts of each video in a bootstrap resample (rows
    sum to ``videos``), drawn from ``seed`` alone."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, videos, size=(resamples, videos), dtype=np.int64)
    picks += np.arange(resamples, dtype=np.int64)[:, None] * videos
    counts = np.bincount(picks.ravel(), minlength=resamples * videos)
    return counts.reshape(resamples, videos).astype(np.float32)


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
    limit = (1 - CONFIDENCE) / 2 * resamples  # fewer A <= B resamples than this: A better
    lo, hi = m.min(axis=1), m.max(axis=1)
    better_than = np.zeros(entries, dtype=np.int64)  # how many entries each beats
    beaten_by = np.zeros(entries, dtype=np.int64)
    order = np.argsort(lo)
    sorted_lo = lo[order]
    for start in range(0, entries, _BLOCK):
        block = np.arange(start, min(start + _BLOCK, entries))
        # clearly better: every resample of A above every resample of B
        better_than[block] += (lo[block][:, None] > hi[None, :]).sum(axis=1)
        beaten_by[block] += (hi[block][:, None] < lo[None, :]).sum(axis=1)
        for a in block:
            # the others whose ranges overlap A's: lo_B <= hi_A and hi_B >= lo_A
            upto = np.searchsorted(sorted_lo, hi[a], side="right")
            near = order[:upto]
            near = near[(hi[near] >= lo[a]) & (near != a)]
            if not len(near):
                continue
            a_not_above = (m[a][None, :] <= m[near]).sum(axis=1)  # resamples with A <= B
            b_not_above = (m[near] <= m[a][None, :]).sum(axis=1)
            better_than[a] += int((a_not_above < limit).sum())
            beaten_by[a] += int((b_not_above < limit).sum())
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
