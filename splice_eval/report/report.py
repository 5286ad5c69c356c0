"""``splice report``: score prediction files against a build and write the paper's tables
and figures as Markdown + PNG.

What it shows, after the paper:
- Tables 2 and 5: binary, Hamming, LCS and edit distance per model and config, with the
  exact random expectation (the metric's ``random_baseline``) and any human predictions;
- Fig. 2: binary accuracy against the number of clips;
- Figs. 3, 5-7: binary accuracy by domain and by duration bin (Table 6's bins), with the
  metric's 95% bootstrap intervals;
- Section 7.5: how often the first and last chronological clips are put next to each
  other, for videos with 4 or more clips, against chance. For a uniformly random order of
  n clips, the two are adjacent with probability 2/n (n-1 adjacent position pairs, 2
  orders each, out of n(n-1) ordered position pairs); chance for a set of videos is the
  mean of 2/n over them;
- Tables 3-4: binary accuracy on the reasoning-type task groups of
  ``splice_eval/data/reasoning_groups.json``.

Every score comes from ``splice_metric``; a video of the build without a prediction in a
file is scored as an invalid (empty) prediction and counted as missing.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from importlib import resources
from pathlib import Path

import numpy as np

from splice_build.errors import UserError
from splice_build.output.card import markdown_table
from splice_build.output.card_reader import read_card
from splice_build.output.stats import BIN_LABELS, duration_bin
from splice_eval import data_source
from splice_eval.builddata import VideoMeta, read_meta
from splice_eval.predictions import HUMAN_MODEL, describe_metadata
from splice_eval.report import paper_rows
from splice_eval.report.figures import (
    CONFIG_TITLES,
    RANDOM_ROW,
    config_cell,
    plot_by_clips,
    plot_by_key,
    plot_probes,
    require_matplotlib,
)
from splice_eval.scoring import question_scores
from splice_eval.scoring.probe_effects import compare_runs, markdown_section
from splice_eval.scoring.runs import (
    NO_PROBE,
    PREDICTIONS_HELP,
    Run,
    add_allow_other_build,
    check_builds,
    invalid_counts,
    not_in_build,
    read_runs,
    score_run,
)
from splice_metric import PAPER_METRICS, random_baseline

METRIC_TITLES = dict(zip(PAPER_METRICS, ("Binary", "Hamming", "LCS", "Edit"), strict=True))
ADJACENCY_MIN_CLIPS = 4  # Section 7.5 looks at videos with four or more clips
CONFIDENCE = 0.95


def reasoning_groups() -> list[dict]:
    """The named task lists of Tables 3-4 (see the data file for sources and derivation)."""
    text = resources.files("splice_eval").joinpath("data", "reasoning_groups.json").read_text()
    return json.loads(text)["groups"]


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    """One run per (model, config, probe) across the files, by model, config and probe."""
    runs = read_runs(paths, per_file=False)
    return sorted(runs, key=lambda r: (r.model, r.config, r.probe != NO_PROBE, r.probe))


def references_of(videos: Sequence[VideoMeta]) -> dict[str, list[int]]:
    """The answer order of each video, in the given order: what runs are scored against."""
    return {v.video_id: list(v.order) for v in videos}


# --- scoring (all through splice_metric) ----------------------------------------------


def score_videos(run: Run, videos: Sequence[VideoMeta], keys: Sequence[str] | None = None) -> dict:
    """The metric's result (with 95% intervals and the exact random expectation) for a run
    over these videos, optionally broken down by one key per video."""
    return score_run(
        run,
        references_of(videos),
        groups=keys,
        random_baseline=True,
        confidence_level=CONFIDENCE,
        seed=0,
    )


def random_expectation(num_clips: Sequence[int]) -> dict[str, float]:
    """The metric's exact expected scores of uniformly random orders for these clip counts."""
    if not len(num_clips):
        return {m: math.nan for m in PAPER_METRICS}
    result = random_baseline(num_clips)
    return {m: result[m] for m in PAPER_METRICS}


def adjacency(run: Run, videos: Sequence[VideoMeta]) -> dict[str, float]:
    """Section 7.5: first and last chronological clips predicted next to each other."""
    adjacent = first_before_last = valid = 0
    chance = []
    for v in videos:
        order = run.orders.get(v.video_id)
        n = v.num_clips
        if n < ADJACENCY_MIN_CLIPS:
            continue
        chance.append(2 / n)
        if order is None or sorted(order) != sorted(v.order):
            continue  # an invalid answer says nothing about adjacency
        valid += 1
        pos_first, pos_last = order.index(v.order[0]), order.index(v.order[-1])
        adjacent += abs(pos_first - pos_last) == 1
        first_before_last += pos_first < pos_last
    return {
        "videos": len(chance),
        "valid": valid,
        "adjacent_rate": adjacent / valid if valid else math.nan,
        "chance": float(np.mean(chance)) if chance else math.nan,
        "first_before_last_rate": first_before_last / valid if valid else math.nan,
    }


# --- the report's content -------------------------------------------------------------


def _rows(result: dict, breakdown: str, order: Sequence) -> list[dict]:
    """Binary accuracy, interval and random expectation per key of a breakdown."""
    rows = []
    for key in order:
        cell = result[breakdown].get(key)
        if cell is None:
            continue
        lo, hi = cell["confidence_intervals"]["binary_accuracy"]
        rows.append(
            {
                "key": str(key),
                "videos": cell["count"],
                "mean": cell["binary_accuracy"],
                "lo": lo,
                "hi": hi,
                "random": result["random_baseline"][breakdown][key]["binary_accuracy"],
            }
        )
    return rows


def duration_key(duration: float) -> str:
    """A video's duration bin, labelled as Table 6 (and the card's statistics) label it."""
    return BIN_LABELS[duration_bin(duration)]


def build_report(runs: Sequence[Run], meta: dict[str, VideoMeta]) -> dict:
    """All numbers of the report as plain data (also written as report.json)."""
    videos = [meta[v] for v in sorted(meta)]
    counts = [v.num_clips for v in videos]
    clip_keys = sorted(set(counts))
    domains = sorted({v.domain for v in videos})
    groups = reasoning_groups()
    out: dict = {
        "videos": len(videos),
        "random_exact": random_expectation(counts),
        "random_by_clips": {str(n): random_expectation([n])["binary_accuracy"] for n in clip_keys},
        "runs": [],
    }
    references = references_of(videos)
    out["probes"] = [asdict(c) for c in compare_runs(runs, references)]
    for run in runs:
        overall = score_videos(run, videos)
        ci = overall["confidence_intervals"]
        by_domain = score_videos(run, videos, [v.domain for v in videos])
        by_duration = score_videos(run, videos, [duration_key(v.duration) for v in videos])
        group_rows = [_group_row(run, videos, g) for g in groups]
        out["runs"].append(
            {
                "model": run.model,
                "config": run.config,
                "probe": run.probe,
                **invalid_counts(run, references).as_dict(),
                "orders_from_raw": run.from_raw.rows,
                "sources": [asdict(source) for source in run.sources],
                "not_in_build": len(not_in_build(run, references)),
                "overall": {
                    m: {"mean": overall[m], "lo": ci[m][0], "hi": ci[m][1]} for m in PAPER_METRICS
                },
                "by_clips": _rows(overall, "by_num_clips", clip_keys),
                "by_domain": _rows(by_domain, "by_group", domains),
                "by_duration": _rows(by_duration, "by_group", BIN_LABELS),
                "adjacency": adjacency(run, videos),
                "reasoning_groups": group_rows,
            }
        )
    return out


def _group_row(run: Run, videos: Sequence[VideoMeta], group: dict) -> dict:
    """Binary accuracy of a run on the videos of one reasoning-type task group."""
    members = set(group["tasks"])
    chosen = [v for v in videos if v.task in members]
    row = {"group": group["name"], "table": group["table"], "videos": len(chosen)}
    if not chosen:
        return row | {"binary": math.nan, "lo": math.nan, "hi": math.nan, "random": math.nan}
    res = score_videos(run, chosen)
    lo, hi = res["confidence_intervals"]["binary_accuracy"]
    random = res["random_baseline"]["binary_accuracy"]
    return row | {"binary": res["binary_accuracy"], "lo": lo, "hi": hi, "random": random}


# --- Markdown -------------------------------------------------------------------------


def _fmt(x: float, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "–" if x is None or math.isnan(x) else f"{100 * x:.2f}"


def _row_order(runs: Sequence[dict]) -> list[str]:
    models = sorted({r["model"] for r in runs})
    first = [m for m in ("random", HUMAN_MODEL) if m in models]
    return first + [m for m in models if m not in first]


def _configs(runs: Sequence[dict]) -> list[str]:
    return [c for c in CONFIG_TITLES if c in {r["config"] for r in runs}]


def _metric_table(report: dict, metrics: Sequence[str]) -> str:
    runs = [r for r in report["runs"] if r.get("probe", NO_PROBE) == NO_PROBE]  # probes: below
    configs = _configs(runs)
    cell = {(r["model"], r["config"]): r for r in runs}
    head = ["Model"] + [f"{CONFIG_TITLES[c]} {METRIC_TITLES[m]}" for c in configs for m in metrics]
    rnd = report["random_exact"]
    rows = [[RANDOM_ROW] + [_fmt(rnd[m]) for _c in configs for m in metrics]]
    for model in _row_order(runs):
        vals = []
        for c in configs:
            r = cell.get((model, c))
            vals += [_fmt(r["overall"][m]["mean"]) if r else "–" for m in metrics]
        rows.append([model] + vals)
    return markdown_table(head, rows)


STAND_IN_NOTE = (
    "**Stand-in build.** These predictions were scored on a build whose clips were cut from "
    "rendered stand-in videos (the demo's; its card says `stand_in: true`), not from COIN's: "
    "the numbers test the tooling, not a model's visual reasoning."
)


def render_markdown(report: dict, figures: dict[str, str], sources: Sequence[str]) -> str:
    runs = report["runs"]
    out = [
        "# SPLICE results",
        "",
        f"{report['videos']} videos. Prediction files: "
        + ", ".join(f"`{s}`" for s in sources)
        + ".",
        *([STAND_IN_NOTE, ""] if report.get("stand_in") else []),
        *(f"**Build check.** {note}\n" for note in report.get("build_notes", ())),
        f"`{RANDOM_ROW}` is the metric's exact expectation of uniformly random orders for this "
        "build's clip counts. Edit distance is absolute (lower is better); the other metrics "
        "are means in [0, 1]. Intervals are the metric's seeded 95% bootstrap intervals.",
        "",
        "## Coverage",
        "",
        "Every kind is scored as an invalid prediction: no prediction for a video "
        "(missing), a request that failed (errors), an answer with no readable order "
        "(unparsed), an order read that is not a permutation of the clips (invalid). Rows "
        "given without an order had it read from their raw_output by the metric's "
        "`parse_order` (last column).",
        "",
        _coverage_table(runs),
        "",
        "## How the answers were produced",
        "",
        _settings_table(runs),
        "",
        "## Binary and Hamming accuracy (layout of Table 2)",
        "",
        _metric_table(report, PAPER_METRICS[:2]),
        "",
        "## All metrics (layout of Table 5)",
        "",
        _metric_table(report, PAPER_METRICS),
        "",
        "## Binary accuracy by number of clips (Fig. 2, Fig. 7)",
        "",
        _clips_table(report),
    ]
    if "clips" in figures:
        out += ["", f"![binary accuracy by number of clips]({figures['clips']})"]
    for what, title in (
        ("domain", "domain (Fig. 3 top, Fig. 5)"),
        ("duration", "duration (Fig. 3 bottom, Fig. 6)"),
    ):
        out += ["", f"## Binary accuracy (%) by {title}", "", _breakdown_table(runs, what)]
        for config, name in sorted(figures.items()):
            if config.startswith(f"{what}:"):
                out += ["", f"![binary accuracy by {what}, {config.split(':', 1)[1]}]({name})"]
    out += [
        "",
        "## First and last clips adjacent "
        f"(Section 7.5, videos with >= {ADJACENCY_MIN_CLIPS} clips)",
        "",
        "Chance for n clips is 2/n (the first and last chronological clips land in adjacent "
        "positions of a uniformly random order with probability 2(n-1)/(n(n-1))); the chance "
        "column is its mean over the videos. Invalid answers are left out of the rates.",
        "",
        _adjacency_table(runs),
        "",
        "## Reasoning-type groups (Tables 3-4)",
        "",
        "Binary accuracy (%) on the task groups of `splice_eval/data/reasoning_groups.json`. "
        "The paper does not list its groups' tasks; these lists are derived from its "
        "definitions (the file quotes them and says which lists are judgement calls).",
        "",
    ]
    if runs:
        out.append(_groups_table(runs))
    probe_lines = markdown_section(report.get("probes", []))
    if probe_lines:
        out += ["", *probe_lines]
    if "probes" in figures:
        out += ["", f"![what each probe costs]({figures['probes']})"]
    return "\n".join(out) + "\n"


def _coverage_table(runs: Sequence[dict]) -> str:
    head = (
        "Model",
        "Config",
        "missing",
        "errors",
        "unparsed",
        "invalid",
        "not in build",
        "order read from raw_output",
    )
    kinds = ("missing", "errors", "unparsed", "invalid", "not_in_build", "orders_from_raw")
    rows = [[r["model"], config_cell(r), *(str(r[k]) for k in kinds)] for r in runs]
    return markdown_table(head, rows)


def _settings_table(runs: Sequence[dict]) -> str:
    rows = [
        [
            r["model"],
            config_cell(r),
            f"`{Path(source['file']).name}`",
            describe_metadata(source["metadata"]).replace("|", "\\|"),
        ]
        for r in runs
        for source in r.get("sources", [])
    ]
    return markdown_table(("Model", "Config", "File", "Settings (the file's metadata line)"), rows)


def _clips_table(report: dict) -> str:
    clip_keys = list(report["random_by_clips"])
    random_row = [RANDOM_ROW, "all", *(_pct(report["random_by_clips"][k]) for k in clip_keys)]
    rows = [random_row]
    for r in report["runs"]:
        got = {row["key"]: row for row in r["by_clips"]}
        rows.append(
            [r["model"], config_cell(r), *(_ci_pct(got[k]) if k in got else "–" for k in clip_keys)]
        )
    return markdown_table(["Model", "Config", *(f"{k} clips" for k in clip_keys)], rows)


def _breakdown_table(runs: Sequence[dict], what: str) -> str:
    keys: list[str] = []
    for r in runs:
        for row in r[f"by_{what}"]:
            if row["key"] not in keys:
                keys.append(row["key"])
    rows = []
    for r in runs:
        got = {row["key"]: row for row in r[f"by_{what}"]}
        rows.append(
            [r["model"], config_cell(r), *(_ci_pct(got[k]) if k in got else "–" for k in keys)]
        )
    first = runs[0][f"by_{what}"] if runs else []
    rows.append(
        ["videos / random", "", *(f"{row['videos']} / {_pct(row['random'])}" for row in first)]
    )
    return markdown_table(["Model", "Config", *keys], rows)


def _adjacency_table(runs: Sequence[dict]) -> str:
    head = ("Model", "Config", "videos", "valid", "adjacent %", "chance %", "first before last %")
    rows = []
    for r in runs:
        a = r["adjacency"]
        rows.append(
            [
                r["model"],
                config_cell(r),
                str(a["videos"]),
                str(a["valid"]),
                _pct(a["adjacent_rate"]),
                _pct(a["chance"]),
                _pct(a["first_before_last_rate"]),
            ]
        )
    return markdown_table(head, rows)


def _groups_table(runs: Sequence[dict]) -> str:
    g0 = runs[0]["reasoning_groups"]
    head = ["Model", "Config", *(f"{g['group']} ({g['table']})" for g in g0)]
    rows = [
        ["videos", "", *(str(g["videos"]) for g in g0)],
        [RANDOM_ROW, "", *(_pct(g["random"]) for g in g0)],
    ]
    rows += [
        [r["model"], config_cell(r), *(_pct(g["binary"]) for g in r["reasoning_groups"])]
        for r in runs
    ]
    return markdown_table(head, rows)


def _ci_pct(row: dict) -> str:
    mean, lo, hi = (100 * row[k] for k in ("mean", "lo", "hi"))
    return "–" if math.isnan(mean) else f"{mean:.1f} [{lo:.1f}, {hi:.1f}]"


def write_report(
    prediction_files: Sequence[str | Path],
    build: str | Path,
    out: str | Path,
    *,
    paper: bool = False,
    aliases: paper_rows.Aliases = paper_rows.NO_ALIASES,
    allow_other_build: bool = False,
) -> Path:
    """Score the files against the build (another build's refused unless ``allow_other_build``:
    `runs.check_builds`); write report.md, report.json and PNG figures (``paper``: the
    paper's rows beside the report's own, runs named by ``aliases``)."""
    out = Path(out)
    meta = read_meta(build)
    card = read_card(build)
    every = load_runs(prediction_files)  # the question formats' runs: their own section
    orders = {v: m.order for v, m in meta.items()}
    notes = check_builds(every, build, card.build_id, allow_other=allow_other_build, orders=orders)
    out.mkdir(parents=True, exist_ok=True)
    asked, asked_md = question_scores.report_section(every, {v: m.order for v, m in meta.items()})
    report = build_report(question_scores.split_runs(every)[0], meta) | {"questions": asked}
    report |= {"stand_in": card.stand_in, "build_id": card.build_id, "build_notes": notes}
    figures: dict[str, str] = {}
    if report["runs"]:
        figures["clips"] = plot_by_clips(report, out / "accuracy_by_clips.png").name
        for config in _configs(report["runs"]):
            for what in ("domain", "duration"):
                name = f"accuracy_by_{what}_{config or 'config_not_stated'}.png"
                plot_by_key(report, what, config, out / name)
                figures[f"{what}:{config}"] = name
    if report["probes"]:
        figures["probes"] = plot_probes(report, out / "probes.png").name
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    sources = [str(p) for p in prediction_files]
    text = render_markdown(report, figures, sources) + asked_md
    if paper:
        text += "\n" + paper_rows.render_paper(report, aliases)
    (out / "report.md").write_text(text, encoding="utf-8")
    return out / "report.md"


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("predictions", type=Path, nargs="+", help=PREDICTIONS_HELP)
    parser.add_argument("--data", required=True, help=data_source.DATA_HELP)
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md and PNGs")
    paper_rows.add_paper_arguments(parser)
    add_allow_other_build(parser)


def run(args: argparse.Namespace) -> int:
    require_matplotlib()  # the extra is missing: say so before scoring anything
    aliases = paper_rows.paper_aliases(args)
    data = data_source.local_build(args.data, ("text",))
    options = {"paper": args.paper, "aliases": aliases, "allow_other_build": args.allow_other_build}
    try:
        path = write_report(args.predictions, data, args.out, **options)
    except (ValueError, OSError) as exc:  # UserError from the readers, the metric's checks
        raise UserError(str(exc)) from exc
    print(f"wrote {path}")
    report = json.loads((path.parent / "report.json").read_text(encoding="utf-8"))
    if args.paper:
        paper_rows.say_unmatched(report, aliases)
    stand_in = f"{args.data} is a stand-in build (rendered videos, not COIN's)"
    for note in [*report["build_notes"], *([stand_in] if report["stand_in"] else [])]:
        print(f"note: {note}")
    return 0
