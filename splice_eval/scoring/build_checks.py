"""Whether prediction files were made on the build they are scored against: the one
check ``splice score``, ``splice report`` and the leaderboard share. A file says its build
three ways: its metadata line's ``build_id``, the identity each of its rows carries (the
lmms-eval task logs one per sample), and the answers a VLMEvalKit table carries (another
build's shuffles are another build, whatever the file records). The runs are read by
``runs.read_runs``; this module only holds their sources to the build.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from splice_build.errors import UserError
from splice_eval.scoring.runs import Run, Source


def short_id(build_id: str) -> str:
    """A build's identity as messages name it (16 of its 64 hex digits, like a short git
    hash); "" stays "(none)"."""
    return build_id[:16] if build_id else "(none)"


def add_allow_other_build(parser: argparse.ArgumentParser) -> None:
    """The one ``--allow-other-build`` of ``score`` and ``report`` (see `check_builds`)."""
    parser.add_argument(
        "--allow-other-build",
        action="store_true",
        help="score files made on another build than --data's (refused otherwise); the "
        "output then says so on every file it concerns",
    )


def check_builds(
    runs: Sequence[Run],
    data: str | Path,
    data_build: str,
    *,
    allow_other: bool = False,
    orders: Mapping[str, Sequence[int]] | None = None,
) -> list[str]:
    """Whether each run's files were made on the build they are scored against (``data``,
    whose card's identity is ``data_build`` and whose answer ``orders`` are given): a file
    made on another build is refused (UserError naming both builds, and the row when a row
    says so) unless ``allow_other``; what could not be checked and what was overridden come
    back as lines to print with the scores. Every row's identity is checked, not the first
    row's, and the answers a file carries (a VLMEvalKit table's ``answer``) are held to
    ``orders``: another build's shuffles are another build, whatever it records."""
    notes: list[str] = []
    seen: set[str] = set()
    for source in (s for run in runs for s in run.sources):
        if source.file in seen:
            continue
        seen.add(source.file)
        others = _other_builds(source, data_build)
        if not source.build_id and not source.row_builds and not source.answers:
            notes.append(
                f"{source.file}: records no build identity (another tool's or an older "
                f"file): not checked that its answers were made on --data {data}"
            )
        answers = _other_answers(source, orders or {})
        for what in [*(f"{w}, but --data {data} is build {short_id(data_build)}" for w in others),
                     *(f"{w} --data {data}'s" for w in answers)]:  # fmt: skip
            if not allow_other:
                raise UserError(
                    f"{what}: its answers belong to another build (another seed, other clips "
                    "or rows); score it against its own build, or pass --allow-other-build"
                )
            notes.append(f"SCORED AGAINST ANOTHER BUILD (--allow-other-build): {what}")
    if not data_build and any(s.build_id for run in runs for s in run.sources):
        notes.append(
            f"--data {data}: its card records no build identity: no file was checked against it"
        )
    return notes


def _other_builds(source: Source, data_build: str) -> list[str]:
    """The builds other than ``data_build`` a file says it was made on, in words: its
    metadata's or first row's identity, then the first row of each other one its rows
    carry (a file concatenated from two builds' logs). With no ``data_build`` to hold them
    to, a file of two builds still is one too many."""
    found = [(source.build_id, 0)] if source.build_id else []
    found += [(b, row) for b, row in source.row_builds if b != source.build_id]
    if not data_build:
        found = found[1:] if len({b for b, _ in found}) > 1 else []
    return [
        f"{source.file}{f':{row}' if row else ''} was made on build {short_id(build)}"
        for build, row in found
        if build != data_build
    ]


def _other_answers(source: Source, orders: Mapping[str, Sequence[int]]) -> list[str]:
    """The first row whose answer (a table's ``answer`` column) is not the build's, in
    words; one is enough to say the table's shuffles are another build's."""
    for video, (row, answer) in source.answers.items():
        if video in orders and list(answer) != list(orders[video]):
            return [
                f"{source.file}:{row}: its answer for video {video!r} is {list(answer)}, not "
                f"{list(orders[video])} as in"
            ]
    return []
