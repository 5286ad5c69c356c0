"""``splice score``: score prediction files against a build's answers.

The answers come from the build's text shards (small, no video bytes), so scoring never
touches the clips. Every (file, model, config) in the prediction files is one run; a video
of the build that a run has no prediction for counts as an invalid prediction, so a run
that silently skipped hard videos cannot look better than it is.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import splice_dataset as sd
import splice_formats
import splice_metric  # its metric names load on first use: they import evaluate (and torch)
from splice_build.cli import float_in, int_at_least
from splice_build.errors import UserError, as_user_error, output_path
from splice_build.output.card_reader import read_card
from splice_eval import data_source
from splice_eval.builddata import NotABuild, read_meta
from splice_eval.predictions import describe_metadata
from splice_eval.scoring import question_scores
from splice_eval.scoring.build_checks import add_allow_other_build, check_builds
from splice_eval.scoring.probe_effects import ProbeComparison, compare_runs, sentence
from splice_eval.scoring.runs import (
    LEFT_OUT_SHOWN,
    NO_PROBE,
    PREDICTIONS_HELP,
    OrdersFromRaw,
    Run,
    invalid_counts,
    left_out_words,
    not_in_build,
    read_runs,
    references_for,
    score_run,
)

# Table column headers by rate name (the columns follow RATES' order).
_COLUMNS = {
    "binary_accuracy": "binary",
    "hamming_accuracy": "hamming",
    "lcs_ratio": "lcs",
    "edit_distance": "edit",
    "kendall_tau": "tau",
    "pairwise_accuracy": "pairwise",
    "invalid_rate": "invalid",
    "unparsed_rate": "unparsed",
}


@dataclass(frozen=True)
class Answers:
    """The build's ground truth, one entry per video, in video_id order."""

    references: dict[str, list[int]]  # video id -> answer order
    columns: dict[str, list[Any]]  # num_clips, domain, task, ... aligned with references


def read_answers(build_dir: str | Path) -> Answers:
    """Answers from the build's text shards, read by `builddata.read_meta` (which also
    refuses a repeated video or one without an answer order)."""
    try:
        meta = read_meta(build_dir)
    except NotABuild:
        raise UserError(
            f"{build_dir}: no text shards matching {sd.data_files_pattern('text')} "
            "(is this a SPLICE build folder?)"
        ) from None
    videos = [meta[v] for v in sorted(meta)]
    return Answers(
        references={v.video_id: list(v.order) for v in videos},
        columns={
            sd.NUM_CLIPS: [v.num_clips for v in videos],
            sd.DOMAIN: [v.domain for v in videos],
            sd.TASK: [v.task for v in videos],
        },
    )


def score_questions_of(runs: Sequence[Run], answers: Answers) -> list[dict[str, Any]]:
    """The question-format runs scored over every question the build asks with their seed."""
    out = []
    for run in runs:
        scores = score_run(run, references_for(run, answers.references))
        source = run.sources[0]
        head = {"file": source.file, "model": run.model, "config": run.config}
        out.append({**head, "format": run.format, "metadata": source.metadata, **scores})
    return out


def result_row(
    run: Run,
    answers: Answers,
    groups: Sequence[str] = (),
    random_baseline: bool = False,
    confidence_level: float | None = None,
    bootstrap_iterations: int = 1000,
) -> dict[str, Any]:
    """``splice score``'s result for one order run over every video of the build (missing
    videos are invalid): `runs.score_run` overall and by each of ``groups``' columns, with
    why answers are invalid, the rows left out and the file it came from."""
    options = {
        "random_baseline": random_baseline,
        "confidence_level": confidence_level,
        "bootstrap_iterations": bootstrap_iterations,
    }
    result = score_run(run, answers.references, **options)
    result |= invalid_counts(run, answers.references).as_dict()
    result["not_in_build"] = len(extra := not_in_build(run, answers.references))
    result["left_out"] = extra[:LEFT_OUT_SHOWN]
    result["orders_from_raw"] = run.from_raw.as_dict()
    if groups:
        result["by_group"] = {}
        for column in groups:  # rows sorted by label (the metric keeps first appearance)
            by = score_run(run, answers.references, groups=answers.columns[column], **options)
            result["by_group"][column] = dict(sorted(by["by_group"].items()))
            if random_baseline:
                expected = dict(sorted(by["random_baseline"]["by_group"].items()))
                result["random_baseline"].setdefault("by_group", {})[column] = expected
    source = run.sources[0]
    head = {"file": source.file, "model": run.model, "config": run.config, "probe": run.probe}
    return {**head, "metadata": source.metadata, **result}


def format_table(title: str, rows: list[tuple[str, dict[str, Any]]]) -> str:
    """A fixed-width table: one row per cell, count + every metric (+ CI of binary)."""
    with_ci = any("confidence_intervals" in cell for _, cell in rows)
    width = max([len(title)] + [len(name) for name, _ in rows])
    header = f"{title:<{width}}  {'n':>6}  " + "  ".join(
        f"{_COLUMNS[m]:>8}" for m in splice_metric.RATES
    )
    if with_ci:
        header += "  binary CI"
    lines = [header, "-" * len(header)]
    for name, cell in rows:
        line = f"{name:<{width}}  {cell['count']:>6}  " + "  ".join(
            f"{cell[m]:>8.4f}" for m in splice_metric.RATES
        )
        if "confidence_intervals" in cell:
            lo, hi = cell["confidence_intervals"]["binary_accuracy"]
            line += f"  [{lo:.4f}, {hi:.4f}]"
        lines.append(line)
    return "\n".join(lines)


def run_name(r: dict[str, Any]) -> str:
    """A run's name in the tables: file, model, config and any probe."""
    probe = r.get("probe", NO_PROBE)
    tail = "" if probe == NO_PROBE else f" [probe {probe}]"
    return f"{Path(r['file']).name}:{r['model']}/{r['config'] or '?'}{tail}"


def render_probes(comparisons: Sequence[ProbeComparison]) -> str:
    """Each probed run against its model's ``none`` run: the change in every metric with
    its paired bootstrap interval, then one sentence per model and probe."""
    if not comparisons:
        return ""
    lines = ["probes against none (probed - none, paired bootstrap 95% interval by video)"]
    for cmp in comparisons:
        lines.append(f"{cmp.model}/{cmp.config} [probe {cmp.probe}], {cmp.videos} videos:")
        lines += [
            f"  {c.metric:<17} {c.none:.4f} -> {c.probed:.4f}  {c.delta:+.4f} "
            f"[{c.lo:+.4f}, {c.hi:+.4f}]"
            for c in cmp.changes
        ]
    lines += [""] + [sentence(cmp) for cmp in comparisons]
    return "\n".join(lines)


def render(results: list[dict[str, Any]], groups: Sequence[str] = ()) -> str:
    rows = [(run_name(r), r) for r in results]
    if results and "random_baseline" in results[0]:
        rows.append(("random (expected)", results[0]["random_baseline"]))
    parts = [format_table("run", rows)]
    for name, r in rows[: len(results)]:
        lines = [f"{name}: {describe_metadata(r['metadata'])}"]
        kinds = [
            (r["missing"], "video(s) without a prediction"),
            (r["errors"], "request error(s)"),
            (r["unparsed"], "answer(s) with no readable order (unparsed)"),
            (r["invalid"], "order(s) read that are not a permutation (invalid)"),
        ]
        found = [f"{count} {what}" for count, what in kinds if count]
        if found:
            lines.append("  scored as invalid: " + "; ".join(found))
        if r["orders_from_raw"]["rows"]:
            lines.append("  " + OrdersFromRaw(**r["orders_from_raw"]).describe())
        if r["not_in_build"]:
            lines.append("  " + left_out_words(r["not_in_build"], r["left_out"]))
        parts.append("\n".join(lines))
    for name, r in rows[: len(results)]:
        by_n = [(f"{n} clips", cell) for n, cell in r["by_num_clips"].items()]
        parts.append(format_table(f"{name} by number of clips", by_n))
        for column in groups:
            cells = [(str(label), cell) for label, cell in r["by_group"][column].items()]
            parts.append(format_table(f"{name} by {column}", cells))
    return "\n\n".join(parts)


GROUP_COLUMNS = (sd.DOMAIN, sd.TASK, sd.NUM_CLIPS)


class GroupsThenFiles(argparse.Action):
    """``--groups`` takes column names up to the first word that is not one; that word and
    the rest are prediction files. ``score --groups domain qwen.jsonl`` then groups by
    domain and scores qwen.jsonl, where argparse alone would read the file as a column and
    refuse it. A word that is neither a column nor a file is refused, naming both."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        groups, files = list(getattr(namespace, self.dest) or []), []
        for value in values:
            if value in GROUP_COLUMNS and not files:
                groups.append(value)
            elif Path(value).exists() or files:
                files.append(Path(value))
            else:
                parser.error(
                    f"{option_string}: {value!r} is neither a column "
                    f"({', '.join(GROUP_COLUMNS)}) nor a prediction file"
                )
        setattr(namespace, self.dest, groups)
        namespace.files_after_groups = [*getattr(namespace, "files_after_groups", []), *files]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("predictions", nargs="*", type=Path, help=PREDICTIONS_HELP)
    parser.add_argument("--data", required=True, help=data_source.DATA_HELP)
    parser.add_argument(
        "--groups",
        nargs="*",
        default=[],
        action=GroupsThenFiles,
        metavar="COLUMN",
        help=f"also break the scores down by these columns: {', '.join(GROUP_COLUMNS)} "
        "(default: none, by number of clips only); prediction files may follow",
    )
    parser.set_defaults(files_after_groups=[])
    parser.add_argument(
        "--random-baseline",
        action="store_true",
        help="add the expected random scores as a row (default: not shown)",
    )
    parser.add_argument(
        "--confidence-level",
        type=float_in(0, 1, low_open=True),
        default=None,
        help="add bootstrap intervals at this level, e.g. 0.95 (default: none, means only)",
    )
    parser.add_argument(
        "--bootstrap-iterations",
        type=int_at_least(1),
        default=1000,
        help="resamples behind each confidence interval (default %(default)s)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write all results here")
    add_allow_other_build(parser)


def prediction_files(args: argparse.Namespace) -> list[Path]:
    """The files given before ``--groups`` and after its columns; at least one."""
    files = [*args.predictions, *args.files_after_groups]
    if not files:
        raise UserError("splice score: give at least one prediction file (JSONL or CSV)")
    return files


def run(args: argparse.Namespace) -> int:
    if args.json is not None:
        output_path(args.json, "--json")
    files = prediction_files(args)
    try:
        data = data_source.local_build(args.data, ("text",))
        answers = read_answers(data)
        data_build = read_card(data).build_id
        notes: list[str] = []

        def check(runs: list[Run]) -> None:
            notes.extend(
                check_builds(
                    runs,
                    args.data,
                    data_build,
                    allow_other=args.allow_other_build,
                    orders=answers.references,
                )
            )

        every = read_runs(files, per_file=True, orders=answers.references, check=check)
        runs = [r for r in every if r.format == splice_formats.ORDER]
        asked = score_questions_of([r for r in every if r.format != splice_formats.ORDER], answers)
        results = [
            result_row(
                r,
                answers,
                groups=args.groups,
                random_baseline=args.random_baseline,
                confidence_level=args.confidence_level,
                bootstrap_iterations=args.bootstrap_iterations,
            )
            for r in runs
        ]
    except (OSError, ValueError) as exc:  # UserError from the readers, the metric's checks
        raise as_user_error(exc) from exc
    comparisons = compare_runs(runs, answers.references, iterations=args.bootstrap_iterations)
    pairs = question_scores.consistencies(every, answers.references)
    for note in notes:
        print(f"note: {note}")
    if results:
        print(render(results, args.groups))
    if asked:
        named = [(f"{Path(r['file']).name}:{r['model']}/{r['config']}", r) for r in asked]
        print(("\n" if results else "") + question_scores.render(named, pairs))
    if comparisons:
        print("\n" + render_probes(comparisons))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "data": str(args.data),
            "videos": len(answers.references),
            "build_id": data_build,
            "build_notes": notes,
            "runs": results,
            "question_runs": asked,
            "pairwise_consistency": pairs,
            "probes": [asdict(c) | {"sentence": sentence(c)} for c in comparisons],
        }
        args.json.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0
