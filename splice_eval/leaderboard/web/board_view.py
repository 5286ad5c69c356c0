"""The board page's content, free of widgets: the rows ``table.board_rows`` gives, filtered,
searched and sorted as a visitor asks, laid out in the columns ``columns`` declares, and the
words above them (the ranking method, a stale metric). Called by the page's handlers and,
without any server, by ``render_board`` (what ``bench/leaderboard.py`` times)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import splice_dataset as sd

from .. import columns as col
from ..records import STAND_IN_NOTE, TIERS, Board
from ..table import board_rows
from . import text
from .plots import Point, score_vs_params

ALL_CONFIGS = "all configs"
NO_PARAMS = "unknown"  # weights / toolkit value of an entry that states none
# The fields the search box looks in: who and what, never numbers.
SEARCHED = ("name", "model", "submitter", "toolkit", "backend", "slug", "paper")


@dataclass(frozen=True)
class Filters:
    """What a visitor asked the board page for; the defaults show everything."""

    config: str = ALL_CONFIGS
    metric: str = col.DEFAULT_METRIC
    toolkits: tuple[str, ...] | None = None  # None: every toolkit
    weights: tuple[str, ...] | None = None
    tiers: tuple[str, ...] | None = None
    params_min: float | None = None
    params_max: float | None = None
    without_params: bool = True  # keep entries that state no parameter count
    search: str = ""
    sort_by: str = "rank"
    descending: bool = False
    extra_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Table:
    """A laid-out table: headers (column labels), rows of cells, Gradio datatypes, and the
    entry folder of each row (what a click on a row opens)."""

    headers: tuple[str, ...]
    data: tuple[tuple[Any, ...], ...]
    datatypes: tuple[str, ...]
    slugs: tuple[str, ...]
    widths: tuple[int, ...] = ()  # each column's width, pixels


def rows_for(board: Board, filters: Filters) -> list[dict[str, Any]]:
    """The board's rows ranked by the visitor's config and metric, then filtered and sorted."""
    config = None if filters.config == ALL_CONFIGS else filters.config
    rows = board_rows(board, config=config, metric=filters.metric)
    rows = [r for r in rows if _passes(r, filters)]
    if filters.sort_by != "rank":
        rows = sort_rows(rows, filters.sort_by, filters.descending)
    elif filters.descending:
        rows = rows[::-1]
    return rows


def _value_of(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return NO_PARAMS if value in (None, "") else str(value)


def _passes(row: dict[str, Any], f: Filters) -> bool:
    if f.toolkits is not None and _value_of(row, "toolkit") not in f.toolkits:
        return False
    if f.weights is not None and _value_of(row, "weights") not in f.weights:
        return False
    if f.tiers is not None and row.get("tier") not in f.tiers:
        return False
    params = row.get("params_b")
    if params is None:
        if not f.without_params:
            return False
    else:
        if f.params_min is not None and params < f.params_min:
            return False
        if f.params_max is not None and params > f.params_max:
            return False
    if f.search.strip():
        needle = f.search.strip().lower()
        if not any(needle in str(row.get(k) or "").lower() for k in SEARCHED):
            return False
    return True


def sort_rows(rows: Sequence[dict[str, Any]], name: str, descending: bool) -> list[dict[str, Any]]:
    """Rows by one column, values of its type compared as such (a rank by its low end, a
    number as a number); rows without a value last either way."""
    column = col.BY_NAME.get(name)
    if column is None:
        raise ValueError(f"no column {name!r}")
    key_name = "rank_low" if column.type == col.RANK else name

    def key(row: dict[str, Any]) -> Any:
        value = row.get(key_name)
        if isinstance(value, bool):
            return int(value)
        return value if isinstance(value, int | float) else str(value).lower()

    present = [r for r in rows if r.get(key_name) not in (None, "")]
    missing = [r for r in rows if r.get(key_name) in (None, "")]
    return sorted(present, key=key, reverse=descending) + missing


def shown_columns(
    filters: Filters, rows: Sequence[dict[str, Any]] = (), source: str = col.COIN
) -> tuple[col.Column, ...]:
    """What ``show`` shows for the same ranking (``columns.view_columns``: the ranked
    metric's column always) and the columns the visitor added; the error column only when
    an entry has one. A stand-in build is said by the banner above (``header``), not by a
    column of "yes" the window has no width for. Labelled for the board's ``source``."""
    config = None if filters.config == ALL_CONFIGS else filters.config
    chosen = col.view_columns(config, filters.metric, filters.extra_columns, source=source)
    errors = "error" in filters.extra_columns or any(r.get("error") for r in rows)
    return tuple(c for c in chosen if c.name != "error" or errors)


# Each column's width in the page, pixels, by column name, else by type: the default
# columns and a ranked column of another metric fit a 1400-pixel window; a narrower one
# scrolls the table sideways, the rank and the model pinned (``page.PINNED``). A long value
# wraps in its cell.
_WIDTHS = {"rank": 44, "name": 126, "tier": 72, "coverage": 72, "params_b": 58,
           "weights": 64, "toolkit": 106, "frames": 56, "date": 84, "contamination": 78,
           "stand_in": 64, "error": 126}  # fmt: skip
_TYPE_WIDTHS = {col.METRIC: 114, col.TEXT: 84, col.INT: 54, col.FLOAT: 54, col.BOOL: 54,
                col.RANK: 44}  # fmt: skip


def column_widths(columns: Sequence[col.Column]) -> tuple[int, ...]:
    """The columns' widths in pixels."""
    return tuple(_WIDTHS.get(c.name, _TYPE_WIDTHS[c.type]) for c in columns)


_DATATYPES = {col.INT: "number", col.FLOAT: "number", col.BOOL: "str"}


def table(rows: Sequence[dict[str, Any]], columns: Sequence[col.Column]) -> Table:
    """Rows as cells: a metric as "value [low, high]", text as one bounded line (Gradio
    shows a ``str`` cell as text: submitted names cannot become markup)."""
    data = []
    for row in rows:
        cells = []
        for c in columns:
            value = row.get(c.name)
            if c.type == col.METRIC:
                low, high = (row.get(k) for k in col.interval_keys(c.name))
                # the interval kept on one line: a narrow cell breaks after the value
                cells.append(text.interval(value, low, high).replace(", ", ",\u00a0"))
            elif c.name == "coverage":
                cells.append(f"{value:.1%}" if isinstance(value, int | float) else "")
            elif c.type in (col.INT, col.FLOAT):
                cells.append(value if isinstance(value, int | float) else None)
            elif c.type == col.BOOL:
                cells.append("yes" if value else "")
            else:
                cells.append(text.plain(value))
        data.append(tuple(cells))
    return Table(
        headers=tuple(c.label for c in columns),
        data=tuple(data),
        datatypes=tuple(
            "str" if c.name == "coverage" else _DATATYPES.get(c.type, "str") for c in columns
        ),
        widths=column_widths(columns),
        slugs=tuple(str(r.get("slug") or "") for r in rows),
    )


def choices(rows: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """The values the filters offer: those on the board, ``unknown`` for entries stating none."""
    rows = list(rows)
    return {
        "toolkits": sorted({_value_of(r, "toolkit") for r in rows}),
        "weights": sorted({_value_of(r, "weights") for r in rows}),
        "tiers": [t for t in TIERS if any(r.get("tier") == t for r in rows)] or list(TIERS),
        "configs": [ALL_CONFIGS, *sd.CONFIGS],
    }


def params_range(rows: Iterable[dict[str, Any]]) -> tuple[float, float]:
    """0 to the largest parameter count on the board (billions), for the range sliders."""
    sizes = [r["params_b"] for r in rows if isinstance(r.get("params_b"), int | float)]
    return 0.0, float(max(sizes, default=1.0))


def ranking_method(board: Board, filters: Filters) -> str:
    """The words above the table: what ranks, and how a tie is honest."""
    config = col.DEFAULT_CONFIG if filters.config == ALL_CONFIGS else filters.config
    metric = col.METRIC_LABELS.get(filters.metric, filters.metric)
    c = board.config
    return (
        f"**Ranking:** entries are ranked in the **{config}** config by **{metric}** "
        f"(`{filters.metric}`, the column {text.md(col.BY_NAME[plot_column(filters)].label)}; "
        f"{'lower' if filters.metric in col.LOWER_IS_BETTER else 'higher'} is better). "
        f"Ranks come from a paired bootstrap over the build's "
        f"{c.videos or 'scored'} videos ({c.resamples} resamples, seed {c.seed}): A is better "
        "than B when the 2.5% quantile of A − B is above 0. A rank is shown as low–high: "
        "low = 1 + the entries better than it, high = the entries not worse than it, so "
        "entries that cannot be told apart share a range. Values in brackets are bootstrap "
        "95% intervals over videos. Reported rows are the paper's figures, not re-scored here "
        "and not ranked: the ranked rows come first, then the rows not ranked, by their "
        "value where they have one."
    )


def header(board: Board) -> str:
    """The board's identity and every note (a stale metric first), escaped."""
    c = board.config
    lines = [
        "# SPLICE leaderboard",
        f"Build `{text.plain(c.build_id)}` · metric version `{text.plain(c.metric_version)}` · "
        f"{len({e.slug for e in board.entries})} entries",
    ]
    if board.stand_in:
        lines.append(f"> ⚠️ **{text.md(STAND_IN_NOTE)}**")
    if board.stale:
        lines.append(
            "> **Stale scores:** some scores on this board come from another metric version "
            "than the installed one; a maintainer runs `splice leaderboard rescore`."
        )
    lines.extend(f"> **Note:** {text.md(n)}" for n in board.notes)
    return "\n\n".join(lines)


def points(rows: Iterable[dict[str, Any]], name: str) -> list[Point]:
    """The entries with a parameter count and a value in column ``name``."""
    out = []
    for r in rows:
        params, value = r.get("params_b"), r.get(name)
        if isinstance(params, int | float) and params > 0 and isinstance(value, int | float):
            low, high = (r.get(k) for k in col.interval_keys(name))
            out.append(Point(float(params), float(value), low, high, r.get("weights") != "closed"))
    return out


def plot_column(filters: Filters) -> str:
    config = col.DEFAULT_CONFIG if filters.config == ALL_CONFIGS else filters.config
    return col.metric_column(config, filters.metric)


def params_plot(rows: Sequence[dict[str, Any]], filters: Filters) -> Any:
    name = plot_column(filters)
    return score_vs_params(points(rows, name), col.BY_NAME[name].label)


@dataclass(frozen=True)
class Rendered:
    """Everything the board page shows on its first render."""

    header: str
    method: str
    table: Table
    choices: dict[str, list[str]]
    params: tuple[float, float]
    plot: Any
    entries: tuple[tuple[str, str], ...]  # (shown name, folder) of every entry, ranked


def render_board(board: Board, filters: Filters = Filters()) -> Rendered:
    """The board page's first render, without a server (the bench times this)."""
    rows = rows_for(board, filters)
    everything = rows if filters == Filters() else board_rows(board)
    return Rendered(
        header=header(board),
        method=ranking_method(board, filters),
        table=table(rows, shown_columns(filters, rows, board.config.source_title)),
        choices=choices(everything),
        params=params_range(everything),
        plot=params_plot(rows, filters),
        entries=entry_names(everything),
    )


def entry_names(rows: Iterable[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """(shown name, folder) of each row: the entry menu's choices (text, never markup)."""
    seen: dict[str, str] = {}
    for row in rows:
        seen.setdefault(str(row["slug"]), text.plain(row["name"]))
    return tuple((name, slug) for slug, name in seen.items())
