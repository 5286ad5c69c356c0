"""The SPLICE metric as a package, so the pipeline and tools import the same code that
`evaluate.load(splice_metric.path())` runs (the module file itself stays self-contained)."""

from pathlib import Path

from splice_metric.questions import (
    QUESTION_CONFIGS,
    parse_choice,
    parse_pairwise,
    score_questions,
)
from splice_metric.splice_metric import (
    BASELINE_SAMPLES,
    METRICS,
    PAPER_METRICS,
    RATES,
    TABLE_MAX_N,
    SpliceMetric,
    expected_random,
    parse_order,
    random_baseline,
    score,
)


def path() -> str:
    """The installed metric folder, for ``evaluate.load(splice_metric.path())`` from any
    working folder: evaluate reads a bare ``"splice_metric"`` as ``./splice_metric`` when
    that folder exists (the repository root) and as a Hub id everywhere else."""
    return str(Path(__file__).resolve().parent)


__all__ = [
    "BASELINE_SAMPLES",
    "METRICS",
    "PAPER_METRICS",
    "QUESTION_CONFIGS",
    "RATES",
    "TABLE_MAX_N",
    "SpliceMetric",
    "expected_random",
    "path",
    "parse_choice",
    "parse_order",
    "parse_pairwise",
    "random_baseline",
    "score",
    "score_questions",
]
