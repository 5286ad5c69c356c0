"""The card's tables and sizes, in the one format ``validate`` reads them back with:
Table 1 / Table 6, the statistics sentence, the domain table and the Fields table, each
produced here so that ``splice validate`` checks a card against the shards with the very
same formatting (and the scoring tables share ``markdown_table`` without loading the
card's ``datasets`` and ``huggingface_hub`` imports)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from splice_build.output.stats import BIN_LABELS, BuildStats
from splice_build.plural import counted
from splice_dataset import WRITTEN_CONFIGS, features

TABLE1_HEADER = ("# of Clips", "# of Videos", "Average Duration (s)")
TABLE6_HEADER = ("Segments", "Videos", "Clips", "Mean Time (s)", "Std Dev", *BIN_LABELS)

# What each field holds, for the card's Fields table (types come from the schema).
_FIELD_BLURB = {
    "video_id": "the source video's id (COIN's key: a YouTube id)",
    "question_id": "the question's id: `<video_id>/p<k>` for the k-th pair of a video, the "
    "video id for its one multiple-choice question",
    "task": "the source's task (COIN: one of 180)",
    "domain": "the source's domain (COIN: one of 12; a source without domains: its name)",
    "recipe_type": "COIN's id of the task (null for other sources)",
    "coin_subset": "COIN's own split of the video (`training` or `testing`; null for "
    "other sources)",
    "num_clips": "n, the number of clips (2 to 7)",
    "duration": "the sum of the clips' durations, in seconds",
    "clips": 'the clips as MP4 bytes, in label order: clip `k` is "Video k"',
    "captions": "each clip's step description (the source's step label), in label order",
    "clip_durations": "each clip's duration in seconds, in label order",
    "labels": "the labels of the clips the question shows, in the order shown",
    "options": "the candidate answers, each a sequence of labels",
}
# The same on a card of another source than COIN, which says nothing of COIN's taxonomy.
_SOURCE_BLURB = {
    "video_id": "the source video's id",
    "task": "the source's task",
    "domain": "the source's domain (a source without domains: its name)",
    "recipe_type": "null in this build (the task id of COIN's taxonomy, which no other source has)",
    "coin_subset": "null in this build (COIN's own split of a video, which no other source keeps)",
    "step_ids": "each clip's step id in its source (its own id, else a stable hash of the "
    "task and caption), in label order",
}
_ANSWER_BLURB = {
    "order": "the labels in chronological order (the reference)",
    "segments": "each clip's start and end in the source video, in label order",
    "step_ids": "each clip's step id in its source (COIN: the taxonomy's step id), in label order",
    "option": "the 1-based number of the right option",
    "num_options": "how many options the question has",
}


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table1_rows(stats: BuildStats) -> list[tuple[str, ...]]:
    """Table 1's body as the card prints it (also what ``validate`` compares against)."""
    return [(str(r.num_clips), str(r.videos), _fmt(r.mean_duration)) for r in stats.rows]


def table6_rows(stats: BuildStats) -> list[tuple[str, ...]]:
    rows = [
        (
            str(r.num_clips),
            str(r.videos),
            str(r.clips),
            _fmt(r.mean_duration),
            _fmt(r.std_duration),
            *(str(b) for b in r.bins),
        )
        for r in stats.rows
    ]
    rows.append(
        ("**all**", str(stats.videos), str(stats.clips), "", "", *map(str, stats.bin_totals))
    )
    return rows


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The card's one table format; ``validate`` finds a table by this header line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def stats_summary(stats: BuildStats, paper: bool = True) -> str:
    """The card's statistics sentence (``splice validate`` recomputes it from the rows);
    ``paper``: beside the paper's curated COIN build's counts (a COIN card only)."""
    return (
        f"{counted(stats.videos, 'video')} from {counted(len(stats.domains), 'domain')} "
        f"and {counted(stats.tasks, 'task')}, segmented into {counted(stats.clips, 'clip')}; "
        f"{stats.duration / 3600:.2f} hours of "
        "clips." + (" (The paper's curated build: 3,381 videos, 11,423 clips.)" if paper else "")
    )


def domain_table(stats: BuildStats) -> str:
    rows = [
        (d.domain, str(d.tasks), str(d.videos), str(d.clips), f"{d.duration / 60:.1f}")
        for d in stats.domains
    ]
    total = ("**all**", str(stats.tasks), str(stats.videos), str(stats.clips))
    rows.append((*total, f"{stats.duration / 60:.1f}"))
    return markdown_table(("Domain", "Tasks", "Videos", "Clips", "Minutes"), rows)


def _type_name(feature: Any) -> str:
    """A ``datasets`` feature as the Fields table writes it: ``list of int32``, ``Video``."""
    from datasets import List, Value, Video

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, Video):
        return "Video"
    if isinstance(feature, List):
        return f"list of {_type_name(feature.feature)}"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"
    raise TypeError(f"no name for the feature {feature!r}")


def field_rows(coin: bool = True) -> str:
    """The card's Fields table: every column of every written config, its type from the
    schema (``features``), what it holds and the configs that have it (``coin``: in COIN's
    words, else in any source's)."""
    own = {} if coin else _SOURCE_BLURB
    seen: dict[tuple[str, str], list[str]] = {}
    for config in WRITTEN_CONFIGS:
        for name, feature in features(config).items():
            seen.setdefault((name, _type_name(feature)), []).append(config)
    rows = []
    for (name, type_name), configs in seen.items():
        if name == "answer":
            parts = features(configs[0])[name]
            about = "; ".join(f"`{k}`: {own.get(k, _ANSWER_BLURB[k])}" for k in parts)
            about = f"never a model input: {about}"
        else:
            about = own.get(name, _FIELD_BLURB[name])
        shown = "all" if len(configs) == len(WRITTEN_CONFIGS) else ", ".join(configs)
        rows.append((f"`{name}`", f"`{type_name}`", about, shown))
    return markdown_table(("field", "type", "what it holds", "configs"), rows)


def human_size(n: int) -> str:
    """A byte count as the Hub shows sizes (decimal units), for cards and checks."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")
