"""The board's rows (``table.board_rows``) as text: the terminal table of ``show``, and
``export``'s Markdown, CSV, JSON and HTML. Names and provenance are submitted text, so
every format escapes them: HTML by ``html.escape``, Markdown by backslash-escaping its
markup (a name cannot become a link, an image or a table cell), CSV by the csv module
(and a leading ``=``, ``+``, ``-``, ``@`` quoted so a spreadsheet never runs it).
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Sequence
from typing import Any

from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard.records import Board

METHOD = (
    "Ranks: paired bootstrap over videos ({resamples} resamples, seed {seed}); A is better "
    "than B when the 2.5% quantile of A - B is above 0; rank = 1 + entries better .. entries "
    "not worse (a range is a tie). Intervals: bootstrap 95% over videos."
)


def method(board: Board) -> str:
    return METHOD.format(resamples=board.config.resamples, seed=board.config.seed)


def view_columns(config: str | None) -> tuple[col.Column, ...]:
    """The default columns, a config's metric columns only when one is asked for."""
    return tuple(c for c in col.shown() if config is None or c.config is None or c.config == config)


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


def terminal(board: Board, rows: Sequence[dict[str, Any]], config: str | None) -> str:
    columns = view_columns(config)
    cells = [[_clean(cell_text(c, r))[:60] for c in columns] for r in rows]
    head = [c.label for c in columns]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(head)]
    lines = [
        *board.notes,
        f"board: build {board.config.build_id[:16]}, metric {board.config.metric_version}",
    ]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.append(method(board))
    return "\n".join(lines)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", _clean(text))


def markdown(board: Board, rows: Sequence[dict[str, Any]], config: str | None) -> str:
    from splice_build.output.card import markdown_table

    columns = view_columns(config)
    body = [[md_escape(cell_text(c, r)) for c in columns] for r in rows]
    notes = [f"> {md_escape(n)}" for n in board.notes]
    return (
        "\n\n".join(
            [*notes, markdown_table([c.label for c in columns], body), md_escape(method(board))]
        )
        + "\n"
    )


def _csv_safe(text: str) -> str:
    return "'" + text if text[:1] in ("=", "+", "-", "@") and not _number(text) else text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# A CSV has no place above its header for the note every view shows while scores come from
# another metric version: each row carries it in this last column (empty on a fresh board).
NOTE_COLUMN = "board_note"


def csv_text(board: Board, rows: Sequence[dict[str, Any]]) -> str:
    """Every column, raw values and intervals, one row per entry, and the board's note."""
    names = []
    for c in col.COLUMNS:
        names.append(c.name)
        if c.type == col.METRIC:
            names += list(col.interval_keys(c.name))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*names, NOTE_COLUMN])
    note = _clean(" ".join(board.notes))
    for row in rows:
        cells = ["" if row.get(n) is None else str(row.get(n)) for n in names]
        writer.writerow([_csv_safe(c) for c in [*cells, note]])
    return out.getvalue()


def json_document(
    board: Board, config: str | None, metric: str, rows: Sequence[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``show --json``: the board, and each entry per config with its rank by ``metric``."""
    from splice_eval.leaderboard.table import ranks
    from splice_metric import metric_version

    entries = []
    for cfg_name in [config] if config else sorted({e.config for e in board.entries if e.config}):
        found = ranks(board, cfg_name, metric)
        for e in board.entries:
            if e.config != cfg_name:
                continue
            data = e.as_dict()
            data["rank_low"], data["rank_high"] = found.get(e.slug, (None, None))
            entries.append(data)
    higher = metric not in col.LOWER_IS_BETTER
    entries.sort(key=lambda e: (e["rank_low"] is None, _order(e, metric, higher), e["name"]))
    entries += [e.as_dict() for e in board.entries if e.error]
    return {
        "build_id": board.config.build_id,
        "metric_version": board.config.metric_version,
        "installed_metric_version": metric_version(),
        "ranking": {"config": config, "metric": metric, "method": method(board)},
        "notes": list(board.notes),
        "entries": entries,
    }


def _order(entry: dict[str, Any], metric: str, higher: bool) -> float:
    value = entry["metrics"].get(metric, {}).get("value")
    if value is None:
        return float("inf")
    return -value if higher else value


def html_page(board: Board, rows: Sequence[dict[str, Any]], config: str | None) -> str:
    columns = view_columns(config)
    esc = html.escape
    head = "".join(f'<th title="{esc(c.description)}">{esc(c.label)}</th>' for c in columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{esc(cell_text(c, r))}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in board.notes)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>SPLICE leaderboard</title></head><body>\n"
        f"<h1>SPLICE leaderboard</h1>{notes}\n<table>\n<thead><tr>{head}</tr></thead>\n"
        f"<tbody>\n{body}\n</tbody></table>\n<p>{esc(method(board))}</p>\n</body></html>\n"
    )


def export(
    board: Board, rows: Sequence[dict[str, Any]], fmt: str, config: str | None, metric: str
) -> str:
    if fmt == "md":
        return markdown(board, rows, config)
    if fmt == "csv":
        return csv_text(board, rows)
    if fmt == "html":
        return html_page(board, rows, config)
    return json.dumps(json_document(board, config, metric), indent=1, ensure_ascii=False) + "\n"
