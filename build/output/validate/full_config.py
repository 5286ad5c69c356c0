"""The full config's rows (``video_text``, every column), checked in full: each row's own
invariants and its clips, one video id per row, every video of an import's manifest
present, and the labels shuffled. What they held stays behind, small, for the checks of
the other configs and of the card.

The rows are read and checked here, in order; their clips are handed to the executor as
they come (`clips.ClipTask`, a bounded number in flight) and their problems put back in
row order, so every number of workers reports the same list."""

from __future__ import annotations

import hashlib
import math
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from splice_build.output.clip_verdict import (
    ClipResult,
    ClipRule,
    ClipTask,
    VerifiedClips,
    check_clip_task,
)
from splice_build.output.release_manifest import MANIFEST, ReleaseManifest
from splice_build.output.shards import ShardInfo
from splice_build.output.stats import VideoStats
from splice_build.output.validate.clips import clip_task, named
from splice_build.output.validate.layout import config_rows
from splice_build.output.validate.problems import Problem
from splice_build.output.validate.progress import ClipProgress, Runner
from splice_build.output.validate.rows import check_row
from splice_dataset import ANSWER, CLIPS, FULL_CONFIG, NUM_CLIPS, VIDEO_ID, columns, shard_dir

# Below this probability of every video being in chronological order by chance, the build
# is reported as unshuffled.
UNSHUFFLED_P = 1e-6


@dataclass
class FullRows:
    """What the full config's shards held, kept while they are read."""

    seen: dict[str, dict[str, bytes]] = field(default_factory=dict)  # id -> column -> digest
    videos: list[VideoStats] = field(default_factory=list)  # in row order
    infos: list[ShardInfo] = field(default_factory=list)  # the shards that opened
    clips: int = 0
    identity_p: float = 1.0  # probability that every order so far is chronological by chance
    all_identity: bool = True  # every order so far is 1..n

    def add(self, vid: str, row: dict[str, Any]) -> None:
        self.seen[vid] = {c: digest(row.get(c)) for c in columns(FULL_CONFIG)}
        n = row.get(NUM_CLIPS) or 0
        self.clips += len(row.get(CLIPS) or [])
        order = (row.get(ANSWER) or {}).get("order") or []
        self.all_identity = self.all_identity and list(order) == list(range(1, n + 1))
        self.identity_p /= math.factorial(max(n, 0))
        self.videos.append(VideoStats.from_row(row))


def digest(value: Any) -> bytes:
    """A cell's value as a short digest: what the other configs' rows are compared by,
    so that only 32 bytes per column of every video stay in memory."""
    return hashlib.sha256(pickle.dumps(value, protocol=5)).digest()


def check_full_config(
    paths: list[Path],
    rule: ClipRule,
    manifest: ReleaseManifest | None,
    problems: list[Problem],
    *,
    verified: VerifiedClips | None = None,
    run: Runner | None = None,
    progress: ClipProgress | None = None,
) -> FullRows:
    """Check the full config's shards, adding to ``problems`` in the order found.

    ``verified``: the clips the build's workers checked (trusted by digest when the rule
    they met is at least as strict as ``rule``); ``run`` maps `check_clip_task` over the
    tasks (an executor's ``run``; default: here, one after the other)."""
    rows = FullRows()
    if verified is not None and not verified.covers(rule.tolerance, rule.tolerance_frames):
        verified = None
    found: list[list[Problem]] = []  # per row, in order

    def tasks():
        for rel, i, row in config_rows(FULL_CONFIG, paths, problems, rows.infos):
            own, task = _check_full_row(rel, i, row, rule, manifest, rows, len(found), verified)
            vid = row.get(VIDEO_ID) if isinstance(row.get(VIDEO_ID), str) else None
            found.append([Problem(rel, w, i, vid, c) for c, w in own])
            if task is not None:
                yield task

    where: dict[int, tuple[str, int, str]] = {}
    results: list[ClipResult] = []
    for result in (run or _here)(check_clip_task, _noted(tasks(), where)):
        results.append(result)
        if progress is not None:
            progress.update(result.clips, result.decoded)
    for result in results:
        rel, i, vid = where[result.index]
        found[result.index] += [Problem(rel, w, i, vid, c) for c, w in named(result)]
    for row_problems in found:
        problems += row_problems
    problems += _whole_config(rows, manifest)
    return rows


def _whole_config(rows: FullRows, manifest: ReleaseManifest | None) -> list[Problem]:
    """What only the whole config shows: a video of the manifest missing, no shuffle."""
    problems = []
    for vid in sorted(set(manifest.clips) - set(rows.seen)) if manifest else ():
        problems.append(Problem(MANIFEST, "video not in the clip shards", video_id=vid))
    if rows.videos and rows.all_identity and rows.identity_p < UNSHUFFLED_P:
        problems.append(
            Problem(
                shard_dir(FULL_CONFIG),
                "every video's clips are labelled in chronological order "
                f"(chance {rows.identity_p:.1e}): the labels give the order away",
                column=f"{ANSWER}.order",
            )
        )
    return problems


def _here(fn, tasks):
    return (fn(task, 1) for task in tasks)


def _noted(tasks, where: dict[int, tuple[str, int, str]]):
    """The tasks, remembering where each row was (its problems are placed by it)."""
    for rel, i, vid, task in tasks:
        where[task.index] = (rel, i, vid)
        yield task


def _check_full_row(
    rel: str,
    i: int,
    row: dict[str, Any],
    rule: ClipRule,
    manifest: ReleaseManifest | None,
    rows: FullRows,
    index: int,
    verified: VerifiedClips | None,
) -> tuple[list[tuple[str | None, str]], tuple[str, int, str, ClipTask] | None]:
    """The (column, what) problems of row ``i`` of shard ``rel`` but its clips', which
    come as a task (with where the row is); the row is then kept in ``rows``."""
    vid = row.get(VIDEO_ID)
    if not vid or not isinstance(vid, str):
        return [(VIDEO_ID, "no video_id")], None
    found = []
    if vid in rows.seen:
        found.append((None, "duplicate video id"))
    found += check_row(row)
    imported = None
    if manifest is not None:
        imported = manifest.clips.get(vid, ())
        if vid not in manifest.clips:
            found.append((VIDEO_ID, f"not in {MANIFEST}"))
    checked = verified.clips.get(vid) if verified is not None else None
    own, task = clip_task(index, row, rule, imported, checked)
    rows.add(vid, row)
    return found + own, (rel, i, vid, task)
