"""WebDataset shards: read back with the ``webdataset`` library (the loader the card names),
one sample per video holding its JSON row and every clip, deterministic tar bytes."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import av
import datasets
import pytest
import webdataset as wds

import splice_dataset as schema
from splice_build.output.writing.rows import video_row
from splice_build.output.writing.write_webdataset import (
    card_section,
    clip_member_field,
    tar_shard_name,
    write_webdataset,
)
from splice_build.records import ShuffledVideo


def _read(shards: list[Path]) -> list[dict]:
    """Every sample, in shard order, as the webdataset library decodes it."""
    return list(wds.WebDataset([str(s) for s in shards], shardshuffle=False).decode())


def _frames(data: bytes) -> int:
    with av.open(io.BytesIO(data)) as container:
        return sum(1 for _ in container.decode(video=0))


def test_webdataset_library_reads_every_sample_with_clips_and_json(
    tmp_path: Path, tiny_videos: list[ShuffledVideo]
) -> None:
    shards = write_webdataset(tiny_videos, tmp_path)
    assert shards == [tmp_path / schema.WEBDATASET_DIR / "test-000000.tar"]
    samples = _read(shards)
    assert [s["__key__"] for s in samples] == [v.entry.video_id for v in tiny_videos]
    for sample, video in zip(samples, tiny_videos, strict=True):
        n = len(video.clips)
        fields = {clip_member_field(k) for k in range(1, n + 1)}
        assert set(sample) - {"__key__", "__url__", "__local_path__"} == {"json", *fields}
        # The JSON is the Parquet row with each clip replaced by its field name.
        expected = video_row(video)
        expected[schema.CLIPS] = [clip_member_field(k) for k in range(1, n + 1)]
        assert sample["json"] == json.loads(json.dumps(expected))
        assert sample["json"][schema.ANSWER]["order"] == list(video.order)
        for label, clip in enumerate(video.clips, start=1):
            data = sample[sample["json"][schema.CLIPS][label - 1]]
            assert data == Path(clip.path).read_bytes()  # Video k is the k-th shuffled clip
            assert _frames(data) == clip.num_frames


def test_shards_split_between_samples_and_read_back_in_order(
    tmp_path: Path, tiny_videos: list[ShuffledVideo]
) -> None:
    shards = write_webdataset(tiny_videos, tmp_path, max_shard_bytes=20_000)
    assert len(shards) > 1
    assert [s.name for s in shards] == [tar_shard_name("test", i) for i in range(len(shards))]
    pattern = str(tmp_path / schema.WEBDATASET_DIR / f"test-{{000000..{len(shards) - 1:06d}}}.tar")
    samples = list(wds.WebDataset(pattern, shardshuffle=False).decode())
    assert [s["__key__"] for s in samples] == [v.entry.video_id for v in tiny_videos]
    for shard in shards:
        with tarfile.open(shard) as tar:
            keys = [m.name.split(".", 1)[0] for m in tar.getmembers()]
        # No sample is cut across two shards: each key's members are all in one shard.
        for key in set(keys):
            video = next(v for v in tiny_videos if v.entry.video_id == key)
            assert keys.count(key) == 1 + len(video.clips)
        if len(set(keys)) > 1:  # a shard holding several samples stays under the cap
            assert shard.stat().st_size <= 20_000 + 10 * 1024  # tar end-of-archive padding


def test_shards_are_deterministic(tmp_path: Path, tiny_videos: list[ShuffledVideo]) -> None:
    first = write_webdataset(tiny_videos, tmp_path / "a")
    second = write_webdataset(tiny_videos, tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    with tarfile.open(first[0]) as tar:
        members = tar.getmembers()
    assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.mode == 0o644 for m in members)
    assert [m.name for m in members][:3] == ["a0vid.json", "a0vid.video1.mp4", "a0vid.video2.mp4"]


def test_rewrite_removes_stale_shards(tmp_path: Path, tiny_videos: list[ShuffledVideo]) -> None:
    many = write_webdataset(tiny_videos, tmp_path, max_shard_bytes=20_000)
    one = write_webdataset(tiny_videos[:1], tmp_path)
    assert len(many) > 1
    assert sorted((tmp_path / schema.WEBDATASET_DIR).iterdir()) == one


def test_keys_are_youtube_ids_without_dots(tmp_path: Path, make_tiny_video) -> None:
    ok = make_tiny_video(tmp_path, "-aB_9xY-z_0", 2)  # '-' and '_' are fine
    (sample,) = _read(write_webdataset([ok], tmp_path / "ok"))
    assert sample["__key__"] == "-aB_9xY-z_0"
    dotted = make_tiny_video(tmp_path, "abc.def", 2)
    with pytest.raises(ValueError, match=r"abc\.def.*no '\.'"):
        write_webdataset([dotted], tmp_path / "bad")


def test_unsorted_or_repeated_videos_are_refused(
    tmp_path: Path, tiny_videos: list[ShuffledVideo]
) -> None:
    with pytest.raises(ValueError, match="b1vid.*sorted"):
        write_webdataset([tiny_videos[2], tiny_videos[1]], tmp_path)
    with pytest.raises(ValueError, match="a0vid.*sorted"):
        write_webdataset([tiny_videos[0], tiny_videos[0]], tmp_path)


def test_datasets_own_webdataset_loader_rejects_varying_clip_counts(
    tmp_path: Path, tiny_videos: list[ShuffledVideo]
) -> None:
    """Why the card sends WebDataset users to the ``webdataset`` library: samples with
    2..7 clips have different member sets, which ``datasets``' loader refuses."""
    shards = write_webdataset(tiny_videos, tmp_path)
    with pytest.raises(Exception, match="same prefix or the same types"):
        datasets.load_dataset("webdataset", data_files={"test": [str(s) for s in shards]})


def test_pipeline_format_both_writes_shards_matching_parquet(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    from splice_build.running.pipeline import run_build
    from tests.support.build_helpers import config, subset_annotations

    annotations = subset_annotations(tmp_path, demo_ids[:2])
    result = run_build(config(annotations, sources, tmp_path / "splice", format="both"))
    assert result.problems == []
    shards = sorted((result.out / schema.WEBDATASET_DIR).glob("test-*.tar"))
    samples = _read(shards)
    ds = datasets.load_dataset(str(result.out), "video_text", split=schema.SPLIT)
    ds = ds.cast_column(schema.CLIPS, datasets.List(datasets.Video(decode=False)))
    assert [s["__key__"] for s in samples] == list(ds[schema.VIDEO_ID])
    for sample, row in zip(samples, ds, strict=True):
        for column in schema.columns("video_text"):
            if column != schema.CLIPS:
                assert sample["json"][column] == row[column], column
        assert [sample[f] for f in sample["json"][schema.CLIPS]] == [
            c["bytes"] for c in row[schema.CLIPS]
        ]


@pytest.mark.parametrize("max_shard_bytes", [10**9, 20_000])
def test_card_section_snippet_reads_the_shards(
    tmp_path: Path, tiny_videos: list[ShuffledVideo], monkeypatch, max_shard_bytes: int
) -> None:
    shards = write_webdataset(tiny_videos, tmp_path, max_shard_bytes=max_shard_bytes)
    heading, body = card_section(len(shards))
    assert heading == "WebDataset shards"
    assert "webdataset" in body and "load_dataset" in body
    code = body.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)  # the card's paths are relative to the build folder
    namespace: dict = {}
    exec(code, namespace)  # the card's own example, as a reader would run it
    last = tiny_videos[-1]
    assert namespace["order"] == list(last.order)
    assert namespace["clips"] == [Path(c.path).read_bytes() for c in last.clips]
    assert [s["__key__"] for s in namespace["ds"]] == [v.entry.video_id for v in tiny_videos]
