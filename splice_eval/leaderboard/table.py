"""THE board's table: ``load_board`` reads a board (a folder, or a Hub dataset repository
fetched read-only), ``board_rows`` turns it into rows keyed by ``columns``. ``show``,
``export`` and the web page all render these rows and nothing else, so they never
disagree on a number, a rank or a note.

Reading is cheap whatever the board's size: the scores, ranks and tiers come from the
board's ``index.json``, which the scorer writes after every change (rebuilt from the
entries' ``score.json`` files when it is missing or older than one of them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import splice_dataset as sd
from splice_build.errors import UserError
from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard.records import (
    REPRODUCED,
    STALE_PREFIX,
    STAND_IN_NOTE,
    TIERS,
    Board,
    Entry,
    MetricValue,
    distinct_labels,
)


def board_folder(path_or_repo: str | os.PathLike) -> Path:
    """A board's local folder: the folder itself, or a Hub dataset repository's snapshot
    (read-only, for the Space and ``show --board ORG/NAME``)."""
    if sd.is_hub_id(path_or_repo):
        from huggingface_hub import snapshot_download

        try:
            local = snapshot_download(
                str(path_or_repo),
                repo_type="dataset",
                allow_patterns=["board.yaml", "index.json", "videos.json", "entries/*/*"],
            )
        except Exception as exc:  # noqa: BLE001 - the Hub's many errors, said in one line
            raise UserError(
                f"--board {path_or_repo}: cannot fetch it from the Hub ({exc})"
            ) from None
        return Path(local)
    return Path(path_or_repo)


def load_board(path_or_repo: str | os.PathLike) -> Board:
    """The board at a folder or Hub dataset repository, ranked by the board's ranking
    metric; a score from another metric version than the installed one is a note every
    view prints (``Board.notes``)."""
    from splice_eval.leaderboard import index

    folder = board_folder(path_or_repo)
    return index.load(folder, str(path_or_repo), writable=not sd.is_hub_id(path_or_repo))


def entry_details(board: Board, slug: str) -> list[Entry]:
    """One submission's entries (every config) with their breakdowns, for its page."""
    from splice_eval.leaderboard import index

    return index.details(Path(board.path), slug)


def _value(entry: Entry | None, metric: str) -> MetricValue | None:
    return None if entry is None else entry.metrics.get(metric)


def _sort_key(
    ranked: bool, value: MetricValue | None, higher_better: bool
) -> tuple[int, int, float]:
    """The one order of every ranking: ranked rows first (by the metric, so by rank), then
    the rows this ranking cannot rank (the paper's reported figures, entries without the
    config) by their value of the metric where they state one, then the rest; ties by name."""
    if value is None or value.value is None:
        return (int(not ranked), 1, 0.0)
    return (int(not ranked), 0, -value.value if higher_better else value.value)


def board_rows(
    board: Board, config: str | None = None, metric: str = col.DEFAULT_METRIC
) -> list[dict[str, Any]]:
    """The ranked table: one row per submission, its configs' metrics side by side, ranked
    in ``config`` (default ``columns.DEFAULT_CONFIG``) by ``metric``; with ``config`` only
    submissions that answered it. Rows are ranked rows first, by that metric (best first),
    then unranked rows (``_sort_key``); ``rank`` is the honest rank range
    (``records.Entry.rank_text``); ``stand_in`` is the board's (``Board.stand_in``)."""
    if metric not in col.METRICS:
        raise UserError(f"--metric {metric}: expected one of {', '.join(col.METRICS)}")
    if config is not None and config not in sd.CONFIGS:
        raise UserError(f"--config {config}: expected one of {', '.join(sd.CONFIGS)}")
    rank_config = config or col.DEFAULT_CONFIG
    found = ranks(board, rank_config, metric)
    by_slug: dict[str, dict[str, Entry]] = {}
    for entry in board.entries:
        by_slug.setdefault(entry.slug, {})[entry.config] = entry
    higher = metric not in col.LOWER_IS_BETTER
    labels = distinct_labels(board.entries)  # two entries of one name told apart
    rows = []
    for slug, entries in by_slug.items():
        if config is not None and config not in entries and "" not in entries:
            continue  # (an unreadable entry, config "", is shown in every view)
        ranked = entries.get(rank_config)
        first = ranked or next(iter(entries.values()))
        row = _row(first, entries, metric)
        row["name"] = labels.get(slug, row["name"])
        low, high = found.get(slug, (None, None))
        row["rank_low"], row["rank_high"] = low, high
        row["rank"] = Entry(**{**_fields(first), "rank_low": low, "rank_high": high}).rank_text
        row[col.STAND_IN] = board.stand_in
        row["_sort"] = _sort_key(low is not None, _value(ranked, metric), higher)
        rows.append(row)
    rows.sort(key=lambda r: (r.pop("_sort"), str(r["name"]).lower()))
    return rows


def _fields(entry: Entry) -> dict[str, Any]:
    return {f: getattr(entry, f) for f in Entry.__dataclass_fields__}


def ranks(board: Board, config: str, metric: str) -> dict[str, tuple[int | None, int | None]]:
    """Each submission's rank range in ``config`` by ``metric``: the board's precomputed
    ranks for its ranking metric, computed from the stored per-video scores otherwise."""
    if any(e.ranks for e in board.entries):  # indexed: every metric's ranks
        return {
            e.slug: e.ranks[metric]
            for e in board.entries
            if e.config == config and metric in e.ranks
        }
    if metric == board.ranking_metric:
        return {
            e.slug: (e.rank_low, e.rank_high)
            for e in board.entries
            if e.config == config and e.rank_low is not None
        }
    from splice_eval.leaderboard import index

    return index.ranks_for(Path(board.path), config, metric)


def _tier(entries: dict[str, Entry]) -> str:
    tiers = {e.tier for e in entries.values()}
    return REPRODUCED if REPRODUCED in tiers else min(tiers, key=TIERS.index, default="")


def _row(first: Entry, entries: dict[str, Entry], metric: str) -> dict[str, Any]:
    prov = first.provenance
    generation = ", ".join(f"{k}={v}" for k, v in sorted(prov.generation.items()))
    row: dict[str, Any] = {
        "name": first.name,
        "tier": _tier(entries),
        "kind": first.kind,
        "coverage": first.coverage,
        "partial": any(e.partial for e in entries.values()),
        "configs": ", ".join(c for c in sd.CONFIGS if c in entries),
        "slug": first.slug,
        "prediction_file": first.prediction_file,
        "metric_version": first.metric_version,
        "error": "; ".join(e.error for e in entries.values() if e.error) or None,
        **{name: getattr(prov, name) for name in col.PROVENANCE_COLUMNS if name != "generation"},
        "generation": generation,
    }
    for column in col.COLUMNS:
        if column.type != col.METRIC:
            continue
        low_key, high_key = col.interval_keys(column.name)
        if column.name == col.VISUAL_GAIN:
            value = _visual_gain(entries, metric)
        else:
            value = _value(entries.get(column.config or ""), column.metric or "")
        row[column.name] = None if value is None else value.value
        row[low_key] = None if value is None else value.low
        row[high_key] = None if value is None else value.high
    return row


def _visual_gain(entries: dict[str, Entry], metric: str) -> MetricValue | None:
    """video_text minus text by ``metric``: the paired interval stored by the scorer for
    the ranking metric, the plain difference otherwise (and for reported rows)."""
    stored = _value(entries.get("video_text"), f"{col.VISUAL_GAIN}:{metric}")
    if stored is not None:
        return stored
    vt, tx = _value(entries.get("video_text"), metric), _value(entries.get("text"), metric)
    if vt is None or tx is None:
        return None
    return MetricValue(vt.value - tx.value)


def notes_lines(board: Board) -> list[str]:
    """What every view prints above the table: the stand-in banner, then the board's notes
    (a board scored with another metric)."""
    return [*([STAND_IN_NOTE] if board.stand_in else []), *board.notes]


def is_stale_note(note: str) -> bool:
    return note.startswith(STALE_PREFIX)
