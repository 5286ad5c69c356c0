"""Stage 6: rows, shards, schema metadata, determinism and streaming of the shard writer."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import Features, List, Video

from splice_build.output.writing.parquet_options import CDC_OPTIONS, parquet_options
from splice_build.output.writing.write import ShardWriter, write_dataset
from splice_dataset import (
    CLIP_CONFIGS,
    CONFIGS,
    WRITTEN_CONFIGS,
    clip_file_name,
    columns,
    features,
    shard_dir,
    shard_name,
)

CLIP_DIR = shard_dir("video_text")


def _shards(out: Path, folder: str) -> list[Path]:
    return sorted((out / folder).glob("*.parquet"))


def _rows(paths: list[Path]) -> list[dict]:
    return [row for p in paths for row in pq.read_table(p).to_pylist()]


def test_rows_follow_the_schema(tmp_path, tiny_videos):
    result = write_dataset(tiny_videos, tmp_path / "out")
    per_config = {c: _shards(tmp_path / "out", shard_dir(c)) for c in CONFIGS}
    assert len({shard_dir(c) for c in CONFIGS}) == len(CONFIGS)  # a folder per config
    for config, shards in per_config.items():
        assert [p.name for p in shards] == [shard_name("test", 0, 1)]
        assert pq.read_schema(shards[0]).names == list(columns(config))
    clip_shards = per_config["video_text"]

    rows = _rows(clip_shards)
    assert [r["video_id"] for r in rows] == [v.entry.video_id for v in tiny_videos]
    for row, video in zip(rows, tiny_videos, strict=True):
        n = len(video.clips)
        assert row["task"] == video.entry.task
        assert row["domain"] == video.entry.domain
        assert row["recipe_type"] == video.entry.recipe_type
        assert row["coin_subset"] == video.entry.subset
        assert row["num_clips"] == n
        assert row["clip_durations"] == [c.duration for c in video.clips]
        assert row["duration"] == pytest.approx(sum(c.duration for c in video.clips))
        assert row["captions"] == [s.label for s in video.steps]
        assert [c["path"] for c in row["clips"]] == [
            clip_file_name(video.entry.video_id, k) for k in range(1, n + 1)
        ]
        assert [c["bytes"] for c in row["clips"]] == [c.path.read_bytes() for c in video.clips]
        assert row["answer"]["order"] == list(video.order)
        assert row["answer"]["step_ids"] == [s.step_id for s in video.steps]
        assert row["answer"]["segments"] == [{"start": s.start, "end": s.end} for s in video.steps]
        # the order maps labels back to chronological steps
        chrono = [row["answer"]["segments"][label - 1]["start"] for label in row["answer"]["order"]]
        assert chrono == sorted(chrono)

    for config in ("video", "text"):
        assert _rows(per_config[config]) == [{c: r[c] for c in columns(config)} for r in rows]
    assert result.num_rows == len(tiny_videos)
    assert result.num_clips == sum(len(v.clips) for v in tiny_videos)
    assert [v.video_id for v in result.videos] == [r["video_id"] for r in rows]
    for config in CONFIGS:
        assert result.download_size(config) == per_config[config][0].stat().st_size
    assert result.num_bytes("video") < result.num_bytes("video_text")
    assert result.num_bytes("text") < result.num_bytes("video")


def test_full_config_holds_every_column_of_every_config():
    from splice_dataset import FULL_CONFIG

    for config in CONFIGS:
        assert set(columns(config)) <= set(columns(FULL_CONFIG))
        assert [c for c in columns(FULL_CONFIG) if c in columns(config)] == list(columns(config))


def test_clip_configs_share_row_groups_and_clip_pages(tmp_path, tiny_videos):
    """video and video_text are cut at the same rows, and their clip column chunks hold
    the same bytes: what lets the Hub's chunk store keep the clips once."""
    out = tmp_path / "out"
    write_dataset(tiny_videos, out, rows_per_row_group=2, max_shard_bytes=60_000)
    files = {c: _shards(out, shard_dir(c)) for c in CLIP_CONFIGS}
    a, b = (files[c] for c in CLIP_CONFIGS)
    assert len(a) == len(b) >= 2
    for fa, fb in zip(a, b, strict=True):
        ma, mb = pq.ParquetFile(fa).metadata, pq.ParquetFile(fb).metadata
        assert [ma.row_group(i).num_rows for i in range(ma.num_row_groups)] == [
            mb.row_group(i).num_rows for i in range(mb.num_row_groups)
        ]
        for g in range(ma.num_row_groups):
            chunks = []
            for meta, path in ((ma, fa), (mb, fb)):
                group = meta.row_group(g)
                col = next(
                    group.column(i)
                    for i in range(group.num_columns)
                    if group.column(i).path_in_schema == "clips.list.element.bytes"
                )
                start = col.dictionary_page_offset or col.data_page_offset
                with open(path, "rb") as fh:
                    fh.seek(start)
                    chunks.append(fh.read(col.total_compressed_size))
            assert chunks[0] == chunks[1] and len(chunks[0]) > 1_000


def test_parquet_options_are_datasets_own_plus_cdc() -> None:
    """The writer's per-column options match what datasets' own Parquet writer picks
    (where this datasets has that helper), with content-defined chunking on."""
    arrow_writer = pytest.importorskip("datasets.arrow_writer")
    helper = getattr(arrow_writer, "get_parquet_column_options", None)
    for config in CONFIGS:
        options = parquet_options(features(config))
        assert options["use_content_defined_chunking"]
        assert options["write_page_index"] is True
        assert not parquet_options(features(config), content_defined_chunking=False)[
            "use_content_defined_chunking"
        ]
        if helper is not None:
            theirs = helper(features(config), features(config).arrow_schema)
            assert {k: options[k] for k in theirs} == theirs
    from datasets import config as datasets_config

    if hasattr(datasets_config, "DEFAULT_CDC_OPTIONS"):  # push_to_hub's CDC settings
        assert CDC_OPTIONS == datasets_config.DEFAULT_CDC_OPTIONS
    clip_leaf = "clips.list.element.bytes"
    options = parquet_options(features("video"))
    assert options["compression"][clip_leaf] == "none"
    assert options["column_encoding"][clip_leaf] == "PLAIN"


def test_schema_metadata_restores_list_of_video(tmp_path, tiny_videos):
    write_dataset(tiny_videos[:2], tmp_path / "out")
    for config in CONFIGS:
        schema = pq.read_schema(_shards(tmp_path / "out", shard_dir(config))[0])
        assert b"huggingface" in schema.metadata
        restored = Features.from_arrow_schema(schema)
        assert restored == features(config)
        if config in CLIP_CONFIGS:
            assert restored["clips"] == List(Video())


def test_size_cap_and_row_groups(tmp_path, tiny_videos):
    out = tmp_path / "out"
    per_video = max(sum(c.path.stat().st_size for c in v.clips) for v in tiny_videos)
    cap = per_video + 2_000
    result = write_dataset(tiny_videos, out, max_shard_bytes=cap, rows_per_row_group=1)
    shards = _shards(out, CLIP_DIR)
    n = len(shards)
    assert n >= 3
    for info in result.shards("video_text"):  # under the cap, unless one row group exceeds it
        assert sum(info.column_bytes.values()) <= cap or info.num_rows == 1
    assert [p.name for p in shards] == [shard_name("test", i, n) for i in range(n)]
    assert [s.path for s in result.shards("video_text")] == shards
    assert [s.path.name for s in result.shards("video")] == [p.name for p in shards]
    assert sum(pq.ParquetFile(p).metadata.num_rows for p in shards) == len(tiny_videos)
    for p in shards:
        meta = pq.ParquetFile(p).metadata
        assert all(meta.row_group(i).num_rows == 1 for i in range(meta.num_row_groups))
    assert not list(out.rglob(".tmp-*"))
    ids = [r["video_id"] for r in _rows(shards)]
    assert ids == sorted(ids) == [v.entry.video_id for v in tiny_videos]

    # a rebuild into the same folder with fewer shards leaves no stale shard behind
    write_dataset(tiny_videos, out)
    for config in CONFIGS:
        assert [p.name for p in _shards(out, shard_dir(config))] == [shard_name("test", 0, 1)]


def test_row_groups_hold_a_few_videos(tmp_path, tiny_videos):
    write_dataset(tiny_videos, tmp_path / "out", rows_per_row_group=4)
    meta = pq.ParquetFile(_shards(tmp_path / "out", CLIP_DIR)[0]).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [4, 2]


def test_output_is_byte_identical(tmp_path, tiny_videos):
    write_dataset(tiny_videos, tmp_path / "a", rows_per_row_group=2)
    write_dataset(tiny_videos, tmp_path / "b", rows_per_row_group=2)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.parquet"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.parquet"))
    assert files_a == files_b and len(files_a) == len(WRITTEN_CONFIGS)
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_rows_leave_memory_one_row_group_at_a_time(tmp_path, tiny_videos):
    """The writer consumes a stream and writes each full row group before reading on."""
    out = tmp_path / "out"
    written_when_yielding = []

    def stream():
        for video in tiny_videos:
            tmp = list((out / CLIP_DIR).glob(".tmp-*.parquet"))
            written_when_yielding.append(sum(p.stat().st_size for p in tmp) if tmp else 0)
            yield video

    write_dataset(stream(), out, rows_per_row_group=2)
    # videos 0,1 buffered; adding video 2 flushes them; so before yielding video 3 the
    # temporary shard already holds their bytes
    assert written_when_yielding[:3] == [0, 0, 0]
    assert written_when_yielding[3] > sum(
        c.path.stat().st_size for v in tiny_videos[:2] for c in v.clips
    )


def test_empty_build_still_loads(tmp_path):
    result = write_dataset([], tmp_path / "out")
    assert result.num_rows == 0
    for config in CONFIGS:
        (shard,) = _shards(tmp_path / "out", shard_dir(config))
        assert shard.name == shard_name("test", 0, 1)
        assert pq.ParquetFile(shard).metadata.num_rows == 0
        assert Features.from_arrow_schema(pq.read_schema(shard)) == features(config)


def test_bad_input_names_the_video_and_leaves_no_partial_shards(tmp_path, tiny_videos):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="b1vid.*sorted"):
        write_dataset([tiny_videos[2], tiny_videos[1]], out)
    assert not list(out.rglob("*.parquet"))

    with pytest.raises(ValueError, match="a0vid.*sorted"):
        write_dataset([tiny_videos[0], tiny_videos[0]], out)

    from dataclasses import replace

    broken = replace(tiny_videos[0], order=(1, 1))
    with pytest.raises(ValueError, match=r"a0vid.*\[1, 1\].*permutation"):
        write_dataset([broken], out)

    missing = replace(
        tiny_videos[0],
        clips=(replace(tiny_videos[0].clips[0], path=tmp_path / "nope.mp4"),)
        + tiny_videos[0].clips[1:],
    )
    with pytest.raises(ValueError, match="a0vid.*clip 1.*nope.mp4"):
        write_dataset([missing], out)
    assert not list(out.rglob("*.parquet"))


def test_writer_returns_stats_per_video(tmp_path, tiny_videos):
    with ShardWriter(tmp_path / "out") as writer:
        stats = [writer.add(v) for v in tiny_videos[:3]]
        result = writer.close()
    assert result.videos == tuple(stats)
    assert [s.num_clips for s in stats] == [len(v.clips) for v in tiny_videos[:3]]
    assert stats[0].duration == pytest.approx(sum(c.duration for c in tiny_videos[0].clips))
