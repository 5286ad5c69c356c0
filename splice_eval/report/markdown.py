"""The report's Markdown: the numbers of ``numbers.build_report`` as the paper's tables
(Tables 2 and 5, Fig. 2's clips, Figs. 3, 5-7's domains and durations, Section 7.5's
adjacency, Tables 3-4's groups), with coverage and the settings each file recorded."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from splice_build.output.card_tables import markdown_table
from splice_eval.predictions import HUMAN_MODEL, describe_metadata
from splice_eval.report.figures import CONFIG_TITLES, RANDOM_ROW, config_cell
from splice_eval.report.numbers import ADJACENCY_MIN_CLIPS, METRIC_TITLES
from splice_eval.scoring.probe_effects import markdown_section
from splice_eval.scoring.runs import NO_PROBE
from splice_metric import PAPER_METRICS


def _fmt(x: float, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "–" if x is None or math.isnan(x) else f"{100 * x:.2f}"


def _row_order(runs: Sequence[dict]) -> list[str]:
    models = sorted({r["model"] for r in runs})
    first = [m for m in ("random", HUMAN_MODEL) if m in models]
    return first + [m for m in models if m not in first]


def run_configs(runs: Sequence[dict]) -> list[str]:
    return [c for c in CONFIG_TITLES if c in {r["config"] for r in runs}]


def _metric_table(report: dict, metrics: Sequence[str]) -> str:
    runs = [r for r in report["runs"] if r.get("probe", NO_PROBE) == NO_PROBE]  # probes: below
    configs = run_configs(runs)
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
    "rendered stand-in videos (the demo's; its card says `stand_in: true`), not from the "
    "source's own: the numbers test the tooling, not a model's visual reasoning."
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
        "are means in [0, 1] in the paper's table layouts and percentages (%) in the "
        "breakdowns, as each heading says. Intervals are the metric's seeded 95% bootstrap "
        "intervals.",
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
        "## Binary and Hamming accuracy (layout of Table 2; fractions in [0, 1])",
        "",
        _metric_table(report, PAPER_METRICS[:2]),
        "",
        "## All metrics (layout of Table 5; fractions in [0, 1], edit distance absolute)",
        "",
        _metric_table(report, PAPER_METRICS),
        "",
        "## Binary accuracy (%) by number of clips (Fig. 2, Fig. 7)",
        "",
        _clips_table(report),
    ]
    if "clips" in figures:
        out += ["", f"![binary accuracy by number of clips]({figures['clips']})"]
    coin = report.get("source", "coin") == "coin"
    breakdowns = [
        ("domain", "domain (Fig. 3 top, Fig. 5)"),
        ("duration", "duration (Fig. 3 bottom, Fig. 6)"),
    ]
    if not coin:  # the source's own tasks, in place of COIN's reasoning-type groups
        breakdowns.insert(1, ("task", f"task (the {report['source']} source's own tasks)"))
    for what, title in breakdowns:
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
    ]
    if coin:
        out += _groups_section(runs)
    probe_lines = markdown_section(report.get("probes", []))
    if probe_lines:
        out += ["", *probe_lines]
    if "probes" in figures:
        out += ["", f"![what each probe costs]({figures['probes']})"]
    return "\n".join(out) + "\n"


def _groups_section(runs: Sequence[dict]) -> list[str]:
    """Tables 3-4's reasoning-type groups: COIN's tasks, so on a COIN build only."""
    out = [
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
    return out


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
