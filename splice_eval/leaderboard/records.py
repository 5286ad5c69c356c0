"""The leaderboard's typed records: what a board folder holds once read (``table.load_board``)
and what every view (``show``, ``export``, the web page) renders from.

An entry is one submission's answers on one config, scored here (or, for the paper's
rows, reported by the authors). An entry that cannot be read stays on the board with its
``error``, so a broken folder is seen and fixed, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# How far an entry's numbers are checked: the authors' published figures (not re-scored
# here), predictions scored here with the board's metric, or re-scored predictions that a
# second, independent entry of the same model and settings agrees with within intervals.
REPORTED, RESCORED, REPRODUCED = "reported", "rescored", "reproduced"
TIERS = (REPORTED, RESCORED, REPRODUCED)
# What made an entry: a submitted model, or a reference row seeded by ``init`` (the paper's
# rows, random, the baselines, the human protocol).
MODEL, REFERENCE = "model", "reference"
KINDS = (MODEL, REFERENCE)
# Breakdowns an entry's page shows (the scorer's groups).
BREAKDOWNS = ("domain", "num_clips", "reasoning_group")


@dataclass(frozen=True)
class BoardConfig:
    """``board.yaml``: the build a board ranks and the metric its scores came from."""

    build_id: str  # the card's identity of the build (splice_build.output.card_reader)
    data: str  # where the build is loaded from (a folder or a Hub id), as given to init
    metric_version: str  # splice_metric.metric_version() when the scores were computed
    videos: int = 0  # the build's videos (every entry is scored over all of them)
    seed: int = 0  # the bootstrap's seed (intervals and ranks)
    resamples: int = 1000  # bootstrap resamples (at least 1,000)
    created: str = ""
    # the build's card says splice_build.stand_in: its clips were cut from rendered
    # stand-in videos (the demo's), not COIN's; every view says so (STAND_IN_NOTE)
    stand_in: bool = False
    # the build's source as its card names it (`columns.for_source` labels the board's
    # contamination column with it): COIN on a board made before other sources were read
    source_title: str = "COIN"


@dataclass(frozen=True)
class Provenance:
    """How an entry's answers were produced: from the prediction file's metadata where it
    records a value, else from ``meta.yaml`` (which cannot contradict the file)."""

    model: str = ""  # model id (e.g. a Hub id)
    revision: str = ""
    params_b: float | None = None  # parameters, billions
    weights: str = ""  # "open" | "closed" | ""
    toolkit: str = ""  # "splice run", "lmms-eval", "VLMEvalKit", "splice baseline", ...
    toolkit_version: str = ""
    backend: str = ""  # splice run's backend (openai, transformers, vllm)
    frames: str = ""  # frames per clip ("16") or a rate ("1fps")
    long_side: int | None = None  # pixels
    clips_as: str = ""  # "video" | "frames" (images)
    prompt_version: str = ""
    generation: Mapping[str, Any] = field(default_factory=dict)  # temperature, max tokens..
    date: str = ""
    submitter: str = ""
    contamination: str = ""  # "yes" | "no" | "unknown": training data includes the source?
    contamination_note: str = ""
    paper: str = ""  # a reference: where the figures come from (e.g. "Table 2")

    def as_dict(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        out["generation"] = dict(self.generation)
        return out


@dataclass(frozen=True)
class MetricValue:
    """A metric's value and its bootstrap 95% interval over videos (None: not computed,
    e.g. a reported row)."""

    value: float
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Entry:
    """One submission's answers on one config. ``slug`` names its folder on the board (the
    paper's rows and reference rows have their own); ``metrics`` maps a metric name
    (``columns.METRICS`` and the extras: question formats, probes) to its value;
    ``rank_low``/``rank_high`` are the honest rank range in its config by the board's
    ranking metric (None: not ranked, e.g. reported rows or an unreadable entry)."""

    name: str
    slug: str
    config: str
    tier: str = RESCORED
    kind: str = MODEL
    coverage: float = 1.0  # share of the build's videos answered
    partial: bool = False
    metrics: Mapping[str, MetricValue] = field(default_factory=dict)
    rank_low: int | None = None
    rank_high: int | None = None
    provenance: Provenance = Provenance()
    # breakdown name (BREAKDOWNS) -> key (a domain, a clip count, a group) -> value
    breakdowns: Mapping[str, Mapping[str, MetricValue]] = field(default_factory=dict)
    metric_version: str = ""  # the metric its scores came from ("" for reported rows)
    prediction_file: str = ""  # relative to the board, "" when there is none
    error: str | None = None  # why the entry could not be read
    # every ranking metric's (rank_low, rank_high) in this config (``rank_low``/``rank_high``
    # are the board's ranking metric's), indexed once per change
    ranks: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def rank_text(self) -> str:
        """The rank as shown: "3", or "2-4" for a tie range, "" when not ranked."""
        if self.rank_low is None or self.rank_high is None:
            return ""
        if self.rank_low == self.rank_high:
            return str(self.rank_low)
        return f"{self.rank_low}-{self.rank_high}"

    def as_dict(self) -> dict[str, Any]:
        """The entry as ``show --json`` prints it."""
        return {
            "name": self.name,
            "slug": self.slug,
            "config": self.config,
            "tier": self.tier,
            "kind": self.kind,
            "coverage": self.coverage,
            "partial": self.partial,
            "rank_low": self.rank_low,
            "rank_high": self.rank_high,
            "metrics": {k: v.as_dict() for k, v in self.metrics.items()},
            "provenance": self.provenance.as_dict(),
            "breakdowns": {
                b: {k: v.as_dict() for k, v in cells.items()}
                for b, cells in self.breakdowns.items()
            },
            "metric_version": self.metric_version,
            "prediction_file": self.prediction_file,
            "error": self.error,
            "ranks": {m: list(r) for m, r in self.ranks.items()},
        }


@dataclass(frozen=True)
class Board:
    """A board as read: its config, its entries (every config, unreadable ones included)
    and the notes every view prints at the top (scores from another metric version)."""

    path: str
    config: BoardConfig
    entries: tuple[Entry, ...]
    ranking_metric: str = "binary_accuracy"
    notes: tuple[str, ...] = ()

    @property
    def stand_in(self) -> bool:
        """Whether the board ranks a stand-in build (every view shows ``STAND_IN_NOTE``)."""
        return self.config.stand_in

    @property
    def stale(self) -> bool:
        """Whether any score came from another metric version than the installed one."""
        return any(n.startswith(STALE_PREFIX) for n in self.notes)


STALE_PREFIX = "STALE:"
# The banner of a board of a stand-in build (``Board.stand_in``), in every view and export.
STAND_IN_NOTE = (
    "STAND-IN BUILD: this board ranks a build cut from rendered stand-in videos (the demo's; "
    "its card says splice_build.stand_in: true), not COIN's: its scores say nothing about "
    "the benchmark, and the paper's rows beside them were measured on other videos"
)


def distinct_labels(entries: Sequence[Entry]) -> dict[str, str]:
    """slug -> how a row is named where two entries share a name: the name, then the
    submitter and date that tell them apart (then the slug, when those agree too)."""
    names: dict[str, list[Entry]] = {}
    for e in {e.slug: e for e in entries}.values():
        names.setdefault(e.name.casefold(), []).append(e)
    out = {}
    for group in names.values():
        for e in group:
            if len(group) == 1:
                out[e.slug] = e.name
                continue
            parts = [p for p in (e.provenance.submitter, e.provenance.date) if p]
            same = [
                o
                for o in group
                if [p for p in (o.provenance.submitter, o.provenance.date) if p] == parts
            ]
            if len(same) > 1 or not parts:
                parts.append(e.slug)
            out[e.slug] = f"{e.name} ({', '.join(parts)})"
    return out
