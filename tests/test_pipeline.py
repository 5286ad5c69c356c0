"""The whole pipeline on real COIN annotations and rendered stand-in sources: reproducible,
resumable after SIGKILL, and skipping broken videos with their reason."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

import splice_dataset as schema
from splice_build.pipeline import run_build
from splice_build.report import REPORT_JSON, REPORT_TXT, load_report
from splice_build.workdir import CUT_RECORD
from tests.build_helpers import (
    committed,
    config,
    demo_database,
    subset_annotations,
    tree_digest,
    wait_for_first_commit,
)


def test_demo_build_has_every_entry_in_report(demo_build: Path) -> None:
    report = load_report(demo_build)
    bundled = demo_database()
    assert sorted(v["video_id"] for v in report["videos"]) == sorted(bundled)
    included = [v for v in report["videos"] if v["status"] == "included"]
    assert len(included) == len(bundled)  # every bundled entry is a 2..7-step video
    rows = pq.read_table(demo_build / schema.shard_dir("text")).to_pylist()
    assert sorted(r[schema.VIDEO_ID] for r in rows) == sorted(v["video_id"] for v in included)
    for row in rows:
        entry = bundled[row[schema.VIDEO_ID]]
        assert row[schema.NUM_CLIPS] == len(entry["annotation"])
        order = row[schema.ANSWER]["order"]
        assert sorted(order) == list(range(1, len(order) + 1))
        # Reading the captions in answer order gives COIN's chronological labels.
        chronological = [row[schema.CAPTIONS][k - 1] for k in order]
        assert chronological == [a["label"] for a in entry["annotation"]]


@pytest.mark.parametrize("config", schema.CONFIGS)
@pytest.mark.parametrize("streaming", [False, True])
def test_load_dataset_everyconfig(demo_build: Path, config: str, streaming: bool) -> None:
    ds = datasets.load_dataset(str(demo_build), config, split=schema.SPLIT, streaming=streaming)
    assert list(ds.features) == list(schema.columns(config))
    if schema.CLIPS in ds.features:
        ds = ds.cast_column(schema.CLIPS, datasets.List(datasets.Video(decode=False)))
    row = next(iter(ds))
    assert set(row) == set(schema.columns(config))
    if schema.CLIPS in row:
        assert len(row[schema.CLIPS]) == row[schema.NUM_CLIPS]
        assert all(c["bytes"][4:8] == b"ftyp" for c in row[schema.CLIPS])


def test_same_seed_builds_identical_and_resume_after_sigkill(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    straight = run_build(config(annotations, sources, tmp_path / "a" / "splice")).out
    again = run_build(config(annotations, sources, tmp_path / "b" / "splice")).out
    assert tree_digest(straight) == tree_digest(again)

    # Kill a build with SIGKILL once it has committed one video, then resume it.
    out = tmp_path / "c" / "splice"
    work = tmp_path / "c" / "work"
    cmd = [
        sys.executable, "-m", "splice_build.cli", "build", "--annotations", str(annotations),
        "--videos", str(sources), "--out", str(out), "--work", str(work),
        "--workers", "1", "--no-progress", "--no-validate",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_first_commit(proc, work)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = committed(work)
    assert 1 <= len(done) < 4
    assert not out.exists()
    mtimes = {p.name: (p / CUT_RECORD).stat().st_mtime_ns for p in done}
    resumed = run_build(config(annotations, sources, out, work=work)).out
    # Finished videos were kept, not redone; the result equals the straight build.
    assert {p.name: (p / CUT_RECORD).stat().st_mtime_ns for p in done} == mtimes
    assert tree_digest(resumed) == tree_digest(straight)


def test_shuffles_unchanged_when_videos_are_added(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    def orders(ids: list[str], name: str) -> dict[str, list[int]]:
        annotations = subset_annotations(tmp_path, ids, f"{name}.json")
        out = run_build(
            config(annotations, sources, tmp_path / name / "splice", validate=False)
        ).out
        rows = pq.read_table(out / schema.shard_dir("text")).to_pylist()
        return {r[schema.VIDEO_ID]: r[schema.ANSWER]["order"] for r in rows}

    small = orders(demo_ids[:2], "small")
    large = orders(demo_ids[:5], "large")
    assert all(large[v] == small[v] for v in small)


def test_broken_sources_are_skipped_with_reason(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    ids = demo_ids[:5]
    videos = tmp_path / "videos"
    videos.mkdir()
    good, missing, empty, truncated, not_video = ids
    shutil.copy(sources / f"{good}.mp4", videos / f"{good}.mp4")
    (videos / f"{empty}.mp4").write_bytes(b"")
    data = (sources / f"{truncated}.mp4").read_bytes()
    (videos / f"{truncated}.mp4").write_bytes(data[: len(data) // 3])
    (videos / f"{not_video}.mp4").write_text("<html>Video unavailable</html>")
    annotations = subset_annotations(tmp_path, ids)
    result = run_build(config(annotations, videos, tmp_path / "splice"))
    status = {v.video_id: v for v in result.report.videos}
    assert status[good].status == "included"
    for vid in (missing, empty, truncated, not_video):
        assert status[vid].status == "skipped", vid
        assert status[vid].stage in ("probe", "cut")
        assert status[vid].reason
    assert status[missing].reason.startswith(f"no source video {missing}.*")
    report_text = (result.out / REPORT_JSON).read_text("utf-8")
    assert str(tmp_path) not in report_text  # no local paths in what gets published
    assert result.problems == []
    rows = pq.read_table(result.out / schema.shard_dir("text")).to_pylist()
    assert [r[schema.VIDEO_ID] for r in rows] == [good]
    summary = (result.out / REPORT_TXT).read_text("utf-8")
    assert "skipped: 4" in summary


def test_rebuild_into_the_same_folder_never_loads_stale_rows(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    """`load_dataset` caches a local folder by its card's YAML: a rebuild with another seed
    must give another card, or users would be scored against the old build's answers."""
    annotations = subset_annotations(tmp_path, demo_ids[:3])
    out = tmp_path / "splice"
    answers = []
    for seed in (0, 1):
        run_build(config(annotations, sources, out, work=tmp_path / "work", seed=seed))
        ds = datasets.load_dataset(str(out), "text", split=schema.SPLIT)
        truth = pq.read_table(out / schema.shard_dir("text")).to_pylist()
        assert [r[schema.ANSWER] for r in ds] == [r[schema.ANSWER] for r in truth]
        answers.append([r[schema.ANSWER]["order"] for r in truth])
    assert answers[0] != answers[1]  # the seeds shuffle differently, so the check had teeth


def test_unusable_work_records_are_redone_not_trusted(tmp_path: Path) -> None:
    from splice_build.workdir import CUT_RECORD, WorkDir

    work = WorkDir(tmp_path / "work")
    folder = work.video_dir("abc")
    folder.mkdir(parents=True)
    for text in ("{not json", "[1, 2]", '{"key": "k"}', '{"key": "k", "clips": [{"path": 3}]}'):
        (folder / CUT_RECORD).write_text(text, "utf-8")
        assert work.load("abc") is None, text
