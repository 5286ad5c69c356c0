"""Honest ranks from the paired bootstrap: ties where the videos cannot tell entries apart,
an order where they can, the same ranks from the same seed."""

from __future__ import annotations

import numpy as np

from splice_eval.leaderboard import statistics as stats


def test_paired_ranks_tie_what_the_videos_cannot_separate():
    rng = np.random.default_rng(1)
    base = (rng.random(400) < 0.5).astype(float)
    flipped = base.copy()
    flipped[:3] = 1 - flipped[:3]  # three videos differ: within noise
    vectors = {
        "best": np.ones(400),  # every video right
        "a": base,
        "a_twin": base.copy(),
        "a_near": flipped,
        "worst": np.zeros(400),
    }
    counts = stats.resample_counts(400, 1000, seed=0)
    ranks = stats.ranks_of(vectors, counts)
    assert ranks["best"] == (1, 1) and ranks["worst"] == (5, 5)
    assert ranks["a"] == ranks["a_twin"] == ranks["a_near"] == (2, 4)
    assert stats.ranks_of(vectors, stats.resample_counts(400, 1000, seed=0)) == ranks
    # lower is better (edit distance): the order turns round
    low = stats.ranks_of(vectors, counts, higher_better=False)
    assert low["worst"] == (1, 1) and low["best"] == (5, 5)


def test_paired_comparison_sees_a_small_consistent_gain():
    """A beats B on 3% of videos and never loses: their intervals overlap, the paired
    bootstrap still orders them (the reason ranks are paired)."""
    rng = np.random.default_rng(2)
    b = (rng.random(1000) < 0.5).astype(float)
    a = b.copy()
    a[np.flatnonzero(b == 0)[:30]] = 1.0
    counts = stats.resample_counts(1000, 1000, seed=0)
    low, high = stats.intervals(stats.resampled_means(np.stack([a, b]), counts))
    assert low[0] < high[1]  # the intervals overlap
    assert stats.ranks_of({"a": a, "b": b}, counts) == {"a": (1, 1), "b": (2, 2)}


def test_ranks_match_the_definition_pair_by_pair():
    """The pruned computation against the rule applied to every pair: A better than B when
    fewer than 2.5% of the resamples have A <= B."""
    rng = np.random.default_rng(3)
    skills = rng.uniform(0.2, 0.8, 30)
    vectors = {f"e{k}": (rng.random(300) < p).astype(float) for k, p in enumerate(skills)}
    counts = stats.resample_counts(300, 1000, seed=0)
    means = stats.resampled_means(np.stack(list(vectors.values())), counts)
    better = [[(means[a] <= means[b]).sum() < 25 for b in range(30)] for a in range(30)]
    expected = {
        name: (1 + sum(better[b][a] for b in range(30)), 30 - sum(better[a]))
        for a, name in enumerate(vectors)
    }
    assert stats.ranks_of(vectors, counts) == expected
