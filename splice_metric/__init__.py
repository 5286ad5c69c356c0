"""The SPLICE metric as a package, so the pipeline and tools import the same code that
`evaluate.load(splice_metric.path())` runs (the module file itself stays self-contained).

The readers of answers need only the standard library; the metric module imports `evaluate`
and `datasets` (seconds), so its names load on first use, and a tool that only reads
answers never pays for them."""

import hashlib
from importlib import import_module
from pathlib import Path
from typing import Any

from splice_metric.order_parser import parse_order
from splice_metric.questions import (
    QUESTION_CONFIGS,
    parse_choice,
    parse_pairwise,
    score_questions,
)

_FROM_METRIC = (
    "BASELINE_SAMPLES",
    "METRICS",
    "PAPER_METRICS",
    "RATES",
    "TABLE_MAX_N",
    "SpliceMetric",
    "expected_random",
    "random_baseline",
    "score",
)


def __getattr__(name: str) -> Any:
    if name not in _FROM_METRIC:
        raise AttributeError(f"module 'splice_metric' has no attribute {name!r}")
    return getattr(import_module(".splice_metric", __name__), name)


def path() -> str:
    """The installed metric folder, for ``evaluate.load(splice_metric.path())`` from any
    working folder: evaluate reads a bare ``"splice_metric"`` as ``./splice_metric`` when
    that folder exists (the repository root) and as a Hub id everywhere else."""
    return str(Path(__file__).resolve().parent)


__all__ = [
    *_FROM_METRIC,
    "QUESTION_CONFIGS",
    "parse_choice",
    "parse_order",
    "parse_pairwise",
    "path",
    "score_questions",
]


# The files whose code decides a score: the metric, its order parser (with its readers) and its
# question scorer.
_SCORING_FILES = (
    "splice_metric.py",
    "order_parser.py",
    "order_commitment.py",
    "order_json.py",
    "order_lists.py",
    "order_positions.py",
    "order_statements.py",
    "order_words.py",
    "questions.py",
)


def metric_version() -> str:
    """The installed metric's fingerprint (16 hex digits of the SHA-256 of the files that
    decide a score): a leaderboard records it beside its scores and says so in every view
    when the installed metric is another (``splice leaderboard rescore``). Any edit to the
    metric, even one that changes no number, is another version: what is compared is the
    code, not a guess of its effect."""
    digest = hashlib.sha256()
    folder = Path(__file__).resolve().parent
    for name in _SCORING_FILES:
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]
