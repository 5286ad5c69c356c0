"""Stream ``ShuffledVideo`` records into the Hub's Parquet layout (stage 6).

The folder this writes is the one ``push_to_hub`` would produce for each config, so the
Hub, its dataset viewer and ``load_dataset`` read it unchanged (folders from
``splice_dataset.shard_dir``):

    video_text/test-00000-of-0000N.parquet   every column, clips embedded
    video/test-00000-of-0000N.parquet        the same rows without captions
    text/test-00000-of-0000M.parquet         the ``text`` config's columns: no video bytes

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
- Writer options are fixed in ``parquet_options`` (per-column compression as ``datasets``
  chooses: clip bytes stored PLAIN and uncompressed since H.264 is already compressed,
  snappy+dictionary for the rest; page CRCs, which ``splice validate`` verifies;
  content-defined chunking with push_to_hub's settings) and no timestamp is written, so the
  same inputs give byte-identical files.
- The schema carries the ``huggingface`` metadata key (``Features.arrow_schema``), from
  which ``datasets`` restores ``List(Video())`` and the other features.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from datasets.features.features import require_storage_embed

from splice_build.output.stats import VideoStats
from splice_build.records import ShuffledVideo
from splice_dataset import (
    ANSWER,
    CAPTIONS,
    CLIP_CONFIGS,
    CLIP_DURATIONS,
    CLIPS,
    COIN_SUBSET,
    DOMAIN,
    DURATION,
    NUM_CLIPS,
    RECIPE_TYPE,
    SPLIT,
    TASK,
    VIDEO_ID,
    clip_file_name,
    columns,
    features,
    shard_dir,
    shard_name,
)

MAX_SHARD_BYTES = 500_000_000  # push_to_hub's default max_shard_size
MAX_ROW_GROUP_BYTES = 20_000_000  # of clips; see the module docstring for why not 100 MB
ROWS_PER_ROW_GROUP = 4  # videos per clip row group (a few MB each at 448 px)
TEXT_ROWS_PER_ROW_GROUP = 1_000  # text rows are a few hundred bytes
# Content-defined chunking as push_to_hub writes it (datasets' DEFAULT_CDC_OPTIONS, which
# are pyarrow's defaults): pages cut where the data's rolling hash says, 256 KiB to 1 MiB.
CDC_OPTIONS = {"min_chunk_size": 256 * 1024, "max_chunk_size": 1024 * 1024, "norm_level": 0}
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
    """What a finished write produced: each config's shards and the per-video stats."""

    out_dir: Path
    split: str
    config_shards: Mapping[str, tuple[ShardInfo, ...]]  # config -> its shards, in order
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
        return any(self.config_shards.values())

    def shards(self, config: str) -> tuple[ShardInfo, ...]:
        return tuple(self.config_shards.get(config, ()))

    def num_bytes(self, config: str) -> int:
        """Uncompressed bytes of the config's columns: the split's ``num_bytes`` in the card."""
        cols = columns(config)
        return sum(s.uncompressed_bytes(cols) for s in self.shards(config))

    def fingerprint(self) -> str:
        """sha256 over every shard's bytes, in path order: identifies a build's content."""
        digest = hashlib.sha256()
        named = sorted(
            (f"{shard_dir(config)}/{s.path.name}", s.path)
            for config, shards in self.config_shards.items()
            for s in shards
        )
        for name, path in named:
            digest.update(name.encode() + b"\0")
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()

    def download_size(self, config: str) -> int:
        """Bytes of the files the config reads: what downloading the config fetches."""
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


def parquet_options(features: Features, *, content_defined_chunking: bool = True) -> dict:
    """The project's ``pq.ParquetWriter`` options for a table of ``features``: every shard
    is written with these (see the module docstring for each choice).

    Per leaf column, as datasets' own Parquet writer chooses: leaves of a column whose
    feature embeds files (``List(Video())``) are PLAIN and uncompressed, the rest snappy with
    dictionaries. ``content_defined_chunking=False`` exists for bench/dedup.py's baseline.
    """
    schema = features.arrow_schema
    compression: dict[str, str] = {}
    use_dictionary: list[str] = []
    column_encoding: dict[str, str] = {}
    for name, pa_type in zip(schema.names, schema.types, strict=True):
        embed = require_storage_embed(features[name])
        for leaf in _leaf_paths(name, pa_type):
            compression[leaf] = "none" if embed else "snappy"
            if embed:
                column_encoding[leaf] = "PLAIN"
            else:
                use_dictionary.append(leaf)
    return {
        "compression": compression,
        "use_dictionary": use_dictionary,
        "column_encoding": column_encoding,
        "write_page_index": True,
        "write_page_checksum": True,  # `splice validate` verifies every page's CRC
        "use_content_defined_chunking": (dict(CDC_OPTIONS) if content_defined_chunking else False),
    }


def _leaf_paths(path: str, pa_type: pa.DataType) -> list[str]:
    """Parquet's leaf column paths (``clips.list.element.bytes``): the keys of per-column
    writer options."""
    if pa.types.is_struct(pa_type):
        return [leaf for f in pa_type for leaf in _leaf_paths(f"{path}.{f.name}", f.type)]
    if pa.types.is_list(pa_type) or pa.types.is_large_list(pa_type):
        return _leaf_paths(f"{path}.list.element", pa_type.value_type)
    return [path]


def open_parquet_writer(
    path: Path, features: Features, *, content_defined_chunking: bool = True
) -> pq.ParquetWriter:
    """A ParquetWriter for one shard, with the schema's ``huggingface`` metadata and the
    project's options (``parquet_options``)."""
    return pq.ParquetWriter(
        path,
        features.arrow_schema,
        **parquet_options(features, content_defined_chunking=content_defined_chunking),
    )


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
            schema = self.features[config].arrow_schema
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
        self._close_shard()
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
            config_shards={**self._clips.finish(), **self._text.finish()},
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
    "ShardInfo",
    "ShardWriter",
    "TMP_PREFIX",
    "WriteResult",
    "check_order",
    "open_parquet_writer",
    "parquet_options",
    "shard_info",
    "video_row",
    "write_dataset",
]
