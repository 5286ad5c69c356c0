"""The question configs' shards (``text_pairwise``, ``text_choice``): each must hold
exactly the questions ``splice_dataset.question_rows`` derives from the ``text`` rows with
the default seed, row for row in the same order, so an edited, dropped or added question
is a problem (the ``text`` rows themselves are checked against the full config)."""

from __future__ import annotations

from collections.abc import Mapping

from splice_build.output.validate.layout import Shard, read_back
from splice_build.output.validate.parts import PartResult
from splice_build.output.validate.problems import Problem
from splice_dataset import QUESTION_ID, TEXT_QUESTION_CONFIGS, VIDEO_ID, columns


def check_questions(
    config: str,
    shards: list[Shard],
    asked_shards: list[Shard],
    results: Mapping[tuple[str, int], PartResult],
) -> list[Problem]:
    """A question config's shards against the questions its asked config's parts
    regenerated (``asked_shards``: that config's shards), from the parts' ``results``.
    Rows are matched by question id, so one dropped or added question is one problem, not
    one per row after it; the first row out of the regenerated order is reported too."""
    problems: list[Problem] = []
    asked = TEXT_QUESTION_CONFIGS[config][0]
    # The asked config's own problems are reported by its own checks; not twice here.
    due = {
        q[QUESTION_ID]: q
        for shard in asked_shards
        for part in shard.parts
        for q in results[part.key].questions.get(config, ())
    }
    rank = {qid: i for i, qid in enumerate(due)}
    cols = columns(config)
    last, out_of_order = -1, False
    for rel, i, row in _rows(config, shards, results, problems):
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


def _rows(config, shards, results, problems):
    """(shard, row index, row) of the config's parts in order, each shard's own problems
    and its parts' read errors (`read_back`) added to ``problems`` on the way."""
    for shard in shards:
        own, done = read_back(shard, results)
        problems += own
        for i, row in (held for result in done for held in result.held):
            yield shard.rel, i, row


__all__ = ["check_questions"]
