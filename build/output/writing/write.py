"""Stream ``ShuffledVideo`` records into the Hub's Parquet layout (stage 6).

The folder this writes is the one ``push_to_hub`` would produce for each config, so the
Hub, its dataset viewer and ``load_dataset`` read it unchanged (folders from
``splice_dataset.shard_dir``):

    video_text/test-00000-of-0000N.parquet   every column, clips embedded
    video/test-00000-of-0000N.parquet        the same rows without captions
    text/test-00000-of-0000M.parquet         the ``text`` config's columns: no video bytes
    text_pairwise/, text_choice/             the ``text`` rows as questions (no video bytes)

Choices, and why:
- Each file holds exactly its config's columns. The dataset viewer reads every column of
  a file and casts it to the config's features (``cast_table_to_schema``); a file with
  more columns than its config (shards shared through the card's ``columns:``) fails that
  cast and the viewer cannot page the config.
- The two clip configs are written as one series: the same rows in the same row groups
  and the same shards, each file taking its config's columns of one Arrow table. Their
  clip column chunks are then the same bytes, cut into the same content-defined pages
  (Parquet CDC, as push_to_hub writes for Xet), so the Hub's chunk-deduplicating storage
  keeps the clips once; bench/dedup.py measures it.
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
- Shards are capped by the uncompressed Arrow size of their rows (the widest config's),
  like push_to_hub's ``max_shard_size`` (default 500 MB). A shard closes before the row
  group that would cross the cap; a single row group larger than the cap still gets a
  shard of its own.
- The shard count is unknown while streaming, so shards are written under temporary
  names and renamed to ``{split}-{i:05d}-of-{n:05d}.parquet`` at the end. Older shards of
  the same split are removed then, so a rebuild never leaves stale shards behind.
- Writer options are fixed in ``splice_build.output.writing.parquet_options`` (per-column
  compression, page CRCs, content-defined chunking, the ``huggingface`` schema metadata),
  and no timestamp is written, so the same inputs give byte-identical files.
- The question configs (``splice_dataset.TEXT_QUESTION_CONFIGS``) hold each ``text`` row's
  questions, made by ``splice_dataset.question_rows`` (what ``load(format=)`` maps) with the
  default seed, so the Hub's viewer pages the questions a user loads; each is a series of
  its own, since its rows are questions, not videos.
- The rows are ``splice_build.output.writing.rows.video_row``'s, in the pipeline's video-id order
  (``check_order``); what was written is a ``splice_build.output.writing.shards.WriteResult``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from splice_build.output.stats import VideoStats
from splice_build.output.writing.parquet_options import open_parquet_writer
from splice_build.output.writing.rows import check_order, video_row
from splice_build.output.writing.shards import ShardInfo, WriteResult, shard_info
from splice_build.records import ShuffledVideo
from splice_dataset import (
    CLIP_CONFIGS,
    CLIPS,
    SPLIT,
    TEXT_QUESTION_CONFIGS,
    columns,
    features,
    question_rows,
    shard_dir,
    shard_name,
)

MAX_SHARD_BYTES = 500_000_000  # push_to_hub's default max_shard_size
MAX_ROW_GROUP_BYTES = 20_000_000  # of clips; see the module docstring for why not 100 MB
ROWS_PER_ROW_GROUP = 4  # videos per clip row group (a few MB each at 448 px)
TEXT_ROWS_PER_ROW_GROUP = 1_000  # text rows are a few hundred bytes
TMP_PREFIX = ".tmp-"  # shards being written; `splice validate` reports any left behind


class _ShardSeries:
    """Size-capped Parquet shards of one or more configs, cut at the same rows.

    Rows are the widest config's; each config gets its own folder, and each row group is
    written once per config with that config's columns of the same Arrow table, so the
    configs' files agree row group by row group (which is what lets their common column
    chunks deduplicate).
    """

    def __init__(
        self,
        root: Path,
        configs: tuple[str, ...],
        split: str,
        *,
        max_shard_bytes: int,
        rows_per_row_group: int,
        max_row_group_bytes: int,
        content_defined_chunking: bool,
    ):
        self.configs = configs
        self.split = split
        widest = max(configs, key=lambda c: len(columns(c)))
        for config in configs:
            if not set(columns(config)) <= set(columns(widest)):
                raise ValueError(f"config {config}'s columns are not a subset of {widest}'s")
        self.schema = features(widest).arrow_schema
        self.features = {c: features(c) for c in configs}
        # Computed once: `Features.arrow_schema` rebuilds the schema on every call.
        self.schemas = {c: f.arrow_schema for c, f in self.features.items()}
        self.folders = {c: root / shard_dir(c) for c in configs}
        for folder in self.folders.values():
            folder.mkdir(parents=True, exist_ok=True)
        self.max_shard_bytes = max_shard_bytes
        self.rows_per_row_group = rows_per_row_group
        self.max_row_group_bytes = max_row_group_bytes
        self.cdc = content_defined_chunking
        self.pending: list[dict[str, Any]] = []
        self.pending_bytes = 0
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.shard_bytes = 0  # uncompressed Arrow bytes (widest config) in the open shard
        self.tmp_paths: dict[str, list[Path]] = {c: [] for c in configs}
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
        if self.writers and self.shard_bytes + table.nbytes > self.max_shard_bytes:
            self._close_shard()
        if not self.writers:
            self._open_shard()
        for config, writer in self.writers.items():
            schema = self.schemas[config]
            part = pa.Table.from_arrays(table.select(schema.names).columns, schema=schema)
            writer.write_table(part, row_group_size=part.num_rows)
        self.shard_bytes += table.nbytes
        self.rows_per_shard[-1] += table.num_rows

    def _open_shard(self) -> None:
        index = len(self.rows_per_shard)
        for config in self.configs:
            path = self.folders[config] / f"{TMP_PREFIX}{self.split}-{index:05d}.parquet"
            self.tmp_paths[config].append(path)
            self.writers[config] = open_parquet_writer(
                path, self.features[config], content_defined_chunking=self.cdc
            )
        self.rows_per_shard.append(0)
        self.shard_bytes = 0

    def _close_shard(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writers = {}

    def finish(self) -> dict[str, tuple[ShardInfo, ...]]:
        """Write what is pending, close, and give the shards their final names."""
        self.flush()
        if not self.rows_per_shard:  # no video at all: one empty shard keeps configs loadable
            self._open_shard()
        self._close_shard()
        out = {}
        total = len(self.rows_per_shard)
        for config in self.configs:
            folder = self.folders[config]
            for stale in folder.glob(f"{self.split}-*-of-*.parquet"):
                stale.unlink()
            shards = []
            for i, (tmp, rows) in enumerate(
                zip(self.tmp_paths[config], self.rows_per_shard, strict=True)
            ):
                final = folder / shard_name(self.split, i, total)
                os.replace(tmp, final)
                info = shard_info(final)
                if info.num_rows != rows:
                    raise RuntimeError(
                        f"{final}: wrote {rows} rows but the footer says {info.num_rows}"
                    )
                shards.append(info)
            out[config] = tuple(shards)
        return out

    def abort(self) -> None:
        """Discard the partial shards; a shard that cannot be closed (a full disk: the
        error being handled) is removed all the same."""
        for writer in self.writers.values():
            with contextlib.suppress(OSError):
                writer.close()
        self.writers = {}
        for paths in self.tmp_paths.values():
            for tmp in paths:
                tmp.unlink(missing_ok=True)


@dataclass
class ShardWriter:
    """Streams rows into every config's shards of one split.

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
    content_defined_chunking: bool = True
    _videos: list[VideoStats] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_shard_bytes <= 0 or self.rows_per_row_group <= 0:
            raise ValueError(
                f"max_shard_bytes ({self.max_shard_bytes}) and rows_per_row_group "
                f"({self.rows_per_row_group}) must be positive"
            )
        self.out_dir = Path(self.out_dir)
        common = dict(
            max_shard_bytes=self.max_shard_bytes,
            max_row_group_bytes=self.max_row_group_bytes,
            content_defined_chunking=self.content_defined_chunking,
        )
        self._clips = _ShardSeries(
            self.out_dir,
            CLIP_CONFIGS,
            self.split,
            rows_per_row_group=self.rows_per_row_group,
            **common,
        )
        self._text = _ShardSeries(
            self.out_dir,
            ("text",),
            self.split,
            rows_per_row_group=self.text_rows_per_row_group,
            **common,
        )
        self._text_columns = columns("text")
        self._questions = {
            config: _ShardSeries(
                self.out_dir,
                (config,),
                self.split,
                rows_per_row_group=self.text_rows_per_row_group,
                **common,
            )
            for config in TEXT_QUESTION_CONFIGS
        }

    def add(self, video: ShuffledVideo) -> VideoStats:
        """Queue one video's rows; its small stats record is all that stays in memory."""
        check_order(video.entry.video_id, self._videos[-1].video_id if self._videos else None)
        row = video_row(video)
        clip_bytes = sum(len(c["bytes"]) for c in row[CLIPS])
        self._clips.add(row, clip_bytes + 1_000)
        text_row = {c: row[c] for c in self._text_columns}
        self._text.add(text_row, 1_000)
        for config, (asked, fmt) in TEXT_QUESTION_CONFIGS.items():
            for question in question_rows(text_row, asked, fmt):
                self._questions[config].add(question, 1_000)
        stats = VideoStats.from_row(row)
        self._videos.append(stats)
        return stats

    def close(self) -> WriteResult:
        return WriteResult(
            out_dir=self.out_dir,
            split=self.split,
            config_shards={
                **self._clips.finish(),
                **self._text.finish(),
                **{k: v for series in self._questions.values() for k, v in series.finish().items()},
            },
            videos=tuple(self._videos),
        )

    def abort(self) -> None:
        for series in (self._clips, self._text, *self._questions.values()):
            series.abort()

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
    content_defined_chunking: bool = True,
) -> WriteResult:
    """Write every video (sorted by video_id) into each config's folder of ``out_dir``."""
    writer = ShardWriter(
        Path(out_dir),
        split=split,
        max_shard_bytes=max_shard_bytes,
        rows_per_row_group=rows_per_row_group,
        max_row_group_bytes=max_row_group_bytes,
        content_defined_chunking=content_defined_chunking,
    )
    with writer:
        for video in videos:
            writer.add(video)
        return writer.close()


__all__ = [
    "MAX_ROW_GROUP_BYTES",
    "MAX_SHARD_BYTES",
    "ROWS_PER_ROW_GROUP",
    "ShardWriter",
    "TMP_PREFIX",
    "write_dataset",
]
