"""Stage 6: rows, shards, schema metadata, determinism and streaming of the shard writer."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import Features, List, Video

from splice_build.write import ShardWriter, write_dataset
from splice_dataset import (
    CLIP_DATA_DIR,
    TEXT_DATA_DIR,
    clip_file_name,
    columns,
    features,
    shard_name,
)


def _shards(out: Path, folder: str) -> list[Path]:
    return sorted((out / folder).glob("*.parquet"))


def _rows(paths: list[Path]) -> list[dict]:
    return [row for p in paths for row in pq.read_table(p).to_pylist()]


def test_rows_follow_the_schema(tmp_path, tiny_videos):
    result = write_dataset(tiny_videos, tmp_path / "out")
    clip_shards = _shards(tmp_path / "out", CLIP_DATA_DIR)
    text_shards = _shards(tmp_path / "out", TEXT_DATA_DIR)
    assert [p.name for p in clip_shards] == [shard_name("test", 0, 1)]
    assert [p.name for p in text_shards] == [shard_name("test", 0, 1)]
    assert pq.read_schema(clip_shards[0]).names == list(columns("video_text"))
    assert pq.read_schema(text_shards[0]).names == list(columns("text"))

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

    text_rows = _rows(text_shards)
    assert text_rows == [{c: r[c] for c in columns("text")} for r in rows]
    assert result.num_rows == len(tiny_videos)
    assert result.num_clips == sum(len(v.clips) for v in tiny_videos)
    assert [v.video_id for v in result.videos] == [r["video_id"] for r in rows]
    assert result.download_size("video") == clip_shards[0].stat().st_size
    assert result.num_bytes("video") < result.num_bytes("video_text")


def test_schema_metadata_restores_list_of_video(tmp_path, tiny_videos):
    write_dataset(tiny_videos[:2], tmp_path / "out")
    clip_schema = pq.read_schema(_shards(tmp_path / "out", CLIP_DATA_DIR)[0])
    text_schema = pq.read_schema(_shards(tmp_path / "out", TEXT_DATA_DIR)[0])
    assert b"huggingface" in clip_schema.metadata
    restored = Features.from_arrow_schema(clip_schema)
    assert restored == features("video_text")
    assert restored["clips"] == List(Video())
    assert Features.from_arrow_schema(text_schema) == features("text")


def test_size_cap_and_row_groups(tmp_path, tiny_videos):
    out = tmp_path / "out"
    per_video = max(sum(c.path.stat().st_size for c in v.clips) for v in tiny_videos)
    cap = per_video + 2_000
    result = write_dataset(tiny_videos, out, max_shard_bytes=cap, rows_per_row_group=1)
    shards = _shards(out, CLIP_DATA_DIR)
    n = len(shards)
    assert n >= 3
    for info in result.clip_shards:  # under the cap, unless one row group alone exceeds it
        assert sum(info.column_bytes.values()) <= cap or info.num_rows == 1
    assert [p.name for p in shards] == [shard_name("test", i, n) for i in range(n)]
    assert [s.path for s in result.clip_shards] == shards
    assert sum(pq.ParquetFile(p).metadata.num_rows for p in shards) == len(tiny_videos)
    for p in shards:
        meta = pq.ParquetFile(p).metadata
        assert all(meta.row_group(i).num_rows == 1 for i in range(meta.num_row_groups))
    assert not list(out.rglob(".tmp-*"))
    ids = [r["video_id"] for r in _rows(shards)]
    assert ids == sorted(ids) == [v.entry.video_id for v in tiny_videos]

    # a rebuild into the same folder with fewer shards leaves no stale shard behind
    write_dataset(tiny_videos, out)
    assert [p.name for p in _shards(out, CLIP_DATA_DIR)] == [shard_name("test", 0, 1)]


def test_row_groups_hold_a_few_videos(tmp_path, tiny_videos):
    write_dataset(tiny_videos, tmp_path / "out", rows_per_row_group=4)
    meta = pq.ParquetFile(_shards(tmp_path / "out", CLIP_DATA_DIR)[0]).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [4, 2]


def test_output_is_byte_identical(tmp_path, tiny_videos):
    write_dataset(tiny_videos, tmp_path / "a", rows_per_row_group=2)
    write_dataset(tiny_videos, tmp_path / "b", rows_per_row_group=2)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.parquet"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.parquet"))
    assert files_a == files_b and len(files_a) == 2
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_rows_leave_memory_one_row_group_at_a_time(tmp_path, tiny_videos):
    """The writer consumes a stream and writes each full row group before reading on."""
    out = tmp_path / "out"
    written_when_yielding = []

    def stream():
        for video in tiny_videos:
            tmp = list((out / CLIP_DATA_DIR).glob(".tmp-*.parquet"))
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
    for folder, config in ((CLIP_DATA_DIR, "video_text"), (TEXT_DATA_DIR, "text")):
        (shard,) = _shards(tmp_path / "out", folder)
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
