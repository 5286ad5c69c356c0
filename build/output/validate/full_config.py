"""The full config's rows (``video_text``, every column), checked in full: each row's own
invariants and its clips (in its part, `parts.check_part`), one video id per row, every
video of an import's manifest present, and the labels shuffled. What they held stays
behind, small, for the checks of the other configs and of the card.

The parts are made here with what the driver knows of their videos (the manifest's and
the build's records of them), and their results put back in row order, so every number
of workers reports the same list."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from splice_build.output.clip_verdict import ClipRule, VerifiedClips
from splice_build.output.release_manifest import MANIFEST, ReleaseManifest
from splice_build.output.stats import VideoStats
from splice_build.output.validate.layout import Shard, read_back
from splice_build.output.validate.parts import FullRule, Part, PartResult, RowRecord
from splice_build.output.validate.problems import Problem
from splice_dataset import ANSWER, CARD, FULL_CONFIG, VIDEO_ID, shard_dir

ORDER = f"{ANSWER}.order"
# Below this probability of every video being in chronological order by chance, the build
# is reported as unshuffled.
UNSHUFFLED_P = 1e-6


@dataclass
class FullRows:
    """What the full config's shards held, kept while they are read."""

    seen: dict[str, dict[str, bytes]] = field(default_factory=dict)  # id -> column -> digest
    videos: list[VideoStats] = field(default_factory=list)  # in row order
    clips: int = 0
    identity_p: float = 1.0  # probability that every order so far is chronological by chance
    all_identity: bool = True  # every order so far is 1..n
    seeded: int = 0  # rows whose order is the card seed's shuffle
    unseeded: list[Problem] = field(default_factory=list)  # the rows whose order is not
    where: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> (file, row)

    def add(self, vid: str, record: RowRecord) -> None:
        self.seen[vid] = record.digests
        self.clips += record.clips
        self.all_identity = self.all_identity and record.identity
        self.identity_p /= math.factorial(max(record.num_clips, 0))
        self.videos.append(record.stats)


def full_parts(
    shards: list[Shard],
    rule: ClipRule,
    manifest: ReleaseManifest | None,
    verified: VerifiedClips | None = None,
    seed: int | None = None,
) -> list[Part]:
    """The full config's parts, each with the rule and what the manifest and the build's
    workers (``verified``: trusted by digest when the rule they met is at least as strict
    as ``rule``) record of its videos; only their ids are read here."""
    if verified is not None and not verified.covers(rule.tolerance, rule.tolerance_frames):
        verified = None
    out = []
    for shard in shards:
        ids = _ids(shard) if manifest is not None or verified is not None else {}
        for part in shard.parts:
            held = [v for group in part.groups for v in ids.get(group.index, ())]
            out.append(
                replace(
                    part,
                    full=FullRule(
                        rule,
                        _of(manifest.clips, held) if manifest is not None else None,
                        _of(verified.clips, held) if verified is not None else None,
                        seed,
                    ),
                )
            )
    return out


def _of(records: Mapping[str, tuple], ids: list) -> dict[str, tuple]:
    return {v: records[v] for v in ids if isinstance(v, str) and v in records}


def _ids(shard: Shard) -> dict[int, list]:
    """Row group -> the video ids it holds (none for one that does not read: its part
    reports it)."""
    out: dict[int, list] = {}
    try:
        pf = pq.ParquetFile(shard.path)
    except (pa.ArrowException, OSError):
        return out
    for group in (g for part in shard.parts for g in part.groups):
        try:
            out[group.index] = pf.read_row_group(group.index, columns=[VIDEO_ID])[0].to_pylist()
        except (pa.ArrowException, OSError):
            pass
    return out


def check_full_config(
    shards: list[Shard],
    results: Mapping[tuple[str, int], PartResult],
    manifest: ReleaseManifest | None,
    problems: list[Problem],
) -> FullRows:
    """The full config's shards from their parts' ``results``, adding to ``problems``:
    the shards' own problems first, then each row's in row order, then the whole config's."""
    rows = FullRows()
    found: list[Problem] = []
    for shard in shards:
        own, done = read_back(shard, results)
        problems += own
        for record in (record for result in done for record in result.rows):
            vid = record.video_id if isinstance(record.video_id, str) else None
            found_here = list(record.found)
            if record.stats is not None:  # a row with a video id
                if vid in rows.seen:
                    found_here.insert(0, (None, "duplicate video id"))
                rows.add(vid, record)
                rows.where.setdefault(vid, (Path(shard.rel).name, record.row))
                rows.seeded += bool(record.seeded)
                if record.seeded is False:
                    what = "not the shuffle of the card's splice_build.seed"
                    rows.unseeded.append(Problem(shard.rel, what, record.row, vid, ORDER))
            found += [Problem(shard.rel, w, record.row, vid, c) for c, w in found_here]
    problems += found
    problems += _whole_config(rows, manifest)
    return rows


def _whole_config(rows: FullRows, manifest: ReleaseManifest | None) -> list[Problem]:
    """What only the whole config shows: a video of the manifest missing, no shuffle, a
    seed on the card that shuffled at most half the rows (one problem for the card, not one
    per row), else each row its seed did not shuffle so."""
    problems = []
    if rows.unseeded and len(rows.unseeded) >= rows.seeded:
        # most rows disagree (a row of 2 clips matches any seed half the time): the card
        what = (
            f"splice_build.seed: only {rows.seeded} of {rows.seeded + len(rows.unseeded)} "
            "rows' answer orders are its shuffle (the seed was edited?)"
        )
        problems.append(Problem(CARD, what))
    else:
        problems += rows.unseeded
    for vid in sorted(set(manifest.clips) - set(rows.seen)) if manifest else ():
        problems.append(Problem(MANIFEST, "video not in the clip shards", video_id=vid))
    if rows.videos and rows.all_identity and rows.identity_p < UNSHUFFLED_P:
        problems.append(
            Problem(
                shard_dir(FULL_CONFIG),
                "every video's clips are labelled in chronological order "
                f"(chance {rows.identity_p:.1e}): the labels give the order away",
                column=ORDER,
            )
        )
    return problems
