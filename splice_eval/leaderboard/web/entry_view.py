"""An entry's page, free of widgets: its provenance, its scores per config with intervals,
its breakdowns (domain, clip count, reasoning group), the two plots and where its prediction
file is. Every value a submitter wrote is escaped (``text``); numbers are ours."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import splice_dataset as sd

from .. import columns as col
from ..records import BREAKDOWNS, REFERENCE, Board, Entry, MetricValue
from ..store import ENTRIES, PREDICTIONS_STEM
from ..table import entry_details
from . import text
from .plots import by_clip_count, by_domain

BREAKDOWN_TITLES = {
    "domain": "by domain",
    "num_clips": "by clip count",
    "reasoning_group": "by reasoning group (the paper's section 7.5)",
}
# The reference rows drawn as lines on the clip-count plot, found by a word of their folder.
LINES = ("random", "human")


@dataclass(frozen=True)
class EntryPage:
    title: str  # Markdown, escaped
    provenance: str  # Markdown, escaped
    scores: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]  # headers, rows
    breakdowns: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]
    clip_plot: Any
    domain_plot: Any
    prediction_files: tuple[Path, ...]  # every file the entry holds, as submitted


def _ordered(entries: Sequence[Entry]) -> list[Entry]:
    rank = {c: i for i, c in enumerate(sd.CONFIGS)}
    return sorted(entries, key=lambda e: rank.get(e.config, len(rank)))


def _shown_config(entries: Sequence[Entry]) -> Entry:
    """The config the plots show: the board's ranking config when answered."""
    for entry in entries:
        if entry.config == col.DEFAULT_CONFIG:
            return entry
    return entries[0]


def title(entries: Sequence[Entry], board: Board) -> str:
    first = entries[0]
    configs = ", ".join(e.config for e in entries)
    lines = [
        f"## {text.md(first.name)}",
        f"tier **{text.md(first.tier)}** · {text.md(first.kind)} · configs {text.md(configs)} · "
        f"coverage {first.coverage:.1%}" + (" · **partial**" if first.partial else ""),
    ]
    stale = {e.metric_version for e in entries if e.metric_version} - {board.config.metric_version}
    if stale:
        lines.append(
            f"> **Stale scores:** scored with metric version {text.md(', '.join(sorted(stale)))}"
            f", not the board's {text.md(board.config.metric_version)}; rescore the board."
        )
    for entry in entries:
        if entry.error:
            lines.append(f"> **Unreadable ({text.md(entry.config)}):** {text.md(entry.error)}")
    return "\n\n".join(lines)


def provenance(entry: Entry, source: str = col.COIN) -> str:
    """A two-column Markdown table of the provenance fields, labelled as ``columns`` labels
    them on a board of ``source``; values escaped cell by cell."""
    labels = {c.name: c.label for c in col.for_source(col.COLUMNS, source)}
    values = entry.provenance.as_dict()
    lines = ["### Provenance", "", "| field | value |", "|---|---|"]
    for name in col.PROVENANCE_COLUMNS:
        value = values.get(name)
        if name == "generation" and isinstance(value, dict):
            value = text.plain(value)
        if value in (None, "", {}):
            continue
        lines.append(f"| {text.md(labels[name])} | {text.md(value)} |")
    if len(lines) == 4:
        lines.append("| (none stated) | |")
    return "\n".join(lines)


def scores(
    entries: Sequence[Entry], board: Board | None = None
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """One row per config: its rank on the board (by the board's ranking metric, as the
    board shows it) and every metric the entry has, "value [low, high]"."""
    ranked = {(e.slug, e.config): e.rank_text for e in board.entries} if board else {}
    names = [m for m in col.METRIC_LABELS if any(m in e.metrics for e in entries)]
    headers = ("config", "rank", *(col.METRIC_LABELS[m] for m in names))
    rows = []
    for e in entries:
        cells = [text.interval(*_triple(e.metrics.get(m))) for m in names]
        rows.append((e.config, ranked.get((e.slug, e.config)) or e.rank_text, *cells))
    return headers, tuple(rows)


def _triple(value: MetricValue | None) -> tuple[float | None, float | None, float | None]:
    return (None, None, None) if value is None else (value.value, value.low, value.high)


def breakdowns(entries: Sequence[Entry]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Every breakdown cell of every config: breakdown, key, config, value [low, high]."""
    rows = []
    for kind in BREAKDOWNS:
        for e in entries:
            cells = e.breakdowns.get(kind, {})
            for key in sorted(cells, key=_key_order):
                rows.append((BREAKDOWN_TITLES[kind], text.plain(key), e.config, _cell(cells[key])))
    return ("breakdown", "group", "config", "value [95% interval]"), tuple(rows)


def _cell(value: MetricValue) -> str:
    return text.interval(*_triple(value))


def _key_order(key: Any) -> tuple[int, int, str]:
    s = str(key)
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def _line_candidates(board: Board, word: str) -> list[str]:
    """Reference rows named for ``word``: scored here first ("random-exact", "human"),
    the paper's reported row ("paper-human") last."""
    slugs = sorted(
        {e.slug for e in board.entries if e.kind == REFERENCE and word in e.slug},
        key=lambda s: (s.startswith("paper-"), not s.endswith("exact"), s),
    )
    return slugs


def reference_lines(
    board: Board, config: str, keys: Sequence[str]
) -> dict[str, dict[str, MetricValue]]:
    """The random and human lines of the clip-count plot in ``config``: a reference row's
    breakdown by clip count where the board scored one (random-exact, the human protocol's
    row), else the paper's overall figure drawn flat (labelled so)."""
    lines: dict[str, dict[str, MetricValue]] = {}
    for word in LINES:
        for slug in _line_candidates(board, word):
            entry = next((e for e in entry_details(board, slug) if e.config == config), None)
            if entry is None:
                continue
            if entry.breakdowns.get("num_clips"):
                lines[word] = dict(entry.breakdowns["num_clips"])
                break
            overall = entry.metrics.get(board.ranking_metric)
            if overall is not None and keys:
                lines[f"{word} (paper, all videos)"] = {k: MetricValue(overall.value) for k in keys}
                break
    return lines


def prediction_files(board: Board, slug: str) -> tuple[Path, ...]:
    """Every prediction file the entry holds, as submitted (one per run: configs, probes,
    question formats), inside the board only."""
    root = Path(board.path).resolve()
    folder = (root / ENTRIES / slug).resolve()
    if not folder.is_relative_to(root) or not folder.is_dir():
        return ()
    return tuple(
        p
        for p in sorted(folder.glob(f"{PREDICTIONS_STEM}*"))
        if p.is_file() and p.resolve().is_relative_to(folder)
    )


def render_entry(board: Board, slug: str) -> EntryPage | None:
    """The entry page of ``slug``; None when the board has no such entry."""
    if not any(e.slug == slug for e in board.entries):
        return None
    entries = _ordered(entry_details(board, slug))
    if not entries:
        return None
    shown = _shown_config(entries)
    metric_label = col.METRIC_LABELS.get(board.ranking_metric, board.ranking_metric)
    label = f"{shown.config} {metric_label}"
    clips = shown.breakdowns.get("num_clips", {})
    return EntryPage(
        title=title(entries, board),
        provenance=provenance(entries[0], board.config.source_title),
        scores=scores(entries, board),
        breakdowns=breakdowns(entries),
        clip_plot=by_clip_count(clips, reference_lines(board, shown.config, list(clips)), label),
        domain_plot=by_domain(shown.breakdowns.get("domain", {}), label),
        prediction_files=prediction_files(board, slug),
    )
