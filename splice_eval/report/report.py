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
  ``splice_eval/data/reasoning_groups.json`` (COIN's tasks: on a COIN build only); a
  build of another source (``splice build --source``) is broken down by its own tasks
  instead, and ``--paper``'s rows (COIN's) are refused beside it.

The numbers are ``numbers``' (every score from ``splice_metric``), the Markdown
``markdown``'s; this module writes them with the figures and is the command line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from splice_build.errors import UserError, as_user_error
from splice_build.output.card_reader import read_card
from splice_eval import data_source
from splice_eval.builddata import read_meta
from splice_eval.report import paper_rows
from splice_eval.report.figures import plot_by_clips, plot_by_key, plot_probes, require_matplotlib
from splice_eval.report.markdown import STAND_IN_NOTE, render_markdown, run_configs
from splice_eval.report.numbers import (
    ADJACENCY_MIN_CLIPS,
    CONFIDENCE,
    METRIC_TITLES,
    adjacency,
    build_report,
    load_runs,
    random_expectation,
    reasoning_groups,
    score_videos,
)
from splice_eval.scoring import question_scores
from splice_eval.scoring.build_checks import add_allow_other_build, check_builds
from splice_eval.scoring.runs import PREDICTIONS_HELP

__all__ = [  # the report's public names, wherever they live
    "ADJACENCY_MIN_CLIPS",
    "CONFIDENCE",
    "METRIC_TITLES",
    "STAND_IN_NOTE",
    "adjacency",
    "build_report",
    "load_runs",
    "random_expectation",
    "reasoning_groups",
    "render_markdown",
    "score_videos",
    "write_report",
]


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
    `build_checks.check_builds`); write report.md, report.json and PNG figures (``paper``: the
    paper's rows beside the report's own, runs named by ``aliases``)."""
    out = Path(out)
    meta = read_meta(build)
    card = read_card(build)
    if paper and card.source != "coin":
        raise UserError(
            f"--paper: the paper's rows are COIN's (the authors' release); this build is "
            f"{card.source}'s, so they are not shown beside it"
        )
    every = load_runs(prediction_files)  # the question formats' runs: their own section
    orders = {v: m.order for v, m in meta.items()}
    notes = check_builds(every, build, card.build_id, allow_other=allow_other_build, orders=orders)
    out.mkdir(parents=True, exist_ok=True)
    asked, asked_md = question_scores.report_section(every, {v: m.order for v, m in meta.items()})
    runs = question_scores.split_runs(every)[0]
    report = build_report(runs, meta, card.source) | {"questions": asked}
    report |= {"stand_in": card.stand_in, "build_id": card.build_id, "build_notes": notes}
    figures: dict[str, str] = {}
    if report["runs"]:
        figures["clips"] = plot_by_clips(report, out / "accuracy_by_clips.png").name
        for config in run_configs(report["runs"]):
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
        raise as_user_error(exc) from exc
    print(f"wrote {path}")
    report = json.loads((path.parent / "report.json").read_text(encoding="utf-8"))
    if args.paper:
        paper_rows.say_unmatched(report, aliases)
    stand_in = f"{args.data} is a stand-in build (rendered videos, not the source's own)"
    for note in [*report["build_notes"], *([stand_in] if report["stand_in"] else [])]:
        print(f"note: {note}")
    return 0
