"""The other configs' shards (``video``, ``text``): each must hold the full config's rows,
projected to its columns, compared by digest so that no clip is decoded twice."""

from __future__ import annotations

from pathlib import Path

from splice_build.output.shards import ShardInfo
from splice_build.output.validate.full_config import digest
from splice_build.output.validate.layout import config_rows
from splice_build.output.validate.problems import Problem
from splice_dataset import FULL_CONFIG, VIDEO_ID, columns, shard_dir


def check_against_full(
    config: str,
    paths: list[Path],
    seen: dict[str, dict[str, bytes]],
    infos: list[ShardInfo],
) -> list[Problem]:
    """A config's shards against ``seen`` (the full config's digests by video id and
    column); the shards that open are added to ``infos``."""
    problems: list[Problem] = []
    folder = shard_dir(config)
    found: set[str] = set()
    for rel, i, row in config_rows(config, paths, problems, infos):
        vid = row.get(VIDEO_ID)
        if vid in found:
            problems.append(Problem(rel, "duplicate video id", row=i, video_id=vid))
        found.add(vid)
        full = seen.get(vid)
        if full is None:
            problems.append(
                Problem(rel, f"video not in the {FULL_CONFIG} shards", row=i, video_id=vid)
            )
            continue
        for col in columns(config):
            if digest(row.get(col)) != full.get(col):
                problems.append(
                    Problem(rel, f"differs from the {FULL_CONFIG} shards' row", i, vid, col)
                )
    for vid in sorted(set(seen) - found):
        problems.append(Problem(folder, f"video missing from the {config} shards", video_id=vid))
    return problems
