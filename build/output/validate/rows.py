"""A clip-shard row's own invariants, clips not decoded: ``num_clips`` within 2..7 and
equal to every list's length, ``duration`` the sum of ``clip_durations``, and an answer
whose order is a permutation agreeing with its non-empty, non-overlapping segments."""

from __future__ import annotations

import math
from typing import Any

from splice_build.records import ROUNDING
from splice_dataset import (
    ANSWER,
    CAPTIONS,
    CLIP_DURATIONS,
    CLIPS,
    DURATION,
    MAX_CLIPS,
    MIN_CLIPS,
    NUM_CLIPS,
)


def check_row(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(column, what) problems of one clip-shard row (text rows are checked by comparing
    them with these)."""
    out: list[tuple[str, str]] = []
    n = row.get(NUM_CLIPS)
    if not isinstance(n, int) or not MIN_CLIPS <= n <= MAX_CLIPS:
        return [(NUM_CLIPS, f"{n!r} is not within {MIN_CLIPS}..{MAX_CLIPS}")]
    for col in (CLIPS, CAPTIONS, CLIP_DURATIONS):
        if len(row.get(col) or []) != n:
            out.append((col, f"{len(row.get(col) or [])} entries for num_clips={n}"))
    durations = row.get(CLIP_DURATIONS) or []
    if len(durations) == n and not math.isclose(
        row.get(DURATION) or 0.0, math.fsum(durations), abs_tol=1e-6
    ):
        out.append((DURATION, f"{row.get(DURATION)} is not the sum of clip_durations"))
    out += check_answer(row, n)
    return out


def check_answer(row: dict[str, Any], n: int) -> list[tuple[str, str]]:
    """(column, what) problems of the answer struct of a row of ``n`` clips."""
    answer = row.get(ANSWER) or {}
    out: list[tuple[str, str]] = []
    order = answer.get("order") or []
    segments = answer.get("segments") or []
    step_ids = answer.get("step_ids") or []
    if sorted(order) != list(range(1, n + 1)):
        out.append((f"{ANSWER}.order", f"{order} is not a permutation of 1..{n}"))
    for name, value in (("segments", segments), ("step_ids", step_ids)):
        if len(value) != n:
            out.append((f"{ANSWER}.{name}", f"{len(value)} entries for {n} clips"))
    if len(segments) == n and all(s and s["start"] is not None for s in segments):
        out += _check_segments(order, segments)
    return out


def _check_segments(order: list[int], segments: list[dict[str, float]]) -> list[tuple[str, str]]:
    """The segments of a row (one per clip, each with a start): non-empty, not
    overlapping, and in the order the answer gives when that is a permutation."""
    out: list[tuple[str, str]] = []
    n = len(segments)
    for k, s in enumerate(segments, start=1):
        if not s["end"] > s["start"] >= 0:
            out.append((f"{ANSWER}.segments", f"segment of clip {k} is {s}: empty"))
    chrono = sorted(range(1, n + 1), key=lambda label: segments[label - 1]["start"])
    if sorted(order) == list(range(1, n + 1)) and chrono != list(order):
        out.append((f"{ANSWER}.order", f"{order} disagrees with the segments' order {chrono}"))
    for a, b in zip(chrono, chrono[1:], strict=False):
        if segments[a - 1]["end"] > segments[b - 1]["start"] + ROUNDING:
            out.append((f"{ANSWER}.segments", f"segments of clips {a} and {b} overlap"))
    return out
