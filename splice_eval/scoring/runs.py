"""Prediction files as runs, scored against references: what ``splice score``, ``splice
report``, ``splice run``, VLMEvalKit's dataset class and the lmms-eval task share. THE one
reader of prediction files as runs (``read_runs``) and THE one scorer of a run
(``score_run``), whatever the file's format: an order run through ``splice_metric.score``,
a question run (pairwise, choice) through the metric's ``score_questions`` against the
questions derived again with the run's recorded seed (``references_for``).

A run is one model's answers on one config. It is scored over every reference video: a
video the run has no answer for is an invalid prediction, like a failed request or an
answer with no readable order, so a run that silently skipped hard videos cannot look
better than it is. Why answers are invalid is counted apart (``InvalidCounts``), in one
place, so every command reports the same four kinds. All numbers come from
``splice_metric.score``.

A row without an order (missing or null) is read from its ``raw_output`` with the
metric's ``parse_order``, so a file of raw answers scores as its parsed orders would, and
``OrdersFromRaw`` counts those rows so no command reads them silently. A capped raw output
(``predictions.is_capped``) is not read again: its middle is gone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import splice_formats
import splice_metric
from splice_build.errors import UserError
from splice_eval.predictions import (
    Prediction,
    cap_raw_output,
    is_capped,
    iter_located,
    read_metadata,
)
from splice_eval.run.probes import NONE as NO_PROBE
from splice_metric import score_questions


@dataclass(frozen=True)
class OrdersFromRaw:
    """Rows whose order was read from their raw output, and how many of them held one."""

    rows: int = 0
    readable: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"rows": self.rows, "readable": self.readable}

    def describe(self) -> str:
        return (
            f"{self.rows} row(s) without an order: read from raw_output by parse_order "
            f"({self.readable} readable)"
        )


def order_of(pred: Prediction) -> tuple[list[int] | None, bool]:
    """The prediction's order, and whether it was read from its raw output just now."""
    if pred.order is not None or not isinstance(pred.raw_output, str):
        return pred.order, False
    if is_capped(pred.raw_output):
        return None, False
    return splice_metric.parse_order(pred.raw_output), True


def format_of(metadata: dict[str, Any] | None) -> tuple[str, int]:
    """The question format and seed a file's answers were given in (``splice_formats``);
    files that record none answered the order task."""
    meta = metadata or {}
    seed = meta.get("question_seed", splice_formats.DEFAULT_SEED)
    return str(meta.get("format") or splice_formats.ORDER), int(seed)


def _format_field(pred: Prediction) -> dict[str, Any]:
    return {"format": pred.extra["format"]} if pred.extra.get("format") else {}


def probe_of(metadata: dict[str, Any] | None) -> str:
    """The probe a file's answers were produced under; files that record none (other tools',
    older runs) were shown the frames as sampled."""
    return str((metadata or {}).get("probe") or NO_PROBE)


@dataclass(frozen=True)
class Source:
    """A prediction file a run was read from, with its metadata line (None: it has none)
    and the build its answers were made on (``build_id``, "" when the file records none).
    ``row_builds``: each other build identity its rows carry (lmms-eval logs one on every
    sample) with the first row carrying it; ``answers``: the answer orders its rows carry
    (VLMEvalKit's tables hold the build's answer in each row), video id -> (row, order)."""

    file: str
    metadata: dict[str, Any] | None
    build_id: str = ""
    row_builds: tuple[tuple[str, int], ...] = ()
    answers: Mapping[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)


def build_of(metadata: dict[str, Any] | None, first: Prediction | None = None) -> str:
    """The build a file's answers were made on: its metadata line's ``build_id``, else the
    one its rows carry (the lmms-eval task logs it with each sample), else ""."""
    found = (metadata or {}).get("build_id") or (first.extra.get("build_id") if first else "")
    return str(found or "")


@dataclass(frozen=True)
class Run:
    """One model's answers on one config, by video id (a question format: by question id,
    each ``[option]``; rows without one keep their text in ``raw``, read against the
    question's labels when scored)."""

    orders: Mapping[str, list[int] | None]  # None: no readable order (scored invalid)
    errors: frozenset[str] = frozenset()  # videos whose request failed
    model: str = ""
    config: str = ""
    sources: tuple[Source, ...] = ()
    from_raw: OrdersFromRaw = OrdersFromRaw()
    probe: str = NO_PROBE  # the run condition (``probes``) its files' metadata records
    format: str = splice_formats.ORDER  # how it was asked (``splice_formats``)
    question_seed: int = splice_formats.DEFAULT_SEED
    raw: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        predictions: Iterable[Prediction],
        model: str = "",
        config: str = "",
        sources: tuple[Source, ...] = (),
        probe: str = NO_PROBE,
        format: str = splice_formats.ORDER,
        question_seed: int = splice_formats.DEFAULT_SEED,
    ) -> Run:
        """The run of predictions of one model and config; a video predicted twice is
        refused, as in a file. Rows without an order are read from their raw output."""
        rows = _Rows(format != splice_formats.ORDER)
        for p in predictions:
            if not rows.add(p):
                raise ValueError(f"video {p.video_id!r} has two predictions")
        return rows.run(model, config, sources, probe, format, question_seed)

    def not_in(self, references: Mapping[str, Sequence[int]]) -> list[str]:
        """Videos the run predicts that the references do not hold, sorted."""
        return sorted(set(self.orders) - set(references))


def not_in_build(run: Run, references: Mapping[str, Any], build: str = "--data") -> list[str]:
    """THE rule of ``splice score`` and ``splice report`` for a run's rows of videos (or
    questions) the build does not hold: they are left out of the scores and counted ("not
    in build"), so a run made on a larger build (the full release) scores on a subset of
    it; a run with none of its rows in the build is refused, naming the file: that is the
    wrong build (or file), and every score would be nothing but missing videos. ``build``
    names the build as the command takes it (``--data DIR``; the leaderboard's board)."""
    extra = run.not_in(references)
    if extra and len(extra) == len(run.orders):
        what = "videos" if run.format == splice_formats.ORDER else f"{run.format} questions"
        raise UserError(
            f"{run.sources[0].file if run.sources else run.model}: none of its {len(extra)} "
            f"{what} (model {run.model!r}, config {run.config!r}) is in the build: is {build} "
            "the build these predictions were made on?"
        )
    return extra


LEFT_OUT_SHOWN = 3  # ids a "not in build" line names
# The rule as ``--help`` says it (``splice score`` and ``splice report``' prediction files).
PREDICTIONS_HELP = (
    "prediction files: JSONL or CSV, or VLMEvalKit's .xlsx/.tsv/.json results; rows for "
    "videos not in the build are left out of the scores and counted as 'not in build' (a "
    "file with none in the build is refused)"
)


def left_out_words(count: int, first: Sequence[str]) -> str:
    """The "not in build" rows as a line says them: how many, and the first few ids."""
    names = ", ".join(repr(v) for v in first[:LEFT_OUT_SHOWN])
    return f"{count} row(s) for videos not in the build left out ({names}{', ...' * (count > 3)})"


@dataclass(frozen=True)
class InvalidCounts:
    """Why predictions are invalid, counted apart. The metric's ``unparsed_rate`` covers
    the first three; ``invalid_rate`` all four."""

    missing: int = 0  # no prediction for the video
    errors: int = 0  # the request failed
    unparsed: int = 0  # an answer with no readable order
    invalid: int = 0  # an order read that is not a permutation of the clips

    def as_dict(self) -> dict[str, int]:
        return {
            "missing": self.missing,
            "errors": self.errors,
            "unparsed": self.unparsed,
            "invalid": self.invalid,
        }


def invalid_counts(run: Run, references: Mapping[str, Sequence[int]]) -> InvalidCounts:
    """The four kinds of invalid prediction of a run, over every reference video."""
    counts = dict.fromkeys(("missing", "errors", "unparsed", "invalid"), 0)
    for vid, reference in references.items():
        if vid not in run.orders:
            counts["missing"] += 1
        elif vid in run.errors:
            counts["errors"] += 1
        elif run.orders[vid] is None:
            counts["unparsed"] += 1
        elif sorted(run.orders[vid]) != sorted(reference):
            counts["invalid"] += 1
    return InvalidCounts(**counts)


def references_for(run: Run, orders: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    """The references a run is scored against, from the build's answer orders (video id ->
    order): those orders for an order run, the derived questions' answers (with the labels
    they show) for a question run."""
    if run.format == splice_formats.ORDER:
        return dict(orders)
    return question_references(orders, run.format, run.question_seed)


def question_references(
    orders: Mapping[str, Sequence[int]], fmt: str, seed: int = splice_formats.DEFAULT_SEED
) -> dict[str, dict[str, Any]]:
    """Question id -> the metric's reference (option, num_options, labels), in video order."""
    out = {}
    for vid, order in orders.items():
        for q in splice_formats.questions(fmt, seed, vid, order):
            out[q.question_id] = {
                "option": q.answer,
                "num_options": len(q.options),
                "labels": list(q.shown),
            }
    return out


def _question_answer(run: Run, qid: str) -> int | str | None:
    given = run.orders.get(qid)
    if qid in run.errors:
        return None
    if given is not None:
        return given[0] if len(given) == 1 else -1  # several options: not one answer
    return run.raw.get(qid)


def score_run(
    run: Run,
    references: Mapping[str, Any],
    *,
    groups: Sequence[Hashable] | None = None,
    random_baseline: bool = False,
    confidence_level: float | None = None,
    bootstrap_iterations: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """THE score of a run, whatever its format, over every reference in the references'
    order (``references_for``: video id -> order for an order run, question id -> the
    question's reference for a question run). A video or question the run does not answer
    is scored as an invalid (wrong) answer. An order run gets the metric's full result
    (``groups`` aligned with the references, the random baseline, bootstrap intervals); a
    question run the metric's ``score_questions`` with exact chance, plus how many
    questions were ``missing`` or had request ``errors`` (it has no groups or intervals)."""
    if run.format != splice_formats.ORDER:
        if groups is not None or random_baseline or confidence_level is not None:
            raise ValueError(
                f"a {run.format} run is scored without groups, intervals or a random "
                "baseline (its chance is exact per question)"
            )
        result = score_questions(
            [_question_answer(run, q) for q in references],
            list(references.values()),
            config=run.format,
        )
        result["missing"] = sum(q not in run.orders for q in references)
        result["errors"] = sum(q in run.errors for q in references)
        return result
    return splice_metric.score(
        [run.orders.get(vid) for vid in references],
        [list(order) for order in references.values()],
        groups=groups,
        random_baseline=random_baseline,
        confidence_level=confidence_level,
        bootstrap_iterations=bootstrap_iterations,
        seed=seed,
    )


@dataclass
class _Rows:
    """A run's rows as they are read: what scoring needs of each (its order, read from the
    raw output when it has none; a question's unparsed text, capped), never the rows
    themselves, so a file is read as a stream."""

    questions: bool
    orders: dict[str, list[int] | None] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    errors: set[str] = field(default_factory=set)
    from_raw: int = 0
    readable: int = 0

    def add(self, p: Prediction) -> bool:
        """Take ``p`` in; False (and nothing taken) when its video has a row already."""
        if p.video_id in self.orders:
            return False
        if p.extra.get("error"):
            self.errors.add(p.video_id)
        if self.questions:
            self.orders[p.video_id] = p.order
            if p.order is None and isinstance(p.raw_output, str):
                self.raw[p.video_id] = cap_raw_output(p.raw_output)[0] or ""
            return True
        self.orders[p.video_id], parsed = order_of(p)
        self.from_raw += parsed
        self.readable += parsed and self.orders[p.video_id] is not None
        return True

    def run(self, model: str, config: str, sources: tuple[Source, ...], probe: str,
            format: str, question_seed: int) -> Run:  # fmt: skip
        counted = OrdersFromRaw(self.from_raw, self.readable)
        return Run(
            self.orders,
            frozenset(self.errors),
            model,
            config,
            sources,
            counted,
            probe,
            format,
            question_seed,
            {k: v for k, v in self.raw.items() if not is_capped(v)},
        )


@dataclass
class _Group:
    rows: _Rows
    sources: list[Source] = field(default_factory=list)


def read_runs(
    paths: Sequence[str | Path],
    *,
    per_file: bool,
    orders: Mapping[str, Sequence[int]] | None = None,
    check: Callable[[list[Run]], Any] | None = None,
    build: str = "--data",
) -> list[Run]:
    """The runs in prediction files, in the order they first appear: one per (file, model,
    config, probe, format) with ``per_file``, else one per (model, config, probe, format)
    across files. A video predicted twice within a run, or a file without predictions,
    raises naming the file. ``check`` sees the runs first (``check_builds``: another
    build's videos are another build's, before they are videos not in this one); then,
    given the build's answer ``orders``, each run's rows not in the build follow
    `not_in_build` (left out and counted; none in it: refused)."""
    runs = _runs_in(paths, per_file=per_file)
    if check is not None:
        check(runs)
    for run in runs if orders is not None else ():
        not_in_build(run, references_for(run, orders), build)
    return runs


def _runs_in(paths: Sequence[str | Path], *, per_file: bool) -> list[Run]:
    groups: dict[tuple[str, str, str, str, tuple[str, int]], _Group] = {}
    for path in map(Path, paths):
        metadata = read_metadata(path)
        first: Prediction | None = None
        row_builds: dict[str, int] = {}
        answers: dict[str, tuple[int, tuple[int, ...]]] = {}
        touched: list[_Group] = []
        for lineno, pred in iter_located(path):
            first = first or pred
            file = str(path) if per_file else ""
            # a row may say its format itself (the lmms-eval task's records do)
            asked = format_of({**(metadata or {}), **_format_field(pred)})
            key = (file, pred.model, pred.config, probe_of(metadata), asked)
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(_Rows(asked[0] != splice_formats.ORDER))
            if not group.rows.add(pred):
                raise UserError(
                    f"{path}: video {pred.video_id!r} has two predictions for model "
                    f"{pred.model!r}, config {pred.config!r}"
                )
            if not touched or all(g is not group for g in touched):
                touched.append(group)
            if pred.extra.get("build_id"):
                row_builds.setdefault(str(pred.extra["build_id"]), lineno)
            carried = _answer_of(pred.extra.get("answer"))
            if carried is not None:
                answers[pred.video_id] = (lineno, carried)
        if first is None:
            raise UserError(f"{path}: no predictions")
        source = Source(
            str(path), metadata, build_of(metadata, first), tuple(row_builds.items()), answers
        )
        for group in touched:
            group.sources.append(source)
    return [
        g.rows.run(model, config, tuple(g.sources), probe, fmt, seed)
        for (_, model, config, probe, (fmt, seed)), g in groups.items()
    ]


def _answer_of(cell: Any) -> tuple[int, ...] | None:
    """The answer order a row carries (VLMEvalKit's ``answer`` column: the build's answer
    as JSON, ``{"order": [...]}`` or a list), or None when it carries none readable."""
    if isinstance(cell, str):
        try:
            cell = json.loads(cell)
        except (json.JSONDecodeError, RecursionError):
            return None
    if isinstance(cell, dict):
        cell = cell.get("order")
    if isinstance(cell, list) and cell and all(type(x) is int for x in cell):
        return tuple(cell)
    return None
