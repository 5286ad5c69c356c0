"""What a write produced: each config's shards with their sizes per column, read back
from the Parquet footers, and the per-video statistics. The card is rendered from it and
``splice validate`` rebuilds it from the folder to compare the two."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from splice_build.output.identity import BuildDigests, RowsDigest, cell_digest, row_digest
from splice_build.output.stats import VideoStats
from splice_dataset import TEXT_QUESTION_CONFIGS, columns, shard_dir


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

    def num_examples(self, config: str) -> int:
        """Rows of a config: one per video, except a question config's (one per question,
        as its shards hold them)."""
        if config in TEXT_QUESTION_CONFIGS:
            return sum(s.num_rows for s in self.shards(config))
        return self.num_rows

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

    def digests(self) -> BuildDigests:
        """Each shard's and config's digest of its rows' values, and so the build's
        identity (``identity``), read back from the written shards one row group at a
        time, exactly as ``splice validate`` reads them to check it."""
        shards: dict[str, str] = {}
        configs: dict[str, str] = {}
        for config, infos in self.config_shards.items():
            if not infos:
                continue
            cols = columns(config)
            whole = RowsDigest()
            for info in infos:
                own = RowsDigest()
                shard = pq.ParquetFile(info.path)
                for group in range(shard.num_row_groups):
                    for row in shard.read_row_group(group).to_pylist():
                        digest = row_digest({c: cell_digest(row.get(c)) for c in cols}, cols)
                        own.add(digest)
                        whole.add(digest)
                shards[f"{shard_dir(config)}/{info.path.name}"] = own.hexdigest()
            configs[config] = whole.hexdigest()
        return BuildDigests(shards, configs)

    def download_size(self, config: str) -> int:
        """Bytes of the files the config reads: what downloading the config fetches."""
        return sum(s.file_bytes for s in self.shards(config))


def shard_info(path: Path, meta: pq.FileMetaData | None = None) -> ShardInfo:
    """A written shard's ShardInfo from its footer alone (no data pages are read); ``meta``:
    the footer, when the caller has already read it."""
    meta = meta if meta is not None else pq.ParquetFile(path).metadata
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


__all__ = ["ShardInfo", "WriteResult", "shard_info"]
