"""The whole pipeline on real COIN annotations and rendered stand-in sources: reproducible,
resumable after SIGKILL, and skipping broken videos with their reason."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av
import datasets
import pyarrow.parquet as pq
import pytest

import splice_dataset as schema
from splice_build.output.validate.parts import check_part
from splice_build.running.executors import LocalExecutor
from splice_build.running.pipeline import run_build
from splice_build.running.report import REPORT_JSON, REPORT_TXT, load_report
from splice_build.running.workdir import CUT_RECORD
from tests.support.build_helpers import (
    committed,
    config,
    demo_database,
    ids_with_steps,
    retimed_annotations,
    subset_annotations,
    tree_digest,
    wait_for_first_commit,
)
from tests.support.videos import set_display_rotation, write_corner_video, write_video


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
    tmp_path: Path, sources: Path, demo_ids: list[str], subset_build
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    straight, _ = subset_build(4)  # the session's build of these videos, read only
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
    tmp_path: Path, sources: Path, demo_ids: list[str], subset_build
) -> None:
    def orders(out: Path) -> dict[str, list[int]]:
        rows = pq.read_table(out / schema.shard_dir("text")).to_pylist()
        return {r[schema.VIDEO_ID]: r[schema.ANSWER]["order"] for r in rows}

    small = orders(subset_build(2)[0])  # the session's build of two videos, read only
    annotations = subset_annotations(tmp_path, demo_ids[:5], "large.json")
    large = orders(
        run_build(config(annotations, sources, tmp_path / "large" / "splice", validate=False)).out
    )
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
    from splice_build.running.workdir import CUT_RECORD, WorkDir

    work = WorkDir(tmp_path / "work")
    folder = work.video_dir("abc")
    folder.mkdir(parents=True)
    for text in ("{not json", "[1, 2]", '{"key": "k"}', '{"key": "k", "clips": [{"path": 3}]}'):
        (folder / CUT_RECORD).write_text(text, "utf-8")
        assert work.lookup("abc").video is None, text


# --- the work folder: keyed by the sources, verified before reuse -------------------------

SEGMENTS = [(0.5, 2.0), (3.0, 5.0), (6.0, 8.0)]


def _tiny_sources(folder: Path, ids: list[str], **kw) -> Path:
    """10 s index-bar sources (tests/support/videos.py) for the retimed entries of ``ids``."""
    folder.mkdir(parents=True, exist_ok=True)
    for vid in ids:
        write_video(folder / f"{vid}.mp4", n_frames=100, fps=10, **kw)
    return folder


def _without_report(folder: Path) -> dict[str, str]:
    return {k: v for k, v in tree_digest(folder).items() if not k.startswith("build_report")}


def test_replaced_source_or_other_video_folder_is_cut_again(tmp_path: Path) -> None:
    ids = ids_with_steps(2, len(SEGMENTS))
    annotations = retimed_annotations(tmp_path, {v: SEGMENTS for v in ids}, duration=10.0)
    first = _tiny_sources(tmp_path / "first", ids)
    # Another download of the same videos: another resolution.
    other = _tiny_sources(tmp_path / "other", ids, size=(96, 64))
    fresh = run_build(config(annotations, other, tmp_path / "fresh" / "splice")).out

    work = tmp_path / "work"
    old = run_build(config(annotations, first, tmp_path / "splice", work=work)).out
    old_digest = _without_report(old)
    assert old_digest != _without_report(fresh)
    # Another --videos folder with the same ids, same work folder.
    result = run_build(config(annotations, other, tmp_path / "splice", work=work))
    assert result.problems == []
    assert tree_digest(result.out) == tree_digest(fresh)
    # A source replaced in place (a re-download into the first folder).
    for vid in ids:
        shutil.copy(other / f"{vid}.mp4", first / f"{vid}.mp4")
    result = run_build(config(annotations, first, tmp_path / "splice", work=work))
    assert tree_digest(result.out) == tree_digest(fresh)


def test_a_rerun_with_nothing_to_cut_hands_no_task_to_the_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver reuses whole work entries itself (their clips' sha256 verified, as a
    worker would): no worker is asked to cut, and the output is the one a worker's reuse
    gave. (The final validation's parts still run on the executor.)"""
    ids = ids_with_steps(2, len(SEGMENTS))
    annotations = retimed_annotations(tmp_path, {v: SEGMENTS for v in ids}, duration=10.0)
    sources = _tiny_sources(tmp_path / "videos", ids)
    two = replace(config(annotations, sources, tmp_path / "splice"), workers=2)
    first = _without_report(run_build(two).out)
    asked = []
    real = LocalExecutor.run

    def run(self, fn, tasks):
        asked.append(fn)
        return real(self, fn, tasks) if fn is check_part else iter(())

    monkeypatch.setattr(LocalExecutor, "run", run)
    result = run_build(two)
    assert asked == [check_part] and result.problems == []
    assert sorted(v.video_id for v in result.report.included) == sorted(ids)
    assert _without_report(result.out) == first


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete", "record"])
def test_damaged_work_entry_is_cut_again_with_a_note(tmp_path: Path, damage: str) -> None:
    ids = ids_with_steps(2, len(SEGMENTS))
    annotations = retimed_annotations(tmp_path, {v: SEGMENTS for v in ids}, duration=10.0)
    sources = _tiny_sources(tmp_path / "videos", ids)
    out, work = tmp_path / "splice", tmp_path / "splice-work"
    straight = _without_report(run_build(config(annotations, sources, out)).out)
    folder = work / "videos" / ids[1]
    clip = folder / "step01.mp4"
    data = clip.read_bytes()
    if damage == "truncate":
        clip.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        middle = len(data) // 2
        clip.write_bytes(data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :])
    elif damage == "delete":
        clip.unlink()
    else:
        (folder / CUT_RECORD).write_text("{half a record", "utf-8")
    result = run_build(config(annotations, sources, out))
    assert result.problems == []
    assert _without_report(result.out) == straight
    notes = load_report(result.out)["notes"]
    assert len(notes) == 1 and notes[0].startswith(f"video {ids[1]}: work entry damaged")
    if damage != "record":
        assert "step01.mp4" in notes[0]
    assert str(tmp_path) not in notes[0]
    assert notes[0] in (result.out / REPORT_TXT).read_text("utf-8")
    # Redone once: the next rerun reuses it silently.
    again = run_build(config(annotations, sources, out))
    assert load_report(again.out)["notes"] == []


# --- the cutter and the validator agree --------------------------------------------------


def test_short_variable_rate_and_rotated_sources_build_and_validate(tmp_path: Path) -> None:
    """A source 0.4 s shorter than its last step (inside the 1 s tolerance), one that
    pauses over every step start and a phone video with a display matrix: all are cut
    and the build validates."""
    short, gapped, phone = ids_with_steps(3, len(SEGMENTS))
    annotations = retimed_annotations(tmp_path, {v: SEGMENTS for v in (short, gapped, phone)}, 10.0)
    videos = tmp_path / "videos"
    videos.mkdir()
    last_end = SEGMENTS[-1][1]
    write_video(videos / f"{short}.mp4", n_frames=round((last_end - 0.4) * 10), fps=10)
    times = [
        t for t in range(0, 9000, 100) if not any(-350 < t - s * 1000 < 250 for s, _ in SEGMENTS)
    ]
    write_video(
        videos / f"{gapped}.mp4",
        n_frames=len(times),
        fps=10,
        time_base=Fraction(1, 1000),
        pts=times,
    )
    set_display_rotation(write_corner_video(videos / f"{phone}.mp4", n_frames=100), -90)
    result = run_build(config(annotations, videos, tmp_path / "splice"))
    assert sorted(v.video_id for v in result.report.included) == sorted([short, gapped, phone])
    assert result.problems == []
    rows = {
        r[schema.VIDEO_ID]: r
        for r in pq.read_table(result.out / schema.shard_dir("text")).to_pylist()
    }
    # The short source's last clip goes up to its last frame and says so.
    row = rows[short]
    last = max(range(row[schema.NUM_CLIPS]), key=lambda k: row[schema.ANSWER]["segments"][k]["end"])
    assert row[schema.CLIP_DURATIONS][last] == pytest.approx(last_end - 0.4 - SEGMENTS[-1][0])
    # The phone video's clips are portrait, as players show it.
    table = pq.read_table(result.out / schema.shard_dir("video_text")).to_pylist()
    clips = next(r for r in table if r[schema.VIDEO_ID] == phone)[schema.CLIPS]
    for clip in clips:
        with av.open(io.BytesIO(clip["bytes"])) as container:
            stream = container.streams.video[0]
            assert (stream.width, stream.height) == (64, 96)


def _short_clips_for(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    """A cutter bug, for one video: every clip of ``bad`` loses its last five frames (the
    clips are real, they just break the rule the validator checks): the cutter is given
    steps that end five source frames early, and its video keeps the true steps."""
    from dataclasses import replace

    from splice_build.stages import cut

    real_cut = cut.cut_video

    def cut_video(probed, *args, **kwargs):
        if probed.entry.video_id != bad:
            return real_cut(probed, *args, **kwargs)
        early = 5 / probed.source.fps
        steps = tuple(replace(s, end=s.end - early) for s in probed.entry.steps)
        shortened = replace(probed, entry=replace(probed.entry, steps=steps))
        return replace(real_cut(shortened, *args, **kwargs), entry=probed.entry)

    monkeypatch.setattr(cut, "cut_video", cut_video)


@pytest.mark.parametrize("caught_by", ["worker", "final validation"])
def test_video_whose_clips_fail_validation_is_dropped_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, caught_by: str
) -> None:
    from splice_build.cli import main
    from splice_build.running import worker

    good, bad = ids_with_steps(2, len(SEGMENTS))
    annotations = retimed_annotations(tmp_path, {v: SEGMENTS for v in (good, bad)}, 10.0)
    videos = _tiny_sources(tmp_path / "videos", [good, bad])
    _short_clips_for(monkeypatch, bad)
    if caught_by == "final validation":  # as if the worker's own check had missed it
        monkeypatch.setattr(worker, "check_clips", lambda video, tolerance: None)
    out = tmp_path / "splice"
    code = main(
        ["build", "--annotations", str(annotations), "--videos", str(videos), "--out", str(out),
         "--workers", "1", "--no-progress"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1
    assert f"validate: video {bad} dropped: " in printed
    status = {v["video_id"]: v for v in load_report(out)["videos"]}
    assert status[good]["status"] == "included"
    assert status[bad]["status"] == "skipped" and status[bad]["stage"] == "validate"
    assert "lasts" in status[bad]["reason"] and "segment lasts" in status[bad]["reason"]
    assert "validate" in (out / REPORT_TXT).read_text("utf-8")
    # What was written is a valid build of the good video alone.
    from splice_build.output.validate import validate

    assert validate(out) == []
    rows = pq.read_table(out / schema.shard_dir("text")).to_pylist()
    assert [r[schema.VIDEO_ID] for r in rows] == [good]


def test_the_work_key_is_the_cut_settings_tolerance_included() -> None:
    """The coverage tolerance decides whether a video is cut at all, so changing it (like
    any encoder setting) changes the work key."""
    from dataclasses import replace

    from splice_build.records import CutSettings, Step, VideoEntry
    from splice_build.running.workdir import work_key

    entry = VideoEntry("vid", "task", "domain", 1, "training", 9.0, "u", (Step(1, "a", 0, 2),))
    source = [{"path": "vid.mp4", "bytes": 3, "mtime_ns": 5}]
    settings = CutSettings(short_side=448)
    key = work_key(entry, settings, source)
    assert work_key(entry, CutSettings(short_side=448), source) == key
    assert work_key(entry, replace(settings, tolerance=0.5), source) != key
    assert work_key(entry, replace(settings, crf=24), source) != key
    assert work_key(entry, replace(settings, short_side=360), source) != key
