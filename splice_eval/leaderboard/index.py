"""``index.json``: every entry's summary, its rank range and tier, derived from the
entries' ``score.json`` files in one pass (ranks need every entry's per-video scores at
once) and written after each change, so ``show`` and the page read one file.

It is a cache, never a source: a board whose entry folders differ from it (added, removed,
a score.json of another size) is indexed again when read; a read-only board (a Hub
snapshot) is indexed in memory. Every metric's ranks are indexed (``Entry.ranks``), so
ranking by any of them reads this file and computes nothing.

A score.json is the board's own file, yet a board folder can be edited by hand or arrive
in a pull request: an entry is ranked only when its score could have been written by the
scorer (``_untrusted``): a reported row is exactly one of the paper's, a row without
prediction files is the paper's or ``random (exact)``, its provenance holds to the meta
rules. Any other is shown with its error and never ranked (``rescore`` removes it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard import statistics as stats
from splice_eval.leaderboard import store
from splice_eval.leaderboard.records import (
    REPORTED,
    REPRODUCED,
    RESCORED,
    STALE_PREFIX,
    Board,
    BoardConfig,
    Entry,
    MetricValue,
    Provenance,
)
from splice_eval.leaderboard.submission import decode_values

INDEX_SCHEMA = 2
RANDOM_EXACT = "random-exact"  # the slug init gives the metric's random expectation


def _stamps(board: Path) -> dict[str, int]:
    out = {}
    for slug in store.entry_slugs(board):
        path = board / store.ENTRIES / slug / store.SCORE_FILE
        try:
            out[slug] = path.stat().st_size
        except OSError:
            out[slug] = -1
    return out


def _metric(value: dict[str, Any]) -> MetricValue:
    return MetricValue(value["value"], value.get("low"), value.get("high"))


def _entries_of(slug: str, score: dict[str, Any], breakdowns: bool) -> list[Entry]:
    """A score.json's entries, one per config."""
    provenance = Provenance(**score.get("provenance", {}))
    files = score.get("prediction_files") or []
    out = []
    for config, block in score["configs"].items():
        out.append(
            Entry(
                name=str(score["name"]),
                slug=slug,
                config=config,
                # a stored tier is the scorer's (reported or rescored); reproduced is found
                tier=REPORTED if score.get("tier") == REPORTED else RESCORED,
                kind=score.get("kind", "model"),
                coverage=float(block.get("coverage", 1.0)),
                partial=bool(block.get("partial", False)),
                metrics={m: _metric(v) for m, v in block["metrics"].items()},
                provenance=provenance,
                breakdowns={
                    b: {k: _metric(v) for k, v in cells.items()}
                    for b, cells in block.get("breakdowns", {}).items()
                }
                if breakdowns
                else {},
                metric_version=score.get("metric_version", ""),
                prediction_file=f"{store.ENTRIES}/{slug}/{files[0]}" if files else "",
            )
        )
    return out


def _read_score(board: Path, slug: str) -> dict[str, Any]:
    return store.read_json(board / store.ENTRIES / slug / store.SCORE_FILE)


def _broken(slug: str, exc: Exception, what: str = "score.json unreadable") -> Entry:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return Entry(name=slug, slug=slug, config="", error=f"{what}: {reason}"[:300])


class Untrusted(ValueError):
    """A score.json the scorer could not have written."""


def _paper_rows() -> dict[str, dict[str, Any]]:
    from splice_eval.leaderboard.references import paper_scores

    return {"paper-" + store.slug_of(p["provenance"]["model"]): p for p in paper_scores()}


def _untrusted(slug: str, score: dict[str, Any], papers: dict[str, dict[str, Any]]) -> None:
    """Raise ``Untrusted`` when the entry's score could not come from the scorer."""
    from splice_build.errors import UserError
    from splice_eval.leaderboard.meta import checked, shown_values

    files = score.get("prediction_files") or []
    paper = papers.get(slug)
    if score.get("tier") == REPORTED:
        if paper is None or files:
            raise Untrusted(
                "a reported row that is not one of the paper's: only init makes them; "
                "`splice leaderboard rescore` removes it"
            )
        if {k: score.get(k) for k in paper} != paper:
            raise Untrusted("a reported row that is not the paper's as published")
    elif not files and slug != RANDOM_EXACT:
        raise Untrusted(
            "no prediction files: only init makes rows without them (the paper's and "
            "random (exact)); `splice leaderboard rescore` removes it"
        )
    try:
        checked(shown_values(Provenance(**score.get("provenance", {}))), "provenance")
    except UserError as exc:
        raise Untrusted(str(exc)) from None


def _scores(board: Path) -> Iterator[tuple[str, dict[str, Any] | None, Entry | None]]:
    papers = _paper_rows()
    for slug in store.entry_slugs(board):
        try:
            score = _read_score(board, slug)
            _entries_of(slug, score, breakdowns=False)  # checks the shape
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            yield slug, None, _broken(slug, exc)
            continue
        try:
            _untrusted(slug, score, papers)
        except Untrusted as exc:
            yield slug, None, _broken(slug, exc, "not ranked")
            continue
        yield slug, score, None


def _vectors(
    board: Path, metric: str, num_clips: np.ndarray, scores: list | None = None
) -> dict[str, dict[str, np.ndarray]]:
    """config -> slug -> per-video values of ``metric`` (entries that store them)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for slug, score, _ in _scores(board) if scores is None else scores:
        for config, block in (score or {}).get("configs", {}).items():
            stored = block.get("per_video", {}).get(metric)
            if stored is None:
                continue
            try:
                out.setdefault(config, {})[slug] = decode_values(metric, stored, num_clips)
            except ValueError:
                continue
    return out


def _num_clips(board: Path) -> np.ndarray:
    return store.read_videos(board).clip_counts()


def compute_ranks(
    board: Path, cfg: BoardConfig, metric: str, scores: list | None = None
) -> dict[str, dict[str, tuple[int, int]]]:
    """config -> slug -> (rank_low, rank_high) by ``metric``, on the board's resamples
    (``scores``: the entries' score.json already read, else read now)."""
    per_config = _vectors(board, metric, _num_clips(board), scores)
    out = {}
    for config, vecs in per_config.items():
        counts = stats.resample_counts(len(next(iter(vecs.values()))), cfg.resamples, cfg.seed)
        out[config] = stats.ranks_of(vecs, counts, metric not in col.LOWER_IS_BETTER)
    return out


def ranks_for(board: Path, config: str, metric: str) -> dict[str, tuple[int, int]]:
    return compute_ranks(board, store.read_config(board), metric).get(config, {})


def _reproduced(
    entries: list[Entry], metric: str, answers: dict[tuple[str, str], str]
) -> set[tuple[str, str]]:
    """(slug, config) of re-scored entries that an independent entry agrees with within
    their intervals: the same model and settings, another submitter (compared
    case-insensitively, both named) and other answers (``answers``: each entry's
    fingerprint of its orders; the same answers twice are one run, not two)."""
    from splice_eval.leaderboard.submission import settings_key

    by_key: dict[str, list[Entry]] = {}
    for e in entries:
        if e.tier == RESCORED and e.kind == "model" and e.provenance.model and not e.partial:
            by_key.setdefault(settings_key(e.provenance, e.config), []).append(e)
    out = set()
    for group in by_key.values():
        for a in group:
            for b in group:
                who_a, who_b = a.provenance.submitter.casefold(), b.provenance.submitter.casefold()
                if a.slug == b.slug or not who_a or not who_b or who_a == who_b:
                    continue
                fa, fb = answers.get((a.slug, a.config)), answers.get((b.slug, b.config))
                if not fa or not fb or fa == fb:
                    continue
                va, vb = a.metrics.get(metric), b.metrics.get(metric)
                if va is None or vb is None or None in (va.low, va.high, vb.low, vb.high):
                    continue
                if va.low <= vb.high and vb.low <= va.high:
                    out.add((a.slug, a.config))
    return out


def rebuild(board: Path, cfg: BoardConfig, *, write: bool = True) -> dict[str, Any]:
    """Index every entry (ranks by ``columns.DEFAULT_METRIC``), written unless ``write``
    is False (a read-only board)."""
    entries: list[Entry] = []
    scores = list(_scores(board))
    for slug, score, broken in scores:
        entries.extend([broken] if broken else _entries_of(slug, score, breakdowns=False))
    metric = col.DEFAULT_METRIC
    every = {m: compute_ranks(board, cfg, m, scores) for m in col.METRICS}
    ranks = every[metric]
    answers = {
        (slug, config): block.get("answers")
        for slug, score, _ in scores
        for config, block in (score or {}).get("configs", {}).items()
    }
    twins = _reproduced(entries, metric, answers)
    out = []
    for e in entries:
        low, high = ranks.get(e.config, {}).get(e.slug, (None, None))
        tier = REPRODUCED if (e.slug, e.config) in twins else e.tier
        mine = {m: r[e.config][e.slug] for m, r in every.items() if e.slug in r.get(e.config, {})}
        out.append(replace(e, rank_low=low, rank_high=high, tier=tier, ranks=mine).as_dict())
    index = {
        "schema": INDEX_SCHEMA,
        "ranking_metric": metric,
        "stamps": _stamps(board),
        "entries": out,
    }
    if write:
        try:
            store.write_json(board / store.INDEX_FILE, index)
        except OSError:
            pass  # a read-only folder: indexed in memory
    return index


def _entry(data: dict[str, Any]) -> Entry:
    return Entry(
        name=data["name"],
        slug=data["slug"],
        config=data["config"],
        tier=data["tier"],
        kind=data["kind"],
        coverage=data["coverage"],
        partial=data["partial"],
        metrics={m: _metric(v) for m, v in data["metrics"].items()},
        rank_low=data["rank_low"],
        rank_high=data["rank_high"],
        provenance=Provenance(**data["provenance"]),
        metric_version=data["metric_version"],
        prediction_file=data["prediction_file"],
        error=data["error"],
        ranks={m: (int(r[0]), int(r[1])) for m, r in data.get("ranks", {}).items()},
    )


def read_index(board: Path, cfg: BoardConfig, writable: bool = True) -> dict[str, Any]:
    """The board's index, indexed again when it does not match the entry folders."""
    path = board / store.INDEX_FILE
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
        if index.get("schema") == INDEX_SCHEMA and index.get("stamps") == _stamps(board):
            return index
    except (OSError, ValueError):
        pass
    return rebuild(board, cfg, write=writable)


def stale_notes(board_label: str, cfg: BoardConfig, entries: list[Entry]) -> list[str]:
    """The note every view prints while scores come from another metric version."""
    from splice_metric import metric_version

    installed = metric_version()
    old = sorted(
        {e.metric_version for e in entries if e.metric_version and e.metric_version != installed}
    )
    if cfg.metric_version != installed:
        old = sorted(set(old) | {cfg.metric_version})
    if not old:
        return []
    count = sum(1 for e in entries if e.metric_version and e.metric_version != installed)
    return [
        f"{STALE_PREFIX} scores from metric version {', '.join(old)} ({count} entries); the "
        f"installed metric is {installed}: run `splice leaderboard rescore --board "
        f"{board_label}`"
    ]


def load(board: Path, label: str, writable: bool = True) -> Board:
    cfg = store.read_config(board)
    index = read_index(board, cfg, writable)
    entries = [_entry(e) for e in index["entries"]]
    return Board(
        path=str(board),
        config=cfg,
        entries=tuple(entries),
        ranking_metric=index.get("ranking_metric", col.DEFAULT_METRIC),
        notes=tuple(stale_notes(label, cfg, entries)),
    )


def details(board: Path, slug: str) -> list[Entry]:
    """One entry's configs with breakdowns, from its score.json."""
    store.entry_dir(board, slug)  # a slug checked before it names a path
    try:
        return _entries_of(slug, _read_score(board, slug), breakdowns=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [_broken(slug, exc)]


__all__ = ["REPORTED", "load", "details", "rebuild", "ranks_for", "read_index"]
