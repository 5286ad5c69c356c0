"""The other configs' shards (``video``, ``text``): each must hold the full config's rows,
projected to its columns, compared by digest so that no clip is decoded twice."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from splice_build.output.validate.layout import Shard, read_back
from splice_build.output.validate.parts import PartResult
from splice_build.output.validate.problems import Problem
from splice_dataset import FULL_CONFIG, columns, shard_dir


def check_against_full(
    config: str,
    shards: list[Shard],
    results: Mapping[tuple[str, int], PartResult],
    seen: dict[str, dict[str, bytes]],
    where: Mapping[str, tuple[str, int]] | None = None,
) -> list[Problem]:
    """A config's shards, from their parts' ``results``, against ``seen`` (the full
    config's digests by video id and column, in its row order), in the order the rows are
    stored: the same rows in the same order, and for a clip config (``where``: the full
    config's shard file and row of each video) in the same shard at the same row, so the
    two clip configs' row groups hold the same clips."""
    problems: list[Problem] = []
    found: set[str] = set()
    order = list(seen)
    misplaced = False
    for shard in shards:
        own, done = read_back(shard, results)
        problems += own
        for record in (record for result in done for record in result.rows):
            problems += _check_row(config, shard.rel, record, seen, found)
            k, vid = len(found) - 1, record.video_id
            place = (Path(shard.rel).name, record.row)
            if misplaced or vid not in seen:
                continue
            if (k < len(order) and order[k] != vid) or (where and where.get(vid) != place):
                misplaced = True
                what = f"video not where the {FULL_CONFIG} shards hold it: rows reordered"
                problems.append(Problem(shard.rel, what, record.row, vid))
    for vid in sorted(set(seen) - found):
        problems.append(
            Problem(shard_dir(config), f"video missing from the {config} shards", video_id=vid)
        )
    return problems


def _check_row(config, rel, record, seen, found) -> list[Problem]:
    i, vid = record.row, record.video_id
    out = []
    if vid in found:
        out.append(Problem(rel, "duplicate video id", row=i, video_id=vid))
    found.add(vid)
    full = seen.get(vid)
    if full is None:
        return [*out, Problem(rel, f"video not in the {FULL_CONFIG} shards", row=i, video_id=vid)]
    for col in columns(config):
        if record.digests[col] != full.get(col):
            out.append(Problem(rel, f"differs from the {FULL_CONFIG} shards' row", i, vid, col))
    return out
