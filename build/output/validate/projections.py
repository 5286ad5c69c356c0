"""The other configs' shards (``video``, ``text``): each must hold the full config's rows,
projected to its columns, compared by digest so that no clip is decoded twice."""

from __future__ import annotations

from collections.abc import Mapping

from splice_build.output.validate.layout import Shard, read_back
from splice_build.output.validate.parts import PartResult
from splice_build.output.validate.problems import Problem
from splice_dataset import FULL_CONFIG, columns, shard_dir


def check_against_full(
    config: str,
    shards: list[Shard],
    results: Mapping[tuple[str, int], PartResult],
    seen: dict[str, dict[str, bytes]],
) -> list[Problem]:
    """A config's shards, from their parts' ``results``, against ``seen`` (the full
    config's digests by video id and column), in the order the rows are stored."""
    problems: list[Problem] = []
    found: set[str] = set()
    for shard in shards:
        own, done = read_back(shard, results)
        problems += own
        for record in (record for result in done for record in result.rows):
            problems += _check_row(config, shard.rel, record, seen, found)
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
