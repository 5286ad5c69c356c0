"""The question configs' shards (``text_pairwise``, ``text_choice``): each must hold
exactly the questions ``splice_dataset.question_rows`` derives from the ``text`` rows with
the default seed, row for row in the same order, so an edited, dropped or added question
is a problem (the ``text`` rows themselves are checked against the full config).

One task per question config (`QuestionsCheck`, run by an executor like the parts): it
streams the asked config's rows into the questions due and then the config's rows against
them, so only the due questions of one config are held, in one process, for one task."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from splice_build.output.identity import RowsDigest, cell_digest, row_digest
from splice_build.output.validate.parts import PartResult, shard_rows
from splice_build.output.validate.problems import Problem
from splice_dataset import QUESTION_ID, TEXT_QUESTION_CONFIGS, VIDEO_ID, columns, question_rows


@dataclass(frozen=True)
class QuestionsCheck:
    """A question config's shards against the questions of its asked config's shards."""

    config: str
    shards: tuple[tuple[str, str], ...]  # (path, rel) of the config's shards that opened
    asked: tuple[tuple[str, str], ...]  # (path, rel) of the asked config's shards that opened

    @property
    def key(self) -> tuple[str, int]:
        return (self.config, -1)

    def check(self) -> PartResult:
        digests: dict[str, RowsDigest] = {}
        problems = self.problems(digests)
        return PartResult(
            self.key,
            problems=tuple(problems),
            digests=tuple((name, d.hexdigest()) for name, d in digests.items()),
        )

    def problems(self, digests: dict[str, RowsDigest] | None = None) -> list[Problem]:
        """Rows are matched by question id, so one dropped or added question is one
        problem, not one per row after it; the first row out of the regenerated order is
        reported too."""
        problems: list[Problem] = []
        asked, fmt = TEXT_QUESTION_CONFIGS[self.config]
        # The asked config's own problems are reported by its own checks; not twice here.
        due = {q[QUESTION_ID]: q for q in _due(self.asked, asked, fmt)}
        rank = {qid: i for i, qid in enumerate(due)}
        cols = columns(self.config)
        last, out_of_order = -1, False
        digests = {} if digests is None else digests
        whole = digests.setdefault(self.config, RowsDigest())
        for rel, i, row in _rows(self.shards, problems):
            # the rows' digests (`identity`), shard by shard and for the whole config
            cells = row_digest({c: cell_digest(row.get(c)) for c in cols}, cols)
            digests.setdefault(rel, RowsDigest()).add(cells)
            whole.add(cells)
            qid, vid = row.get(QUESTION_ID), row.get(VIDEO_ID)
            want = due.pop(qid, None)
            if want is None:
                what = "seen twice" if qid in rank else f"not a question of the {asked} rows"
                problems.append(Problem(rel, f"question {qid!r} {what}", i, vid, QUESTION_ID))
                continue
            if rank[qid] < last and not out_of_order:
                out_of_order = True
                problems.append(
                    Problem(rel, f"question {qid!r} out of the regenerated order", i, vid)
                )
            last = max(last, rank[qid])
            problems += [
                Problem(rel, f"differs from the question the {asked} row gives", i, vid, col)
                for col in cols
                if row.get(col) != want[col]
            ]
        if due:
            first = next(iter(due))
            problems.append(
                Problem(
                    self.config,
                    f"{len(due)} question(s) of the {asked} rows missing, from {first!r}",
                )
            )
        return problems


def _due(shards: tuple[tuple[str, str], ...], asked: str, fmt: str) -> Iterator[dict[str, Any]]:
    for _, _, row in _rows(shards, []):
        yield from question_rows(row, asked, fmt)


def _rows(
    shards: tuple[tuple[str, str], ...], problems: list[Problem]
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path, rel in shards:
        for i, row in shard_rows(path, rel, problems):
            yield rel, i, row


__all__ = ["QuestionsCheck"]
