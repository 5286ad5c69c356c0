"""Sources are found wherever a downloader put them (issue 12, point 10): COIN's
``<recipe_type>/<id>.mp4``, yt-dlp's ``<title> [<id>].<ext>``, any sub-folder; one walk of
the folder per build; a broken candidate gives way to the next; partial downloads never
count; duplicates are reported."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from splice_build.records import SkipVideo
from splice_build.running import pipeline
from splice_build.running.pipeline import run_build
from splice_build.running.report import REPORT_JSON
from splice_build.stages import sources
from splice_build.stages.probe import probe
from tests.support.build_helpers import (
    cli_build,
    clip_first_frames,
    config,
    demo_database,
    ids_with_steps,
    retimed_annotations,
    run_splice,
    subset_annotations,
)
from tests.support.videos import entry, truncate, write_video


def _recipe(video_id: str) -> int:
    return demo_database()[video_id]["recipe_type"]


def test_coin_layout_and_yt_dlp_names_are_found_and_built(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    """COIN's download_videos.py layout and yt-dlp's default names used to give "no source
    video" for every video."""
    coin_id, ytdlp_id, nested_id, flat_id = demo_ids[:4]
    videos = tmp_path / "videos"
    (videos / str(_recipe(coin_id))).mkdir(parents=True)
    shutil.copy(sources / f"{coin_id}.mp4", videos / str(_recipe(coin_id)) / f"{coin_id}.mp4")
    shutil.copy(sources / f"{ytdlp_id}.mp4", videos / f"How to cook, part 2 [{ytdlp_id}].mp4")
    (videos / "a" / "b").mkdir(parents=True)
    shutil.copy(sources / f"{nested_id}.mp4", videos / "a" / "b" / f"{nested_id}.MP4")
    shutil.copy(sources / f"{flat_id}.mp4", videos / f"{flat_id}.mp4")
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    result = run_build(config(annotations, videos, tmp_path / "splice"))
    status = {v.video_id: v for v in result.report.videos}
    assert all(status[v].status == "included" for v in demo_ids[:4]), status
    assert result.problems == []


def test_folder_is_walked_once_per_build(
    tmp_path: Path, sources: Path, demo_ids: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    videos = tmp_path / "videos"
    videos.mkdir()
    for vid in demo_ids[:3]:
        shutil.copy(sources / f"{vid}.mp4", videos / f"{vid}.mp4")
    walks = []
    real_walk = os.walk

    def counting_walk(top, *args, **kwargs):
        walks.append(Path(top))
        return real_walk(top, *args, **kwargs)

    monkeypatch.setattr(os, "walk", counting_walk)
    probed = []
    real_is_file = Path.is_file

    def counting_is_file(self):
        probed.append(self)
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", counting_is_file)
    annotations = subset_annotations(tmp_path, demo_ids[:3])
    result = run_build(config(annotations, videos, tmp_path / "splice", validate=False))
    assert len(result.report.included) == 3
    assert walks.count(videos) == 1
    per_video = [p for p in probed if p.name.split(".")[0] in demo_ids[:3]]
    assert not per_video  # no stat per extension per video


def test_index_ignores_partial_downloads_and_hidden_folders(tmp_path: Path) -> None:
    for name in (
        "abc.mp4.part",
        "abc.mkv.part",
        "abc.ytdl",
        "abc.mp4.ytdl",
        "abc.f137.mp4",
        "abc.f251.webm",
        "abc.fmp4.mp4",
        "abc.temp.mp4",
        "abc.mp4.part-Frag12",
        "Title [abc].f137.mp4",
        "Title [abc].mp4.part",
        ".splice-download/abc/abc.mp4",
        ".hidden.mp4",
        "notes.txt",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    index = sources.index_sources(tmp_path)
    found = index.lookup("abc")
    assert found.paths == ()
    assert "abc.mp4.part" in found.partial and "abc.f137.mp4" in found.partial
    assert index.files == 12  # the hidden ones are not counted

    (tmp_path / "abc.webm").write_bytes(b"x")
    (tmp_path / "12").mkdir()
    (tmp_path / "12" / "abc.mp4").write_bytes(b"x")
    (tmp_path / "Title [abc].mkv").write_bytes(b"x")
    found = sources.index_sources(tmp_path).lookup("abc")
    assert found.paths == ("12/abc.mp4", "Title [abc].mkv", "abc.webm")


def test_symlinked_folders_are_followed_once(tmp_path: Path) -> None:
    other = tmp_path / "other_disk" / "12"
    other.mkdir(parents=True)
    (other / "abc.mp4").write_bytes(b"x")
    videos = tmp_path / "videos"
    videos.mkdir()
    (videos / "12").symlink_to(other)
    (other / "loop").symlink_to(videos)  # a loop must not walk forever
    index = sources.index_sources(videos)
    assert index.lookup("abc").paths == ("12/abc.mp4",)


def test_broken_mp4_beside_good_webm_uses_the_webm(tmp_path: Path) -> None:
    """A failed merge leaves a broken ``<id>.mp4``; it used to hide the good ``<id>.webm``."""
    truncate(write_video(tmp_path / "vid.mp4", n_frames=100), 0.3)
    write_video(tmp_path / "vid.webm", n_frames=100, codec="libvpx")
    info = probe(entry("vid", [(0.0, 1.0), (8.0, 9.5)]), tmp_path).source
    assert info.path == tmp_path / "vid.webm"


def test_every_candidate_failing_names_each(tmp_path: Path) -> None:
    truncate(write_video(tmp_path / "vid.mp4", n_frames=100), 0.3)
    (tmp_path / "vid.webm").write_text("<html>not a video</html>")
    with pytest.raises(SkipVideo) as raised:
        probe(entry("vid", [(0.0, 1.0), (8.0, 9.5)]), tmp_path)
    reason = raised.value.reason
    assert "vid.mp4" in reason and "vid.webm" in reason


def test_no_source_reason_says_where_it_looked(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "other.mp4").write_bytes(b"x")
    (tmp_path / "x.txt").write_bytes(b"x")
    (tmp_path / "nosuchid.mp4.part").write_bytes(b"x")
    with pytest.raises(SkipVideo) as raised:
        probe(entry("nosuchid", [(0.0, 1.0)]), tmp_path)
    reason = raised.value.reason
    assert reason.startswith("no source video nosuchid.*")
    assert str(tmp_path) not in reason and "/work" not in reason
    assert "3 files" in reason and "sub-folder" in reason and "[nosuchid]" in reason
    assert "nosuchid.mp4.part" in reason  # the partial download it ignored


def test_duplicates_are_reported_in_the_build_report(
    tmp_path: Path, sources: Path, demo_ids: list[str]
) -> None:
    dup, single = demo_ids[:2]
    videos = tmp_path / "videos"
    (videos / str(_recipe(dup))).mkdir(parents=True)
    shutil.copy(sources / f"{dup}.mp4", videos / f"{dup}.mp4")
    shutil.copy(sources / f"{dup}.mp4", videos / str(_recipe(dup)) / f"{dup}.mp4")
    shutil.copy(sources / f"{single}.mp4", videos / f"{single}.mp4")
    annotations = subset_annotations(tmp_path, [dup, single])
    result = run_build(config(annotations, videos, tmp_path / "splice", validate=False))
    assert len(result.report.included) == 2
    warnings = json.loads((result.out / REPORT_JSON).read_text("utf-8"))["warnings"]
    dups = [w for w in warnings if dup in w]
    assert len(dups) == 1 and f"{_recipe(dup)}/{dup}.mp4" in dups[0]
    assert not [w for w in warnings if single in w]
    assert str(tmp_path) not in json.dumps(warnings)


def test_pipeline_passes_candidates_to_workers(tmp_path: Path) -> None:
    (tmp_path / "5").mkdir()
    (tmp_path / "5" / "abc.mkv").write_bytes(b"x")
    index = sources.index_sources(tmp_path)
    build = config(tmp_path, tmp_path, tmp_path / "out")
    tasks = pipeline.video_tasks([entry("abc", [(0.0, 1.0)])], index, tmp_path / "w", build)
    assert tasks[0].sources.paths == ("5/abc.mkv",) and tasks[0].sources.files == 1


def _preferred(folder, video_id):
    """The first candidate the build's one walk of ``folder`` gives for ``video_id``."""
    paths = sources.index_sources(folder).lookup(video_id).paths
    return folder / paths[0] if paths else None


def test_preferred_source_is_mp4_and_partial_downloads_are_ignored(tmp_path):
    assert _preferred(tmp_path, "abc") is None
    (tmp_path / "abc.mkv.part").write_bytes(b"x")
    (tmp_path / "abc.ytdl").write_bytes(b"x")
    (tmp_path / "abc.f137.mp4").write_bytes(b"x")
    assert _preferred(tmp_path, "abc") is None
    (tmp_path / "abc.webm").write_bytes(b"x")
    assert _preferred(tmp_path, "abc") == tmp_path / "abc.webm"
    (tmp_path / "abc.mkv").write_bytes(b"x")
    assert _preferred(tmp_path, "abc") == tmp_path / "abc.mkv"
    (tmp_path / "abc.mp4").write_bytes(b"x")
    assert _preferred(tmp_path, "abc") == tmp_path / "abc.mp4"
    (tmp_path / "UP.MP4").write_bytes(b"x")
    assert _preferred(tmp_path, "UP") == tmp_path / "UP.MP4"


def test_the_copy_in_the_entrys_recipe_folder_is_used(tmp_path: Path) -> None:
    """One video id in two COIN recipe folders (issue 21, wall 7): the copy in the folder of
    the entry's ``recipe_type`` is cut, although the other folder sorts first. The two copies
    differ in frame rate, so the clips' first frames tell which one was cut."""
    (video_id,) = ids_with_steps(1, 3)
    segments = [(0.5, 2.0), (3.0, 5.0), (6.0, 8.0)]
    annotations = retimed_annotations(tmp_path, {video_id: segments}, duration=10.0)
    recipe = str(_recipe(video_id))
    other = "0" if recipe != "0" else "1"  # sorts before the right folder
    videos = tmp_path / "videos"
    for folder, fps in ((recipe, 10), (other, 20)):
        (videos / folder).mkdir(parents=True)
        write_video(videos / folder / f"{video_id}.mp4", n_frames=10 * fps, fps=fps)
    out = tmp_path / "splice"
    cli_build(annotations, videos, out)
    assert clip_first_frames(out) == [5, 30, 60]  # the 10 fps copy: frames at start x 10
    warnings = json.loads((out / REPORT_JSON).read_text("utf-8"))["warnings"]
    (said,) = [w for w in warnings if video_id in w]
    assert said.index(f"{recipe}/{video_id}.mp4") < said.index(f"{other}/{video_id}.mp4"), said
    assert run_splice("validate", out).returncode == 0
