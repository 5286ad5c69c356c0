"""The SPLICE metric as a package, so the pipeline and tools import the same code that
`evaluate.load("splice_metric")` runs (the module file itself stays self-contained)."""

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

__all__ = [
    "BASELINE_SAMPLES",
    "METRICS",
    "PAPER_METRICS",
    "RATES",
    "TABLE_MAX_N",
    "SpliceMetric",
    "expected_random",
    "parse_order",
    "random_baseline",
    "score",
]
