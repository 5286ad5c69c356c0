"""Stream ``ShuffledVideo`` records into the Hub's Parquet layout (stage 6).

The folder this writes is the one ``push_to_hub`` would produce, so the Hub, its dataset
viewer and ``load_dataset`` read it unchanged:

    data/test-00000-of-0000N.parquet   every column (the ``video_text`` superset), clips embedded
    text/test-00000-of-0000M.parquet   the ``text`` config's columns only: no video bytes

Choices, and why:
- Memory is bounded by one row group: rows are buffered until a row group is full, written,
  and dropped. Only the small per-video ``VideoStats`` records are kept for the card.
- Row groups of clip shards hold at most ``rows_per_row_group`` videos (default 4) and at
  most ``max_row_group_bytes`` of clips (default 20 MB; a single larger video still gets a
  group of its own). The Hub's dataset viewer reads whole row groups and refuses ones over
  about 286 MiB ("Rows from parquet row groups are too big to be read", TooBigContentError;
  its scan limit is 300 MB), so a few videos of a few MB each per row group keeps every
  page viewable, and a page index is written so readers can fetch single rows. The byte
  cap is well below push_to_hub's 100 MB because readers slow down on big groups: with
  pyarrow's default (mimalloc) pool, groups of ~40 MB of clips read about 2x slower than
  groups of 10-20 MB with plain pyarrow, and up to 4x slower streaming through
  ``datasets``; one or two videos per group instead add ``datasets``' per-batch cost
  (measured with bench/load.py's footage rows).
- Shards are capped by the uncompressed Arrow size of their rows, like push_to_hub's
  ``max_shard_size`` (default 500 MB). A shard closes before the row group that would
  cross the cap; a single row group larger than the cap still gets a shard of its own.
- The shard count is unknown while streaming, so shards are written under temporary
  names and renamed to ``{split}-{i:05d}-of-{n:05d}.parquet`` at the end. Older shards of
  the same split are removed then, so a rebuild never leaves stale shards behind.
- Writer options are fixed (per-column compression as ``datasets`` chooses: clip bytes
  stored PLAIN and uncompressed since H.264 is already compressed, snappy+dictionary for
  the rest; content-defined chunking as push_to_hub uses for Xet deduplication) and no
  timestamp is written, so the same inputs give byte-identical files.
- The schema carries the ``huggingface`` metadata key (``Features.arrow_schema``), from
  which ``datasets`` restores ``List(Video())`` and the other features.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import config as datasets_config
from datasets.arrow_writer import get_parquet_column_options

from splice_build.records import ShuffledVideo
from splice_build.stats import VideoStats
from splice_dataset import (
    ANSWER,
    CAPTIONS,
    CLIP_DATA_DIR,
    CLIP_DURATIONS,
    CLIPS,
    COIN_SUBSET,
    DOMAIN,
    DURATION,
    NUM_CLIPS,
    RECIPE_TYPE,
    SPLIT,
    TASK,
    TEXT_DATA_DIR,
    VIDEO_ID,
    clip_file_name,
    columns,
    features,
    shard_name,
)

MAX_SHARD_BYTES = 500_000_000  # push_to_hub's default max_shard_size
MAX_ROW_GROUP_BYTES = 20_000_000  # of clips; see the module docstring for why not 100 MB
ROWS_PER_ROW_GROUP = 4  # videos per clip row group (a few MB each at 448 px)
TEXT_ROWS_PER_ROW_GROUP = 1_000  # text rows are a few hundred bytes
TMP_PREFIX = ".tmp-"  # shards being written; `splice validate` reports any left behind


@dataclass(frozen=True)
class ShardInfo:
    """One written shard: where it is, what it holds, its bytes per top-level column."""

    path: Path  # final path
    num_rows: int
    file_bytes: int
    column_bytes: dict[str, int]  # uncompressed bytes per top-level column

    def uncompressed_bytes(self, cols: Iterable[str]) -> int:
        return sum(self.column_bytes.get(c, 0) for c in cols)


@dataclass(frozen=True)
class WriteResult:
    """What a finished write produced: shards, counts and the per-video stats records."""

    out_dir: Path
    split: str
    clip_shards: tuple[ShardInfo, ...]
    text_shards: tuple[ShardInfo, ...]
    videos: tuple[VideoStats, ...]  # in written (video_id) order

    @property
    def num_rows(self) -> int:
        return len(self.videos)

    @property
    def num_clips(self) -> int:
        return sum(v.num_clips for v in self.videos)

    @property
    def has_shards(self) -> bool:
        """False for a result projected from annotations (the repository's README), which
        has statistics but no files to size or fingerprint."""
        return bool(self.clip_shards or self.text_shards)

    def shards(self, config: str) -> tuple[ShardInfo, ...]:
        return self.text_shards if config == "text" else self.clip_shards

    def num_bytes(self, config: str) -> int:
        """Uncompressed bytes of the config's columns: the split's ``num_bytes`` in the card."""
        cols = columns(config)
        return sum(s.uncompressed_bytes(cols) for s in self.shards(config))

    def fingerprint(self) -> str:
        """sha256 over every shard's bytes, in name order: identifies a build's content."""
        digest = hashlib.sha256()
        for shard in sorted(self.clip_shards + self.text_shards, key=lambda s: str(s.path)):
            digest.update(shard.path.name.encode() + b"\0")
            with open(shard.path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()

    def download_size(self, config: str) -> int:
        """Bytes of the files the config reads (whole shards; the video configs share them)."""
        return sum(s.file_bytes for s in self.shards(config))


def video_row(video: ShuffledVideo) -> dict[str, Any]:
    """The full (``video_text``) row of one video, clip bytes read from the work folder.

    Clip names are ``clip_file_name(video_id, label)``: they name the shuffled label only.
    """
    entry = video.entry
    vid = entry.video_id
    n = len(video.clips)
    if not (len(video.steps) == n == len(video.order)):
        raise ValueError(
            f"video {vid}: {n} clips, {len(video.steps)} steps and an order of "
            f"{len(video.order)} labels; they must all be equal"
        )
    if sorted(video.order) != list(range(1, n + 1)):
        raise ValueError(f"video {vid}: order {list(video.order)} is not a permutation of 1..{n}")
    clips = []
    for label, clip in enumerate(video.clips, start=1):
        try:
            data = Path(clip.path).read_bytes()
        except OSError as exc:
            raise ValueError(
                f"video {vid}: cannot read clip {label} at {clip.path}: {exc}"
            ) from None
        if not data:
            raise ValueError(f"video {vid}: clip {label} at {clip.path} is empty")
        clips.append({"bytes": data, "path": clip_file_name(vid, label)})
    clip_durations = [float(c.duration) for c in video.clips]
    return {
        VIDEO_ID: vid,
        TASK: entry.task,
        DOMAIN: entry.domain,
        RECIPE_TYPE: entry.recipe_type,
        COIN_SUBSET: entry.subset,
        NUM_CLIPS: n,
        DURATION: math.fsum(clip_durations),
        CLIPS: clips,
        CAPTIONS: [s.label for s in video.steps],
        CLIP_DURATIONS: clip_durations,
        ANSWER: {
            "order": list(video.order),
            "segments": [{"start": float(s.start), "end": float(s.end)} for s in video.steps],
            "step_ids": [s.step_id for s in video.steps],
        },
    }


def check_order(video_id: str, previous: str | None) -> None:
    """Refuse a video that does not come strictly after ``previous``: every writer relies
    on the pipeline's video-id order, which is part of the build's content."""
    if previous is not None and video_id <= previous:
        raise ValueError(
            f"video {video_id}: videos must arrive sorted by video_id without duplicates "
            f"(previous was {previous}); the shards' order is part of the build"
        )


def shard_info(path: Path) -> ShardInfo:
    """A written shard's ShardInfo from its footer alone (no data pages are read)."""
    meta = pq.ParquetFile(path).metadata
    return ShardInfo(
        path=Path(path),
        num_rows=meta.num_rows,
        file_bytes=Path(path).stat().st_size,
        column_bytes=_column_bytes(meta),
    )


def _column_bytes(meta: pq.FileMetaData) -> dict[str, int]:
    """Uncompressed bytes per top-level column, from the Parquet footer."""
    out: dict[str, int] = {}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for ci in range(group.num_columns):
            col = group.column(ci)
            top = col.path_in_schema.split(".", 1)[0]
            out[top] = out.get(top, 0) + col.total_uncompressed_size
    return dict(sorted(out.items()))


class _ShardSeries:
    """Size-capped Parquet shards of one folder, written row group by row group."""

    def __init__(
        self,
        folder: Path,
        config: str,
        split: str,
        *,
        max_shard_bytes: int,
        rows_per_row_group: int,
        max_row_group_bytes: int,
    ):
        self.folder = folder
        self.split = split
        self.features = features(config)
        self.schema = self.features.arrow_schema  # carries the "huggingface" metadata key
        self.max_shard_bytes = max_shard_bytes
        self.rows_per_row_group = rows_per_row_group
        self.max_row_group_bytes = max_row_group_bytes
        self.options = get_parquet_column_options(self.features, self.schema)
        self.pending: list[dict[str, Any]] = []
        self.pending_bytes = 0
        self.writer: pq.ParquetWriter | None = None
        self.shard_bytes = 0  # uncompressed Arrow bytes in the open shard
        self.tmp_paths: list[Path] = []
        self.rows_per_shard: list[int] = []

    def add(self, row: dict[str, Any], approx_bytes: int) -> None:
        if self.pending and (
            len(self.pending) >= self.rows_per_row_group
            or self.pending_bytes + approx_bytes > self.max_row_group_bytes
        ):
            self.flush()
        self.pending.append(row)
        self.pending_bytes += approx_bytes

    def flush(self) -> None:
        if not self.pending:
            return
        table = pa.Table.from_pylist(self.pending, schema=self.schema)
        self.pending, self.pending_bytes = [], 0
        if self.writer is not None and self.shard_bytes + table.nbytes > self.max_shard_bytes:
            self._close_shard()
        if self.writer is None:
            self._open_shard()
        self.writer.write_table(table, row_group_size=table.num_rows)
        self.shard_bytes += table.nbytes
        self.rows_per_shard[-1] += table.num_rows

    def _open_shard(self) -> None:
        path = self.folder / f"{TMP_PREFIX}{self.split}-{len(self.tmp_paths):05d}.parquet"
        self.writer = pq.ParquetWriter(
            path,
            self.schema,
            write_page_index=True,
            write_page_checksum=True,  # `splice validate` verifies every page's CRC
            use_content_defined_chunking=datasets_config.DEFAULT_CDC_OPTIONS,
            **self.options,
        )
        self.tmp_paths.append(path)
        self.rows_per_shard.append(0)
        self.shard_bytes = 0

    def _close_shard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def finish(self) -> tuple[ShardInfo, ...]:
        """Write what is pending, close, and give the shards their final names."""
        self.flush()
        if not self.tmp_paths:  # no video at all: one empty shard keeps the config loadable
            self._open_shard()
        self._close_shard()
        for stale in self.folder.glob(f"{self.split}-*-of-*.parquet"):
            stale.unlink()
        total = len(self.tmp_paths)
        shards = []
        for i, (tmp, rows) in enumerate(zip(self.tmp_paths, self.rows_per_shard, strict=True)):
            final = self.folder / shard_name(self.split, i, total)
            os.replace(tmp, final)
            info = shard_info(final)
            if info.num_rows != rows:
                raise RuntimeError(
                    f"{final}: wrote {rows} rows but the footer says {info.num_rows}"
                )
            shards.append(info)
        return tuple(shards)

    def abort(self) -> None:
        self._close_shard()
        for tmp in self.tmp_paths:
            tmp.unlink(missing_ok=True)


@dataclass
class ShardWriter:
    """Streams rows into the clip shards and the text shards of one split.

    Use as a context manager, or call ``add`` for each video (sorted by video id) and
    ``close()`` once. Leaving the ``with`` block on an exception removes the partial
    temporary shards and leaves any earlier finished build untouched.
    """

    out_dir: Path
    split: str = SPLIT
    max_shard_bytes: int = MAX_SHARD_BYTES
    rows_per_row_group: int = ROWS_PER_ROW_GROUP
    max_row_group_bytes: int = MAX_ROW_GROUP_BYTES
    text_rows_per_row_group: int = TEXT_ROWS_PER_ROW_GROUP
    _videos: list[VideoStats] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_shard_bytes <= 0 or self.rows_per_row_group <= 0:
            raise ValueError(
                f"max_shard_bytes ({self.max_shard_bytes}) and rows_per_row_group "
                f"({self.rows_per_row_group}) must be positive"
            )
        self.out_dir = Path(self.out_dir)
        clip_dir = self.out_dir / CLIP_DATA_DIR
        text_dir = self.out_dir / TEXT_DATA_DIR
        clip_dir.mkdir(parents=True, exist_ok=True)
        text_dir.mkdir(parents=True, exist_ok=True)
        self._clips = _ShardSeries(
            clip_dir,
            "video_text",
            self.split,
            max_shard_bytes=self.max_shard_bytes,
            rows_per_row_group=self.rows_per_row_group,
            max_row_group_bytes=self.max_row_group_bytes,
        )
        self._text = _ShardSeries(
            text_dir,
            "text",
            self.split,
            max_shard_bytes=self.max_shard_bytes,
            rows_per_row_group=self.text_rows_per_row_group,
            max_row_group_bytes=self.max_row_group_bytes,
        )
        self._text_columns = columns("text")

    def add(self, video: ShuffledVideo) -> VideoStats:
        """Queue one video's rows; its small stats record is all that stays in memory."""
        check_order(video.entry.video_id, self._videos[-1].video_id if self._videos else None)
        row = video_row(video)
        clip_bytes = sum(len(c["bytes"]) for c in row[CLIPS])
        self._clips.add(row, clip_bytes + 1_000)
        self._text.add({c: row[c] for c in self._text_columns}, 1_000)
        stats = VideoStats.from_row(row)
        self._videos.append(stats)
        return stats

    def close(self) -> WriteResult:
        return WriteResult(
            out_dir=self.out_dir,
            split=self.split,
            clip_shards=self._clips.finish(),
            text_shards=self._text.finish(),
            videos=tuple(self._videos),
        )

    def abort(self) -> None:
        self._clips.abort()
        self._text.abort()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self.abort()


def write_dataset(
    videos: Iterable[ShuffledVideo],
    out_dir: Path,
    *,
    max_shard_bytes: int = MAX_SHARD_BYTES,
    rows_per_row_group: int = ROWS_PER_ROW_GROUP,
    max_row_group_bytes: int = MAX_ROW_GROUP_BYTES,
    split: str = SPLIT,
) -> WriteResult:
    """Write every video (sorted by video_id) into ``out_dir/data`` and ``out_dir/text``."""
    writer = ShardWriter(
        Path(out_dir),
        split=split,
        max_shard_bytes=max_shard_bytes,
        rows_per_row_group=rows_per_row_group,
        max_row_group_bytes=max_row_group_bytes,
    )
    with writer:
        for video in videos:
            writer.add(video)
        return writer.close()


__all__ = [
    "MAX_ROW_GROUP_BYTES",
    "MAX_SHARD_BYTES",
    "ROWS_PER_ROW_GROUP",
    "ShardInfo",
    "ShardWriter",
    "TMP_PREFIX",
    "WriteResult",
    "check_order",
    "shard_info",
    "video_row",
    "write_dataset",
]
