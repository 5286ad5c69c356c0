"""What a probe changes: each model's probed runs against its ``none`` run, metric by metric,
with a paired bootstrap interval (the same videos resampled for both runs), and one plain
sentence per model and probe saying what the change suggests.

Pairing by video matters: two runs of one model on the same videos are strongly
correlated, so intervals of the two means side by side would overlap long after the
difference itself is clear. Per-video scores come from the metric (``splice_metric.score``
broken down by video id), so a video a run misses is scored invalid here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

import splice_metric  # its metric names load on first use: they import evaluate (and torch)
from splice_eval.run.probes import NONE
from splice_eval.scoring.runs import Run, score_run

SENTENCE_METRIC = "hamming_accuracy"
CONFIDENCE = 0.95
# What each probe's result suggests: (the change is within noise, it is not).
READINGS = {
    "single-frame": (
        "this model hardly uses motion within a clip",
        "this model uses motion within a clip",
    ),
    "frame-shuffle": (
        "the order of frames within a clip hardly matters to this model",
        "this model uses the order of frames within a clip",
    ),
    "reversed": (
        "this model hardly uses which way time runs within a clip",
        "this model uses which way time runs within a clip",
    ),
    "blind": (
        "this model's score hardly rests on what the clips show: the prompt alone does as well",
        "this model uses what the clips show",
    ),
}
# A probe that reliably raises the score: taking the clips' content away helped, which no
# reading of what the model uses explains; the none run is the one to look at.
GAIN_READING = (
    "the probed run scored higher beyond noise: this model does not use what the probe takes "
    "away, and its none run may be the one to check"
)
METRIC_WORDS = {
    "binary_accuracy": "binary",
    "hamming_accuracy": "hamming",
    "lcs_ratio": "LCS",
    "edit_distance": "edit distance",
}


@dataclass(frozen=True)
class Change:
    """One metric of a probed run against the same model's ``none`` run: ``delta`` is
    probed minus none, ``lo``/``hi`` its paired bootstrap interval."""

    metric: str
    none: float
    probed: float
    delta: float
    lo: float
    hi: float


@dataclass(frozen=True)
class ProbeComparison:
    model: str
    config: str
    probe: str
    videos: int
    changes: tuple[Change, ...]

    def change(self, metric: str) -> Change:
        return next(c for c in self.changes if c.metric == metric)


def per_video(run: Run, references: Mapping[str, Sequence[int]]) -> dict[str, np.ndarray]:
    """Each metric's value per reference video (in the references' order), from the metric."""
    result = score_run(run, references, groups=list(references))
    cells = [result["by_group"][vid] for vid in references]
    return {
        m: np.array([cell[m] for cell in cells], dtype=float) for m in splice_metric.PAPER_METRICS
    }


def paired_interval(
    diffs: np.ndarray, iterations: int, rng: np.random.Generator
) -> tuple[float, float]:
    """The percentile interval of the mean difference, resampling videos with replacement."""
    picks = rng.integers(0, len(diffs), size=(iterations, len(diffs)))
    means = diffs[picks].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def compare(
    probed: Run,
    none: Run,
    references: Mapping[str, Sequence[int]],
    *,
    iterations: int = 1000,
    seed: int = 0,
) -> ProbeComparison:
    """A probed run against the ``none`` run of the same model and config."""
    a, b = per_video(none, references), per_video(probed, references)
    rng = np.random.default_rng(seed)
    changes = []
    for metric in splice_metric.PAPER_METRICS:
        diffs = b[metric] - a[metric]
        lo, hi = paired_interval(diffs, iterations, rng)
        changes.append(
            Change(
                metric,
                float(a[metric].mean()),
                float(b[metric].mean()),
                float(diffs.mean()),
                lo,
                hi,
            )
        )
    return ProbeComparison(
        probed.model, probed.config, probed.probe, len(references), tuple(changes)
    )


def compare_runs(
    runs: Sequence[Run], references: Mapping[str, Sequence[int]], **options: int
) -> list[ProbeComparison]:
    """Every probed run against the first ``none`` run of its model and config (runs
    without one are left out: there is nothing to compare them with)."""
    baselines: dict[tuple[str, str], Run] = {}
    for run in runs:
        if run.probe == NONE:
            baselines.setdefault((run.model, run.config), run)
    out = []
    for run in runs:
        base = baselines.get((run.model, run.config))
        if run.probe != NONE and base is not None:
            out.append(compare(run, base, references, **options))
    return out


def sentence(comparison: ProbeComparison, metric: str = SENTENCE_METRIC) -> str:
    """One plain sentence: what the probe costs in ``metric`` and what that suggests. A
    cost is none minus probed (for edit distance, where lower is better, probed minus
    none), so a positive cost is a loss; a negative one is worded as what the probe
    gains, with its interval, so no line reads "costs -0.09"."""
    c = comparison.change(metric)
    sign = 1 if metric == "edit_distance" else -1
    cost = sign * c.delta + 0.0  # + 0.0: no "-0.00" for a change of nothing
    lo, hi = sorted((sign * c.lo + 0.0, sign * c.hi + 0.0))
    reading = READINGS[comparison.probe][0 if lo <= 0 else 1]
    verb = "costs"
    if round(cost, 2) < 0:  # the probed run scored better: said as a gain, never "costs -0.09"
        verb, cost, lo, hi = "gains", -cost, -hi + 0.0, -lo + 0.0
        if lo > 0:
            reading = GAIN_READING
    return (
        f"{comparison.model} ({comparison.config}): {comparison.probe} {verb} {cost:.2f} "
        f"{METRIC_WORDS[metric]} (interval {lo:.2f} to {hi:.2f}): {reading}"
    )


def table_rows(comparisons: Sequence[ProbeComparison]) -> list[list[str]]:
    """One row per probed run: model, config, probe, then per metric "none -> probed
    (delta [lo, hi])"."""
    rows = []
    for cmp in comparisons:
        cells = [
            f"{c.none:.4f} → {c.probed:.4f} ({c.delta:+.4f} [{c.lo:+.4f}, {c.hi:+.4f}])"
            for c in cmp.changes
        ]
        rows.append([cmp.model, cmp.config, cmp.probe, *cells])
    return rows


def markdown_section(comparisons: Sequence[dict]) -> list[str]:
    """The report's probe section, from ``report.json``'s ``probes`` entries."""
    from splice_build.output.card_tables import markdown_table

    if not comparisons:
        return []
    objects = [
        ProbeComparison(
            c["model"],
            c["config"],
            c["probe"],
            c["videos"],
            tuple(Change(**x) for x in c["changes"]),
        )
        for c in comparisons
    ]
    return [
        "## Probes: what each model's score rests on",
        "",
        "Each probed run against the same model's `none` run on the same videos: none → "
        "probed (probed − none [paired bootstrap 95% interval, videos resampled for both "
        "runs]). Edit distance is lower-is-better.",
        "",
        markdown_table(
            ("Model", "Config", "Probe", *(METRIC_WORDS[m] for m in splice_metric.PAPER_METRICS)),
            table_rows(objects),
        ),
        "",
        *(f"- {sentence(c)}" for c in objects),
    ]
