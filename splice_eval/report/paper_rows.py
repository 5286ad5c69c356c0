"""``splice report --paper``: the paper's published rows (``splice_eval.report.paper``) beside the
report's own, with the difference wherever a run's model matches a paper row by name.

A difference is yours minus the paper's. It compares a user's build, frames and prompts
with the authors' release and frame settings, so it says whether a setup reproduces the
paper, not which model is better.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from splice_build.errors import UserError
from splice_build.output.card_tables import markdown_table
from splice_eval.report.figures import CONFIG_TITLES, RANDOM_ROW
from splice_eval.report.paper import (
    ADJACENCY,
    GROUP_TABLES,
    METRIC_TABLES,
    PAPER_NOTE,
    VISION,
    GroupTable,
    MetricTable,
    model_key,
    paper_models,
)
from splice_eval.scoring.runs import NO_PROBE

METRIC_NAMES = {
    "binary_accuracy": "Binary",
    "hamming_accuracy": "Hamming",
    "lcs_ratio": "LCS",
    "edit_distance": "Edit",
}


def _num(x: float | None, digits: int = 4) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _diff(mine: float | None, paper: float | None, digits: int = 4) -> str:
    if mine is None or paper is None or math.isnan(mine):
        return "–"
    return f"{mine - paper:+.{digits}f}"


# A run's model name -> the paper row it stands for (``--paper-alias RUN=ROW``).
Aliases = Mapping[str, str]
NO_ALIASES: Aliases = MappingProxyType({})


def parse_aliases(texts: Sequence[str]) -> dict[str, str]:
    """``--paper-alias RUN=ROW`` options as a mapping; ROW must name one of the paper's
    models (`paper.model_key` spelling rules), else a one-line refusal listing them."""
    known = {model_key(n) for n in paper_models()}
    aliases: dict[str, str] = {}
    for text in texts:
        run, sep, row = text.rpartition("=")
        if not sep or not run.strip() or not row.strip():
            raise UserError(f"--paper-alias {text!r}: expected RUN=ROW, e.g. my-model=Qwen2-VL-7B")
        if model_key(row) not in known:
            raise UserError(
                f"--paper-alias {text}: {row.strip()} is none of the paper's models "
                f"({', '.join(paper_models())})"
            )
        aliases[run.strip()] = row.strip()
    return aliases


def add_paper_arguments(parser: argparse.ArgumentParser) -> None:
    """``splice report``'s ``--paper`` and ``--paper-alias``."""
    parser.add_argument(
        "--paper",
        action="store_true",
        help="add the paper's published rows (Tables 2-5, Section 7.5) beside yours; a run "
        "is matched by its model name without a Hub organisation prefix (Qwen/Qwen2-VL-7B-"
        "Instruct is the paper's Qwen2-VL-7B)",
    )
    parser.add_argument(
        "--paper-alias",
        action="append",
        default=[],
        metavar="RUN=ROW",
        help="with --paper: the run whose model is RUN is compared with the paper's row ROW "
        "(e.g. my-finetune=Qwen2-VL-7B); repeatable",
    )


def paper_aliases(args: argparse.Namespace) -> dict[str, str]:
    """The ``--paper-alias`` options, checked before any scoring."""
    aliases = parse_aliases(args.paper_alias)
    if aliases and not args.paper:
        raise UserError("--paper-alias is for --paper: add --paper, or leave the alias out")
    return aliases


def say_unmatched(report: dict, aliases: Aliases) -> None:
    """Print one line when a run of the written report matched no paper row."""
    unmatched = unmatched_models(report, aliases)
    if unmatched:
        print(f"note: {unmatched_line(unmatched)}")


def paper_key(model: str, aliases: Aliases) -> str:
    """The key a run's model is matched on: its alias's, else its own name's."""
    return model_key(aliases.get(model, model))


def unmatched_models(report: dict, aliases: Aliases) -> list[str]:
    """The runs' models (those the paper's rows compare with) that match no paper row."""
    known = {model_key(n) for n in paper_models()}
    models = sorted({r["model"] for r in _unprobed(report)})
    return [m for m in models if paper_key(m, aliases) not in known]


def unmatched_line(models: Sequence[str]) -> str:
    """One line saying which runs no paper row matched, and how to name theirs."""
    return (
        f"no paper row matches {', '.join(models)}: name it with --paper-alias "
        f"'{models[0]}=<paper model>' (the paper's: {', '.join(paper_models())})"
    )


def _paper_row(
    rows: Sequence[tuple[str, tuple]], model: str, aliases: Aliases = NO_ALIASES
) -> tuple | None:
    """The paper's values for a model, matched by name (``paper.model_key``) or alias."""
    for name, values in rows:
        if model_key(name) == paper_key(model, aliases):
            return values
    return None


def _unprobed(report: dict) -> list[dict]:
    """The runs the paper's rows compare with: those shown the frames as sampled."""
    return [r for r in report["runs"] if r.get("probe", NO_PROBE) == NO_PROBE]


def _yours(report: dict, model: str, config: str, metric: str) -> float | None:
    for r in _unprobed(report):
        if r["model"] == model and r["config"] == config:
            return r["overall"][metric]["mean"]
    return None


def metric_section(report: dict, table: MetricTable, aliases: Aliases = NO_ALIASES) -> list[str]:
    """One of Tables 2 and 5: the paper's rows, then each matching run and its difference."""
    head = ["Row", *(f"{CONFIG_TITLES[c]} {METRIC_NAMES[m]}" for c, m in table.columns)]
    rows = [[f"{name} ({PAPER_NOTE})", *map(_num, values)] for name, values in table.rows]
    mine = [report["random_exact"][m] for _c, m in table.columns]
    rows += _pair(f"{RANDOM_ROW}, this build", mine, _paper_row(table.rows, "Random"), 4)
    for model in sorted({r["model"] for r in _unprobed(report)}):
        paper = _paper_row(table.rows, model, aliases)
        if paper is not None:
            mine = [_yours(report, model, c, m) for c, m in table.columns]
            rows += _pair(f"{model}, yours", mine, paper, 4)
    return [
        f"### {table.table}: {table.caption}",
        "",
        f"Rows marked '{PAPER_NOTE}' are the paper's {table.table}.",
        "",
        markdown_table(head, rows),
    ]


def _group_cells(run: dict, names: Sequence[str]) -> list[float | None]:
    got = {g["group"]: g for g in run["reasoning_groups"]}
    return [100 * got[n]["binary"] if n in got else None for n in names]


def _pair(label: str, mine: Sequence, paper: Sequence | None, digits: int) -> list[list[str]]:
    """A row of yours and, when the paper has the row, the row of differences."""
    rows = [[label, *(_num(v, digits) for v in mine)]]
    if paper is not None:
        base = label.removesuffix(", yours").removesuffix(", this build")
        pairs = zip(mine, paper, strict=True)
        rows.append([f"{base} − paper", *(_diff(a, b, digits) for a, b in pairs)])
    return rows


def group_section(report: dict, table: GroupTable, aliases: Aliases = NO_ALIASES) -> list[str]:
    """One of Tables 3 and 4 (vision only): the paper's rows, this build's group sizes and
    random expectation, and each vision-only run that matches a paper model."""
    names = [name for name, _count in table.groups]
    rows = [["videos, paper", *(str(count) for _n, count in table.groups)]]
    rows += [[f"{name} ({PAPER_NOTE})", *(_num(v, 2) for v in vals)] for name, vals in table.rows]
    video_runs = [r for r in _unprobed(report) if r["config"] == VISION]
    if video_runs:
        got = {g["group"]: g for g in video_runs[0]["reasoning_groups"]}
        rows.append(["videos, this build", *(str(got[n]["videos"]) for n in names)])
        chance = [100 * got[n]["random"] for n in names]
        rows += _pair(f"{RANDOM_ROW}, this build", chance, _paper_row(table.rows, "Random"), 2)
    for run in video_runs:
        paper = _paper_row(table.rows, run["model"], aliases)
        if paper is not None:
            rows += _pair(f"{run['model']}, yours", _group_cells(run, names), paper, 2)
    return [
        f"### {table.table}: {table.caption}",
        "",
        f"Binary accuracy (%), vision only. Rows marked '{PAPER_NOTE}' are the paper's "
        f"{table.table}; this build's groups are those of "
        "`splice_eval/data/reasoning_groups.json`.",
        "",
        markdown_table(["Row", *(f"{n} (%)" for n in names)], rows),
    ]


def adjacency_section(report: dict, aliases: Aliases = NO_ALIASES) -> list[str]:
    """Section 7.5's first/last-adjacency figures beside the report's own."""
    head = ("Row", "adjacent %", "yours − paper")
    rows = []
    for fig in ADJACENCY:
        rows.append([f"{fig.who} ({fig.section}, {PAPER_NOTE})", _num(fig.adjacent_pct, 2), ""])
        for run in _unprobed(report):
            if run["config"] != VISION or paper_key(run["model"], aliases) != model_key(fig.model):
                continue
            mine = 100 * run["adjacency"]["adjacent_rate"]
            rows.append([f"{run['model']}, yours", _num(mine, 2), _diff(mine, fig.adjacent_pct, 2)])
    chance = [r["adjacency"]["chance"] for r in _unprobed(report) if r["config"] == VISION]
    if chance:
        mine = 100 * chance[0]
        paper_random = ADJACENCY[-1].adjacent_pct
        rows.append(["chance, this build", _num(mine, 2), _diff(mine, paper_random, 2)])
    return [
        "### Section 7.5: first and last clips adjacent",
        "",
        "The paper's figures are for change/replace videos with four or more clips; this "
        "report's are for every video of the build with four or more clips (vision only).",
        "",
        markdown_table(head, rows),
    ]


def render_paper(report: dict, aliases: Aliases = NO_ALIASES) -> str:
    """The whole "paper beside yours" section of report.md; ``aliases`` name the paper row
    of runs whose model name is not the paper's."""
    out = [
        "## The paper's rows beside yours",
        "",
        f"Marked '{PAPER_NOTE}': the published figures of Tables 2-5 and Section 7.5, "
        "produced on the authors' release with their frame settings. A difference is yours "
        "minus the paper's, shown where a run's model matches a paper row by name (without "
        "a Hub organisation prefix) or by `--paper-alias`.",
        "",
    ]
    unmatched = unmatched_models(report, aliases)
    if unmatched:
        out += [f"Note: {unmatched_line(unmatched)}.", ""]
    for table in METRIC_TABLES:
        out += [*metric_section(report, table, aliases), ""]
    for table in GROUP_TABLES:
        out += [*group_section(report, table, aliases), ""]
    out += adjacency_section(report, aliases)
    return "\n".join(out) + "\n"
