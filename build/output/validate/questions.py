"""The question configs' shards (``text_pairwise``, ``text_choice``): each must hold
exactly the questions ``splice_dataset.question_rows`` derives from the ``text`` rows with
the default seed, row for row in the same order, so an edited, dropped or added question
is a problem (the ``text`` rows themselves are checked against the full config)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from splice_build.output.shards import ShardInfo
from splice_build.output.validate.layout import config_rows
from splice_build.output.validate.problems import Problem
from splice_dataset import QUESTION_ID, TEXT_QUESTION_CONFIGS, VIDEO_ID, columns, question_rows


def expected_questions(
    config: str, asked_rows: Iterator[tuple[str, int, dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """The question rows a question config must hold, regenerated from its asked config's
    rows (``config_rows`` of that config) in their order."""
    asked, fmt = TEXT_QUESTION_CONFIGS[config]
    for _, _, row in asked_rows:
        yield from question_rows(row, asked, fmt)


def check_questions(
    config: str,
    paths: list[Path],
    asked_paths: list[Path],
    infos: list[ShardInfo],
) -> list[Problem]:
    """A question config's shards against the questions regenerated from the shards of the
    config it asks (``asked_paths``); the shards that open are added to ``infos``. Rows are
    matched by question id, so one dropped or added question is one problem, not one per
    row after it; the first row out of the regenerated order is reported too."""
    problems: list[Problem] = []
    asked = TEXT_QUESTION_CONFIGS[config][0]
    # The asked config's own problems are reported by its own checks; not twice here.
    rows = config_rows(asked, asked_paths, [], [])
    due = {q[QUESTION_ID]: q for q in expected_questions(config, rows)}
    rank = {qid: i for i, qid in enumerate(due)}
    cols = columns(config)
    last, out_of_order = -1, False
    for rel, i, row in config_rows(config, paths, problems, infos):
        qid, vid = row.get(QUESTION_ID), row.get(VIDEO_ID)
        want = due.pop(qid, None)
        if want is None:
            what = "seen twice" if qid in rank else f"not a question of the {asked} rows"
            problems.append(Problem(rel, f"question {qid!r} {what}", i, vid, QUESTION_ID))
            continue
        if rank[qid] < last and not out_of_order:
            out_of_order = True
            problems.append(Problem(rel, f"question {qid!r} out of the regenerated order", i, vid))
        last = max(last, rank[qid])
        for col in cols:
            if row.get(col) != want[col]:
                problems.append(
                    Problem(rel, f"differs from the question the {asked} row gives", i, vid, col)
                )
    if due:
        first = next(iter(due))
        problems.append(
            Problem(config, f"{len(due)} question(s) of the {asked} rows missing, from {first!r}")
        )
    return problems


__all__ = ["check_questions", "expected_questions"]
