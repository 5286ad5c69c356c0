"""The rules every source obeys, each a named skip reason (``<code>: <detail>``) counted on
the build's card; the 2..7 segment count is `stages.select`'s rule.

Applied to each `base.RawVideo` in this order:

1. ``invalid-video-id``: ids become file names (letters, digits, ``-``, ``_``; at most 64),
   and ``duplicate-video``: an id given twice is skipped in every copy.
2. A source's own step rules (Goal-Step's relevance) drop steps, counted by their code.
3. ``background-label``: a step labelled as background (``SIL``, ``background``...) is no
   step: dropped and counted, the video stays.
4. ``out-of-order``: the steps must be listed chronologically (the chronology *is* the
   answer); a file listing them otherwise is not re-sorted but its video skipped.
5. Repeated steps, ONE rule for every source: adjacent steps with the same caption merge
   into one (first start to last end); a video in which a caption still repeats is
   skipped (``repeated-step``), because two clips with one caption make the answer of
   ``video_text`` and ``text`` ambiguous. The exception is COIN's default (``keep``), which
   keeps COIN as the paper published it (about 40% of its videos repeat a label), so that a
   COIN build keeps its ``build_id``; ``--repeated-steps merge`` applies the rule to COIN.
6. ``overlapping-steps``: a step starting before the previous one ends (beyond
   ``records.ROUNDING``) skips the video: no frame may belong to two clips.
7. ``too-short-step``: a step shorter than ``--min-step-seconds`` (1 s, the shortest COIN
   step, so that every step keeps a frame at the build's least 1 fps) skips the video.
   COIN's default is 0 (as published; COIN has no step under 1 s).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from splice_build.records import ROUNDING, Skip, Step, VideoEntry
from splice_build.sources.base import (
    IngestResult,
    RawStep,
    RawVideo,
    SourceCard,
    SourceOptions,
)

STAGE = "ingest"
BACKGROUND_LABELS = frozenset({"sil", "background", "bg", "action_start", "action_end"})
MIN_STEP_SECONDS = 1.0
_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]+")
# Longest video id kept (YouTube's are 11 characters): every name the build makes from an id
# must fit, the tightest being a WebDataset member, `<id>.video<k>.mp4`, in a USTAR header's
# 100 bytes; a longer id is skipped here rather than failing the whole build there.
MAX_VIDEO_ID = 64
# The codes of the shared rules, and what a reason without one is counted as.
CODES = (
    "invalid-video-id",
    "duplicate-video",
    "background-label",
    "out-of-order",
    "repeated-step",
    "overlapping-steps",
    "too-short-step",
)
INVALID_ENTRY = "invalid-entry"


class Rejected(Exception):
    """One video breaks a rule; ``str`` is the skip reason, ``code`` its rule."""

    def __init__(self, code: str, detail: str):
        super().__init__(f"{code}: {detail}")
        self.code = code


def reason_code(reason: str) -> str:
    """The rule of a skip reason (``repeated-step: ...`` -> ``repeated-step``); COIN's
    checks of a malformed entry count as ``invalid-entry``."""
    code = reason.split(":", 1)[0]
    return code if re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", code) else INVALID_ENTRY


def resolved(options: SourceOptions | None, source: str) -> SourceOptions:
    """The options with each None replaced by the source's default: COIN as published
    (repeats kept, no least step length), every other source the one rule."""
    options = options or SourceOptions()
    coin = source == "coin"
    return SourceOptions(
        repeated_steps=options.repeated_steps or ("keep" if coin else "merge"),
        min_step_seconds=(
            options.min_step_seconds
            if options.min_step_seconds is not None
            else (0.0 if coin else MIN_STEP_SECONDS)
        ),
        level=options.level,
    )


def check_video_id(video_id: str) -> None:
    if not _VIDEO_ID.fullmatch(video_id):
        raise Rejected(
            "invalid-video-id",
            f"video id {video_id!r} is not a plain id (letters, digits, - and _)",
        )
    if len(video_id) > MAX_VIDEO_ID:
        raise Rejected(
            "invalid-video-id",
            f"video id of {len(video_id)} characters is too long (at most {MAX_VIDEO_ID})",
        )


def merge_repeats(steps: Iterable[Step]) -> tuple[Step, ...]:
    """Adjacent steps with the same caption as one step, from the first's start to the last's
    end (the first's id)."""
    merged: list[Step] = []
    for step in steps:
        if merged and merged[-1].label == step.label:
            first = merged[-1]
            merged[-1] = Step(first.step_id, first.label, first.start, max(first.end, step.end))
        else:
            merged.append(step)
    return tuple(merged)


def check_steps(steps: tuple[Step, ...], options: SourceOptions) -> tuple[Step, ...]:
    """Rules 5-7 on a video's chronological steps: the steps kept, or `Rejected`."""
    if options.repeated_steps == "merge":
        steps = merge_repeats(steps)
        seen: dict[str, int] = {}
        for i, step in enumerate(steps):
            if step.label in seen:
                raise Rejected(
                    "repeated-step",
                    f"caption {step.label!r} at steps {seen[step.label] + 1} and {i + 1}, "
                    "not adjacent (merged where adjacent)",
                )
            seen[step.label] = i
    for i in range(1, len(steps)):
        prev, cur = steps[i - 1], steps[i]
        if cur.start < prev.end - ROUNDING:
            raise Rejected(
                "overlapping-steps",
                f"step {i + 1} [{cur.start:g}, {cur.end:g}] starts before step {i} "
                f"[{prev.start:g}, {prev.end:g}] ends",
            )
    least = options.min_step_seconds or 0.0
    for i, step in enumerate(steps):
        if step.end - step.start < least - ROUNDING:
            raise Rejected(
                "too-short-step",
                f"step {i + 1} {step.label!r} lasts {step.end - step.start:g} s, under {least:g} s",
            )
    return steps


def entry_of(raw: RawVideo, options: SourceOptions, removed: Counter[str]) -> VideoEntry:
    """Rules 1-7 on one video (``options`` resolved); the steps dropped are counted into
    ``removed`` only when the video is kept."""
    check_video_id(raw.video_id)
    dropped: Counter[str] = Counter()
    kept: list[RawStep] = []
    for step in raw.steps:
        if step.dropped:
            dropped[step.dropped] += 1
        elif step.background or step.label.strip().casefold() in BACKGROUND_LABELS:
            dropped["background-label"] += 1
        else:
            kept.append(step)
    for i in range(1, len(kept)):
        if kept[i].start < kept[i - 1].start - ROUNDING:
            raise Rejected(
                "out-of-order",
                f"step {i + 1} starts at {kept[i].start:g} s, before step {i} "
                f"({kept[i - 1].start:g} s): steps not listed chronologically",
            )
    steps = check_steps(tuple(Step(s.step_id, s.label, s.start, s.end) for s in kept), options)
    ends = [s.end for s in steps]
    duration = raw.duration if raw.duration is not None else max(ends, default=0.0)
    removed.update(dropped)
    return VideoEntry(
        video_id=raw.video_id,
        task=raw.task,
        domain=raw.domain,
        recipe_type=None,  # COIN's column: null for every other source
        subset=None,
        duration=duration,
        video_url=raw.video_url,
        steps=steps,
    )


def apply(
    raws: Iterable[RawVideo], options: SourceOptions, skips: Iterable[Skip] = ()
) -> tuple[list[VideoEntry], list[Skip], dict[str, int]]:
    """Every rule on a source's videos (``options`` resolved; ``skips``: the source's own,
    kept): the entries and the skips sorted by video id, and the steps removed by rule."""
    raws = list(raws)
    counts = Counter(r.video_id for r in raws)
    removed: Counter[str] = Counter()
    entries: list[VideoEntry] = []
    out = list(skips)
    for raw in sorted(raws, key=lambda r: r.video_id):
        try:
            if counts[raw.video_id] > 1:
                raise Rejected("duplicate-video", f"video id given {counts[raw.video_id]} times")
            entries.append(entry_of(raw, options, removed))
        except Rejected as exc:
            out.append(Skip(raw.video_id, STAGE, str(exc)))
    out = sorted({(s.video_id, s.reason): s for s in out}.values(), key=lambda s: s.video_id)
    return entries, out, dict(sorted(removed.items()))


def ingested(
    path: Path,
    sha256: str,
    raws: Iterable[RawVideo],
    options: SourceOptions | None,
    source: SourceCard,
    skips: Iterable[Skip] = (),
) -> IngestResult:
    """An adapter's result: its videos through every rule (``skips``: its own rules')."""
    options = resolved(options, source.name)
    entries, out, removed = apply(raws, options, skips)
    settings = {
        "repeated_steps": options.repeated_steps,
        "min_step_seconds": options.min_step_seconds,
    }
    return IngestResult(path, sha256, entries, out, source, removed, settings)


def skip_counts(skips: Iterable[Skip]) -> dict[str, int]:
    """Skips by rule code, for the card."""
    return dict(sorted(Counter(reason_code(s.reason) for s in skips).items()))


__all__ = [
    "BACKGROUND_LABELS",
    "CODES",
    "MAX_VIDEO_ID",
    "MIN_STEP_SECONDS",
    "Rejected",
    "apply",
    "check_steps",
    "check_video_id",
    "entry_of",
    "ingested",
    "merge_repeats",
    "reason_code",
    "resolved",
    "skip_counts",
]
