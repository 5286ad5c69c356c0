"""The board's rows (``table.board_rows``) as text: the terminal table of ``show``, and
``export``'s Markdown, CSV, JSON and HTML. Names and provenance are submitted text, so
every format escapes them: HTML by ``html.escape``, Markdown by backslash-escaping its
markup (a name cannot become a link, an image or a table cell), CSV by the csv module
(``csv_cell``: a formula's start neutralized at a cell's start and after any CR, LF or tab,
and such cells quoted, so a spreadsheet never runs one).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard.records import STAND_IN_NOTE, Board
from splice_eval.leaderboard.table import notes_lines

METHOD = (
    "Ranks: paired bootstrap over videos ({resamples} resamples, seed {seed}); A is better "
    "than B when the 2.5% quantile of A - B is above 0; rank = 1 + entries better .. entries "
    "not worse (a range is a tie). Intervals: bootstrap 95% over videos."
)


def method(board: Board) -> str:
    return METHOD.format(resamples=board.config.resamples, seed=board.config.seed)


def ranking_line(config: str | None, metric: str) -> str:
    """What a view ranks by, by name (the config and the metric as ``--config`` and
    ``--metric`` take them)."""
    better = "lower" if metric in col.LOWER_IS_BETTER else "higher"
    return f"ranking: {config or col.DEFAULT_CONFIG} config by {metric} ({better} is better)"


def board_line(board: Board) -> str:
    c = board.config
    return f"board: build {c.build_id[:16]}, metric version {c.metric_version}, {c.videos} videos"


def view_columns(
    board: Board, rows: Sequence[dict[str, Any]], config: str | None, metric: str
) -> tuple[col.Column, ...]:
    """``columns.view_columns`` for this board: the error column only when an entry has one
    (an always-empty column costs every view its width)."""
    columns = col.view_columns(
        config, metric, stand_in=board.stand_in, source=board.config.source_title
    )
    errors = any(r.get("error") for r in rows)
    return tuple(c for c in columns if c.name != "error" or errors)


def cell_text(column: col.Column, row: dict[str, Any], *, interval: bool = True) -> str:
    value = row.get(column.name)
    if value is None or value == "":
        return ""
    if column.type == col.METRIC:
        low, high = (row.get(k) for k in col.interval_keys(column.name))
        text = f"{value:.4f}"
        if interval and low is not None and high is not None:
            text += f" [{low:.3f}, {high:.3f}]"
        return text
    if column.type == col.FLOAT:
        return f"{value:.3g}" if column.name != "coverage" else f"{value:.1%}"
    if column.type == col.BOOL:
        return "yes" if value else ""
    return str(value)


def _clean(text: str) -> str:
    """One line of text (terminal, tables): control characters and newlines as spaces."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", text)


def terminal_width() -> int | None:
    """The width ``show`` fits: ``COLUMNS`` when set (as shells export it), the terminal's
    when printing to one, else none (a pipe or a file gets every column)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def terminal(
    board: Board,
    rows: Sequence[dict[str, Any]],
    config: str | None,
    metric: str = col.DEFAULT_METRIC,
    width: int | None = None,
) -> str:
    """``show``: the ranking by name, the table, the method. Fitted to ``width`` (default
    ``terminal_width``): the rank, the model, the ranked metric and an entry's error always
    stay; other columns leave from the right until the table fits, and a line names them."""
    width = terminal_width() if width is None else width
    columns = list(view_columns(board, rows, config, metric))
    cells = {c.name: [_clean(cell_text(c, r))[:60] for r in rows] for c in columns}
    widths = {c.name: max([len(c.label)] + [len(v) for v in cells[c.name]]) for c in columns}
    ranked = col.metric_column(config or col.DEFAULT_CONFIG, metric)
    keep = {"rank", "name", ranked, col.STAND_IN, "error"}
    hidden: list[col.Column] = []
    while width and sum(widths[c.name] + 2 for c in columns) - 2 > width:
        droppable = [c for c in columns if c.name not in keep]
        if not droppable:
            break
        hidden.insert(0, droppable[-1])
        columns.remove(droppable[-1])

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(widths[c.name]) for v, c in zip(values, columns, strict=True))

    def words(text: str) -> list[str]:
        return textwrap.wrap(text, width) if width else [text]

    lines = [w for n in notes_lines(board) for w in words(n)]
    lines += [*words(ranking_line(config, metric)), *words(board_line(board))]
    lines.append(line([c.label for c in columns]).rstrip())
    lines.append(line(["-" * widths[c.name] for c in columns]))
    lines += [line([cells[c.name][i] for c in columns]).rstrip() for i in range(len(rows))]
    if hidden:
        shown = ", ".join(c.label for c in hidden)
        lines += words(
            f"not shown to fit {width} columns: {shown} (a wider terminal or COLUMNS shows "
            "them; export --format csv has every column)"
        )
    lines += words(method(board))
    return "\n".join(lines)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", _clean(text))


def markdown(board: Board, rows: Sequence[dict[str, Any]], config: str | None, metric: str) -> str:
    """A Markdown table: submitted text escaped, our numbers as written (``0.8486``)."""
    from splice_build.output.card import markdown_table

    columns = view_columns(board, rows, config, metric)

    def cell(c: col.Column, r: dict[str, Any]) -> str:
        text = cell_text(c, r)
        return md_escape(text) if c.type == col.TEXT else text

    body = [[cell(c, r) for c in columns] for r in rows]
    banner = [f"> **{STAND_IN_NOTE}**"] if board.stand_in else []
    notes = [*banner, *(f"> **{md_escape(n)}**" for n in board.notes)]
    c = board.config
    ranking = (
        f"{ranking_line(config, metric).capitalize()}. Build `{c.build_id}`, metric version "
        f"`{c.metric_version}`, {c.videos} videos."
    )
    table = markdown_table([c.label for c in columns], body)
    return "\n\n".join([*notes, ranking, table, method(board)]) + "\n"


# OWASP's CSV injection characters: a cell, or a line of one (a spreadsheet starts a new
# row at a CR or LF and may split at a tab), starting with one of them is read as a formula.
_FORMULA_START = re.compile(r"(?:^|(?<=[\r\n\t]))(?=[=+\-@\t\r])")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?")
_QUOTED = re.compile(r'[,"\r\n\t]')


def csv_cell(text: str) -> str:
    """A CSV cell a spreadsheet never runs: a quote before every formula start (at the
    cell's start and after any CR, LF or tab; our numbers, such as ``-0.04``, as they are),
    and the cell quoted when it holds a comma, a quote, a CR, an LF or a tab."""
    if not _NUMBER.fullmatch(text):
        text = _FORMULA_START.sub("'", text)
    if _QUOTED.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


# A CSV has no place above its header for the notes every view shows (a stand-in build's
# banner, scores from another metric version): each row carries them in this last column
# (empty on a fresh board of a real build).
NOTE_COLUMN = "board_note"


def csv_text(board: Board, rows: Sequence[dict[str, Any]]) -> str:
    """Every column, raw values and intervals, one row per entry, and the board's note."""
    names = []
    for c in col.COLUMNS:
        names.append(c.name)
        if c.type == col.METRIC:
            names += list(col.interval_keys(c.name))
    note = _clean(" ".join(notes_lines(board)))

    def value(row: dict[str, Any], name: str) -> str:
        v = row.get(name)
        if isinstance(v, bool):
            return "yes" if v else ""
        return "" if v is None else str(v)

    lines = [",".join(csv_cell(n) for n in [*names, NOTE_COLUMN])]
    for row in rows:
        lines.append(",".join(csv_cell(c) for c in [*(value(row, n) for n in names), note]))
    return "\n".join(lines) + "\n"


def json_document(
    board: Board, config: str | None, metric: str, rows: Sequence[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``show --json``: the board, and each entry per config with its rank by ``metric``."""
    from splice_eval.leaderboard.table import ranks
    from splice_metric import metric_version

    marked = board.stand_in
    entries = []
    for cfg_name in [config] if config else sorted({e.config for e in board.entries if e.config}):
        found = ranks(board, cfg_name, metric)
        for e in board.entries:
            if e.config != cfg_name:
                continue
            data = e.as_dict() | {col.STAND_IN: marked}
            data["rank_low"], data["rank_high"] = found.get(e.slug, (None, None))
            entries.append(data)
    higher = metric not in col.LOWER_IS_BETTER
    entries.sort(key=lambda e: (e["rank_low"] is None, _order(e, metric, higher), e["name"]))
    entries += [e.as_dict() | {col.STAND_IN: marked} for e in board.entries if e.error]
    return {
        "build_id": board.config.build_id,
        "metric_version": board.config.metric_version,
        "installed_metric_version": metric_version(),
        "ranking": {"config": config, "metric": metric, "method": method(board)},
        "stand_in": marked,
        "banner": STAND_IN_NOTE if marked else None,
        "notes": list(board.notes),
        "entries": entries,
    }


def _order(entry: dict[str, Any], metric: str, higher: bool) -> float:
    value = entry["metrics"].get(metric, {}).get("value")
    if value is None:
        return float("inf")
    return -value if higher else value


def html_page(board: Board, rows: Sequence[dict[str, Any]], config: str | None, metric: str) -> str:
    columns = view_columns(board, rows, config, metric)
    esc = html.escape
    head = "".join(f'<th title="{esc(c.description)}">{esc(c.label)}</th>' for c in columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{esc(cell_text(c, r))}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    notes = "".join(f'<p class="note"><strong>{esc(n)}</strong></p>' for n in notes_lines(board))
    c = board.config
    ranking = (
        f"<p>{esc(ranking_line(config, metric).capitalize())}. Build <code>{esc(c.build_id)}"
        f"</code>, metric version <code>{esc(c.metric_version)}</code>, {c.videos} videos.</p>"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>SPLICE leaderboard</title></head><body>\n"
        f"<h1>SPLICE leaderboard</h1>{notes}\n{ranking}\n<table>\n<thead><tr>{head}</tr></thead>\n"
        f"<tbody>\n{body}\n</tbody></table>\n<p>{esc(method(board))}</p>\n</body></html>\n"
    )


def export(
    board: Board, rows: Sequence[dict[str, Any]], fmt: str, config: str | None, metric: str
) -> str:
    if fmt == "md":
        return markdown(board, rows, config, metric)
    if fmt == "csv":
        return csv_text(board, rows)
    if fmt == "html":
        return html_page(board, rows, config, metric)
    return json.dumps(json_document(board, config, metric), indent=1, ensure_ascii=False) + "\n"


def write_export(path: Path, text: str) -> None:
    """``export --out``: the file written whole, or one line saying why it cannot be (a
    folder given, a folder on the way missing or a file)."""
    from splice_build.atomic import atomic_path

    if path.is_dir():
        raise UserError(f"--out {path}: is a folder; name a file in it (e.g. {path / 'board.md'})")
    parent = path.parent
    if not parent.is_dir():
        what = "is a file, not a folder" if parent.exists() else "does not exist"
        raise UserError(f"--out {path}: the folder {parent} {what}")
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
