"""A few row groups of one shard, read and checked in whatever process an executor
chooses: the unit of a validation's parallel work, so that a folder's rows are read,
checked and (their clips) decoded on every worker, not in the driver.

A part names its shard by path (every worker sees the build folder: see
``running.ray_executor``), reads its row groups with every page's CRC verified, and returns
small records: each row's own problems (its clips' included), a digest per column (what
the other configs are compared by) and its statistics for the card. What needs more than
one row (a duplicate id, a projection that differs, a question out of order, the card) is
judged by the driver from the records (``full_config``, ``projections``, ``questions``).

Imports pyarrow, PyAV and the schema's names only (``splice_dataset`` loads ``datasets``
on first use of its features, which no part makes), so a spawned worker starts in a
fraction of a second."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from splice_build.output.clip_verdict import ClipRule, VerifiedClip
from splice_build.output.identity import cell_digest
from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_build.output.stats import VideoStats
from splice_build.output.validate.clips import check_clips
from splice_build.output.validate.problems import Problem
from splice_build.output.validate.rows import check_row
from splice_build.stages.shuffle import answer_order, permutation
from splice_dataset import (
    ANSWER,
    CLIPS,
    FULL_CONFIG,
    NUM_CLIPS,
    VIDEO_ID,
    columns,
)

Found = tuple[tuple[str | None, str], ...]  # (column, what) of one row

# A part ends at the row group that brings it to `PART_ROWS` rows or `PART_BYTES` of data
# (whole row groups: a clip shard's hold 4 videos, a text shard's 1,000 rows). Measured at
# 3,200 videos on 2 workers: with a part per 4-video row group the driver, sending tasks
# and taking results, used 5.9 s of CPU; with 32 rows 4.1 s. The bytes bound keeps the
# bar moving on real clips: at 448 px a 4-video row group (up to 20 MB, some 7 s of
# decoding) is a part by itself, where 32 videos would leave the bar still for half a
# minute.
PART_ROWS = 32
PART_BYTES = 8_000_000


class Group(NamedTuple):
    """One row group of a shard."""

    index: int
    first: int  # the shard's row index of its first row
    rows: int  # rows the footer gives it

    def where(self) -> str:
        """The row group as a read error names it."""
        return f"row group {self.index} (rows {self.first}..{self.first + self.rows - 1})"


@dataclass(frozen=True)
class Part:
    """Consecutive row groups of one shard of ``config``."""

    config: str
    path: str  # the shard, as every worker sees it
    rel: str  # the shard as problems name it: <config folder>/<file name>
    groups: tuple[Group, ...]
    # Only for the full config's parts; see `FullRule`.
    full: FullRule | None = None

    def check(self) -> PartResult:
        return _check_rows(self)

    @property
    def key(self) -> tuple[str, int]:
        """What its result is found by."""
        return (self.rel, self.groups[0].index)


def parts_of(config: str, path: str, rel: str, sizes: list[tuple[int, int]]) -> list[Part]:
    """A shard's row groups (``sizes``: the rows and bytes of each, from the footer) as
    parts of `PART_ROWS` rows or `PART_BYTES` bytes, the last one what remains."""
    parts, groups, first, held = [], [], 0, 0
    for index, (rows, size) in enumerate(sizes):
        groups.append(Group(index, first, rows))
        first, held = first + rows, held + size
        if (
            sum(g.rows for g in groups) >= PART_ROWS
            or held >= PART_BYTES
            or index == len(sizes) - 1
        ):
            parts.append(Part(config, path, rel, tuple(groups)))
            groups, held = [], 0
    return parts


@dataclass(frozen=True)
class FullRule:
    """How a full-config part judges its rows' clips, with what the driver knows of the
    part's videos: ``imported`` is an import's manifest record of them (None: a build cut
    from COIN's videos), ``checked`` what the build's workers checked of them (None:
    nothing vouches for them)."""

    rule: ClipRule
    imported: Mapping[str, tuple[ImportedClip, ...]] | None = None
    checked: Mapping[str, tuple[VerifiedClip, ...]] | None = None
    seed: int | None = None  # the card's: each row's order is held to its shuffle


@dataclass(frozen=True)
class RowRecord:
    """What one row held, small enough to send back and keep for every video."""

    row: int  # index within its shard
    video_id: Any  # as the row holds it (not always a str in a damaged shard)
    digests: dict[str, bytes]  # column -> `digest` of its value
    found: Found = ()  # the row's own problems, its clips' included (full config only)
    stats: VideoStats | None = None  # full config only
    identity: bool = False  # its answer order is 1..num_clips (full config only)
    seeded: bool | None = None  # its order is the card seed's shuffle (None: no seed)
    num_clips: int = 0
    clips: int = 0  # clips the row holds


@dataclass(frozen=True)
class PartResult:
    key: tuple[str, int]  # the part's
    errors: tuple[str, ...] = ()  # why row groups did not read (their rows are not here)
    rows: tuple[RowRecord, ...] = ()
    clips: int = 0  # clips looked at
    decoded: int = 0  # of which decoded
    problems: tuple[Problem, ...] = ()  # a whole-config task's (`questions.QuestionsCheck`)
    # a whole-config task's digests of its rows (`identity`): (shard rel, hex) per shard,
    # then (config, hex) for the whole config
    digests: tuple[tuple[str, str], ...] = ()


def digest(value: Any) -> bytes:
    """A cell's value as a short digest (`identity.cell_digest`, the build identity's):
    what the other configs' rows are compared by and the shards' digests made of, so that
    only 32 bytes per column of every video stay in memory."""
    return cell_digest(value)


class Task(Protocol):
    """What the executors map `check_part` over: a `Part`, or a whole-config check
    (`questions.QuestionsCheck`)."""

    @property
    def key(self) -> tuple[str, int]: ...

    def check(self) -> PartResult: ...


def check_part(part: Task, threads: int = 1) -> PartResult:
    """The executors' function: a part's ``check()`` (``threads`` unused: a clip decodes on
    one thread, `clipcheck.CHECK_THREADS`)."""
    return part.check()


def _check_rows(part: Part) -> PartResult:
    """Read the part's row groups one at a time and check their rows."""
    errors: list[str] = []
    records: list[RowRecord] = []
    clips = decoded = 0
    for group, rows, error in group_rows(part.path, part.groups):
        if error:
            errors.append(error)
        elif part.full is not None:
            found, looked, was_decoded = _full_rows(part.full, group.first, rows)
            records += found
            clips, decoded = clips + looked, decoded + was_decoded
        else:
            cols = columns(part.config)
            records += [
                RowRecord(i, row.get(VIDEO_ID), {c: digest(row.get(c)) for c in cols})
                for i, row in enumerate(rows, start=group.first)
            ]
    return PartResult(part.key, tuple(errors), tuple(records), clips, decoded)


def shard_rows(path: str, rel: str, problems: list[Problem]) -> Iterator[tuple[int, dict]]:
    """(row index, row) of a whole shard, one row group at a time; a row group (or the
    shard) that does not read is a problem in ``problems`` and its rows are skipped."""
    try:
        meta = _stamped(path).metadata
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(rel, f"not a readable Parquet file: {exc}"))
        return
    groups, first = [], 0
    for index in range(meta.num_row_groups):
        groups.append(Group(index, first, meta.row_group(index).num_rows))
        first += groups[-1].rows
    for group, rows, error in group_rows(path, groups):
        if error:
            problems.append(Problem(rel, error))
        yield from enumerate(rows, start=group.first)


def group_rows(
    path: str, groups: Iterable[Group]
) -> Iterator[tuple[Group, list[dict[str, Any]], str]]:
    """(group, its rows, "") for each of a shard's ``groups`` in order, read with every
    page's CRC verified; (group, [], why) for one that does not read, naming its rows."""
    for group in groups:
        try:
            rows = read_group(path, group.index)
        except (pa.ArrowException, OSError) as exc:
            yield group, [], f"{group.where()}: {exc}"
            continue
        yield group, rows, ""


def read_group(path: str, index: int) -> list[dict[str, Any]]:
    """One row group's rows, every page's CRC verified on the way."""
    return _stamped(path).read_row_group(index).to_pylist()


def _stamped(path: str) -> pq.ParquetFile:
    stat = os.stat(path)
    return _opened(path, (stat.st_ino, stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=4)
def _opened(path: str, stamp: tuple[int, int, int]) -> pq.ParquetFile:
    """A shard opened once per process for all its parts: its footer, which lists every
    row group, takes 35 ms to parse at 800 row groups (the scale bench's 3,200 videos),
    more than checking a part. ``stamp`` (inode, size, mtime) reopens a file replaced or
    rewritten since."""
    return pq.ParquetFile(path, page_checksum_verification=True)


def _full_rows(
    full: FullRule, first: int, rows: list[dict[str, Any]]
) -> tuple[list[RowRecord], int, int]:
    """The records of a full-config row group's rows, and the clips looked at and decoded."""
    records = []
    clips = decoded = 0
    for i, row in enumerate(rows, start=first):
        vid = row.get(VIDEO_ID)
        if not vid or not isinstance(vid, str):
            cells = {c: digest(row.get(c)) for c in columns(FULL_CONFIG)}
            records.append(RowRecord(i, vid, cells, ((VIDEO_ID, "no video_id"),)))
            continue
        found = check_row(row)
        imported = None
        if full.imported is not None:
            imported = full.imported.get(vid, ())
            if vid not in full.imported:
                found.append((VIDEO_ID, f"not in {MANIFEST}"))
        checked = full.checked.get(vid) if full.checked is not None else None
        own, looked, was_decoded = check_clips(row, full.rule, imported, checked)
        clips += looked
        decoded += was_decoded
        n = row.get(NUM_CLIPS) or 0
        order = (row.get(ANSWER) or {}).get("order") or []
        records.append(
            RowRecord(
                i,
                vid,
                {c: digest(row.get(c)) for c in columns(FULL_CONFIG)},
                tuple(found + own),
                VideoStats.from_row(row),
                identity=list(order) == list(range(1, n + 1)),
                seeded=None
                if full.seed is None
                else list(order) == list(answer_order(permutation(full.seed, vid, len(order)))),
                num_clips=n,
                clips=len(row.get(CLIPS) or []),
            )
        )
    return records, clips, decoded


__all__ = [
    "PART_BYTES",
    "PART_ROWS",
    "FullRule",
    "Group",
    "Part",
    "PartResult",
    "RowRecord",
    "Task",
    "check_part",
    "digest",
    "group_rows",
    "parts_of",
    "read_group",
    "shard_rows",
]
