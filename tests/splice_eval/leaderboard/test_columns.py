"""The columns are declared once: the docs list each one, and the metric names are the
metric's own."""

from __future__ import annotations

from splice_eval.leaderboard import columns as col
from splice_metric import PAPER_METRICS
from tests.support.paths import REPO


def test_docs_list_every_column_and_metrics_are_the_metrics():
    docs = (REPO / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    for column in col.COLUMNS:
        name = f"`<config>.{column.metric}`" if column.config else f"`{column.name}`"
        assert name in docs, name
    assert col.METRICS == PAPER_METRICS
