"""Runs of the question formats (``splice_formats``: pairwise, choice) scored against a
build: what ``splice run``, ``splice score`` and ``splice report`` share for them.

The questions are derived again from the build's answer orders with the run's recorded
question seed, so a file is scored against exactly the questions it was asked. Every
question counts: one the run has no answer for, a failed request or an unread answer is
wrong (counted apart, as for the order task). Numbers come from the metric's
``score_questions``; chance is exact per question (0.5 per pair, 1/k per k options).

Scores come from ``runs.score_run`` (the one scorer of a run, whatever its format); this
module holds what only the question formats have, and their tables.

Pairwise consistency: how often a model's pairwise answers agree with the order it gave
for the same video in its order run (same model and config), over the pairs where both
exist. It needs no ground truth: a model that orders the clips as it judges the pairs
agrees with itself at 1.0; two independent random runs agree at 0.5.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import splice_formats
from splice_build.output.card_tables import markdown_table
from splice_eval.scoring.runs import Run, question_references, references_for, score_run


def consistency(pairs: Run, order: Run, orders: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    """Pairwise consistency of one model (see the module docstring): the share of pairs,
    among those it answered with one of the two clips and whose video it ordered with a
    permutation, where the pair answer agrees with its own order."""
    refs = question_references(orders, splice_formats.PAIRWISE, pairs.question_seed)
    agree = total = 0
    for qid, ref in refs.items():
        given = pairs.orders.get(qid)
        ordered = order.orders.get(splice_formats.video_of(qid))
        labels = ref["labels"]
        if not given or given[0] not in (1, 2) or ordered is None:
            continue
        if sorted(ordered) != sorted(orders[splice_formats.video_of(qid)]):
            continue
        first = 1 if ordered.index(labels[0]) < ordered.index(labels[1]) else 2
        agree += first == given[0]
        total += 1
    return {
        "model": pairs.model,
        "config": pairs.config,
        "pairs": total,
        "consistency": agree / total if total else None,
    }


def consistencies(runs: Sequence[Run], orders: Mapping[str, Sequence[int]]) -> list[dict]:
    """Every model's pairwise consistency, for each pairwise run with an order run of the
    same model and config."""
    by_key = {(r.model, r.config, r.probe): r for r in runs if r.format == splice_formats.ORDER}
    return [
        consistency(r, by_key[(r.model, r.config, r.probe)], orders)
        for r in runs
        if r.format == splice_formats.PAIRWISE and (r.model, r.config, r.probe) in by_key
    ]


_COLUMNS = ("count", "accuracy", "stderr", "chance", "unparsed_rate", "invalid_rate")


def table_rows(results: Sequence[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """One row per run: name, format, questions, accuracy and its standard error (a run's
    sampling error: random answers land within about two of chance), exact chance, the
    rates."""
    return [
        [name, r["format"], str(r["count"]), *(f"{r[c]:.4f}" for c in _COLUMNS[1:])]
        for name, r in results
    ]


def render(results: Sequence[tuple[str, dict[str, Any]]], pairs: Sequence[dict]) -> str:
    """The question runs as a Markdown table, then each model's pairwise consistency."""
    head = ["run", "format", "questions", "accuracy", "± s.e.", "chance", "unparsed", "invalid"]
    parts = [markdown_table(head, table_rows(results))]
    for name, r in results:
        wrong = [(r["missing"], "without an answer"), (r["errors"], "request errors")]
        found = [f"{n} {what}" for n, what in wrong if n]
        if found:
            parts.append(f"{name}: scored as wrong: " + "; ".join(found))
    if pairs:
        rows = [
            [f"{c['model']}/{c['config']}", str(c["pairs"]), _rate(c["consistency"])] for c in pairs
        ]
        about = (
            "Pairwise consistency (pair answers agreeing with the same model's own order of "
            "the video; two unrelated random answers agree half the time):"
        )
        parts.append(
            about + "\n\n" + markdown_table(["model/config", "pairs", "consistency"], rows)
        )
    return "\n\n".join(parts)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def summarize(run: Run, scores: dict[str, Any], out: Path, path: Path) -> str:
    """``splice run``'s end for a question run: the scores in full to ``path``, a table."""
    report = {"model": run.model, "config": run.config, "format": run.format, "scores": scores}
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    name = f"{out.name}:{run.model}/{run.config}"
    return f"{render([(name, {**scores, 'format': run.format})], [])}\n\nall scores: {path}"


def split_runs(runs: Sequence[Run]) -> tuple[list[Run], list[Run]]:
    """(order runs, question runs), each in the given order."""
    order = [r for r in runs if r.format == splice_formats.ORDER]
    return order, [r for r in runs if r.format != splice_formats.ORDER]


def report_section(
    runs: Sequence[Run], orders: Mapping[str, Sequence[int]]
) -> tuple[dict[str, Any], str]:
    """``splice report``'s part for the question formats: every question run's scores and
    each model's pairwise consistency, as JSON and as a Markdown section ("" when there
    are no question runs)."""
    asked = split_runs(runs)[1]
    if not asked:
        return {}, ""
    scored = [
        (f"{r.model}/{r.config}", {**score_run(r, references_for(r, orders)), "format": r.format})
        for r in asked
    ]
    pairs = consistencies(runs, orders)
    data = {"runs": [{"run": name, **s} for name, s in scored], "pairwise_consistency": pairs}
    head = (
        "\n## Question formats\n\nThe same videos asked as pairwise or multiple-choice "
        "questions (`splice run --format`); chance is exact per question.\n\n"
    )
    return data, head + render(scored, pairs) + "\n"
