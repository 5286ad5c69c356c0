"""Rows of a built SPLICE folder, read straight from its Parquet shards.

The baselines, the human protocol and the report run on the organiser's machine next to
the build; they need the clip bytes undecoded (to copy, re-encode or sample them) and the
answers, so they read the shards with pyarrow in small batches instead of going through
``load_dataset`` (whose video decoding needs torchcodec and whose cache copies every clip).
Layout and column names come from ``splice_dataset``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import splice_dataset as schema
from splice_build.errors import UserError


class NotABuild(UserError):
    """The folder given as a build has no shards of the config asked for."""


def iter_rows(
    build: str | Path, config: str, columns: Sequence[str] | None = None, batch_size: int = 16
) -> Iterator[dict[str, Any]]:
    """Rows of a config as plain dicts (clips stay ``{"bytes", "path"}``), in shard order."""
    wanted = list(columns) if columns is not None else list(schema.columns(config))
    unknown = [c for c in wanted if c not in schema.columns(config)]
    if unknown:
        raise ValueError(f"config {config!r} has no column(s) {unknown}")
    try:
        shards = schema.shard_files(build, config).get(schema.SPLIT, [])
    except FileNotFoundError as exc:  # names the folder looked in
        raise NotABuild(str(exc)) from None
    for path in shards:
        try:
            shard = pq.ParquetFile(path)
            # pyarrow skips a requested column the file lacks: rows would just miss the key
            missing = [c for c in wanted if c not in shard.schema_arrow.names]
            if missing:
                raise UserError(f"{path}: missing column(s) {', '.join(missing)}")
            batches = shard.iter_batches(columns=wanted, batch_size=batch_size)
            for batch in batches:
                yield from batch.to_pylist()
        except (OSError, pa.ArrowException) as exc:  # truncated or not Parquet at all
            raise UserError(f"{path}: not a readable Parquet shard ({exc})") from None


@dataclass(frozen=True)
class VideoMeta:
    """What scoring and the report need about one video (no clip bytes)."""

    video_id: str
    task: str
    domain: str
    num_clips: int
    duration: float
    order: tuple[int, ...]  # the reference: chronological sequence of labels


def read_meta(build: str | Path) -> dict[str, VideoMeta]:
    """Metadata and reference order of every video, from the small text shards (in shard
    order). A repeated video or one without an answer order would be scored wrongly by
    every caller, so both raise naming the build and the video."""
    cols = [schema.VIDEO_ID, schema.TASK, schema.DOMAIN, schema.NUM_CLIPS, schema.DURATION]
    out: dict[str, VideoMeta] = {}
    for row in iter_rows(build, "text", [*cols, schema.ANSWER]):
        vid = row[schema.VIDEO_ID]
        if vid in out:
            raise ValueError(f"{build}: video {vid!r} appears twice in the text shards")
        if not (row[schema.ANSWER] or {}).get("order"):
            raise ValueError(f"{build}: video {vid!r} has no {schema.ANSWER}.order")
        out[vid] = VideoMeta(
            video_id=vid,
            task=row[schema.TASK],
            domain=row[schema.DOMAIN],
            num_clips=int(row[schema.NUM_CLIPS]),
            duration=float(row[schema.DURATION]),
            order=tuple(row[schema.ANSWER]["order"]),
        )
    return out
