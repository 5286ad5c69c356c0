"""A build owns only what it made (issue 12): every `--out`/`--work` mistake is refused
before any work and loses no file; a failed or empty build leaves the previous output as it
was; bad options are refused up front in one line; workers die with their driver; a second
build on the same folders is refused; no local path reaches the published report."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

import splice_dataset as schema
from splice_build.cli import main
from splice_build.errors import UserError
from splice_build.running.pipeline import run_build
from splice_build.running.report import REPORT_JSON
from splice_build.running.workdir import WorkDir
from tests.support.build_helpers import (
    alive,
    committed,
    config,
    copy_build,
    demo_database,
    descendants,
    one_line_error,
    subset_annotations,
    tree_digest,
    wait_for_first_commit,
)


def _splice(capsys, *argv: str | Path) -> tuple[int, str]:
    """Run ``splice build ...`` in this process: (exit status, stderr)."""
    code = main(["build", *map(str, argv), "--workers", "1", "--no-progress"])
    return code, capsys.readouterr().err


def _project(tmp_path: Path, sources: Path, ids: list[str]) -> Path:
    """A user's folder as the README has it: COIN.json and videos/ side by side."""
    project = tmp_path / "project"
    (project / "videos").mkdir(parents=True)
    for vid in ids:
        shutil.copy(sources / f"{vid}.mp4", project / "videos" / f"{vid}.mp4")
    subset_annotations(project, ids, "COIN.json")
    (project / "thesis.txt").write_text("three years of work", "utf-8")
    return project


def _everything(root: Path) -> dict[str, str]:
    """Every file under root (relative name -> sha256), to prove nothing was touched."""
    return tree_digest(root)


@pytest.mark.parametrize(
    "out, work, option",
    [
        ("videos", None, "--out"),  # the sources themselves
        (".", None, "--out"),  # the current folder (holds COIN.json, videos/, thesis)
        ("..", None, "--out"),  # the parent of the current folder
        ("videos/splice", None, "--out"),  # inside the sources
        ("splice", "videos", "--work"),
        ("splice", ".", "--work"),
        ("splice", "..", "--work"),
        ("splice", "videos/work", "--work"),  # cuts would be found as sources
        ("splice", "splice/work", "--work"),  # the swap would delete the work folder
        ("splice", "splice", "--work"),
    ],
)
def test_out_and_work_mistakes_are_refused_and_lose_nothing(
    tmp_path, sources, demo_ids, capsys, monkeypatch, out, work, option
) -> None:
    project = _project(tmp_path, sources, demo_ids[:2])
    monkeypatch.chdir(project)
    before = _everything(tmp_path)
    extra = ["--work", work] if work else []
    code, err = _splice(capsys, "--annotations", "COIN.json", "--videos", "videos", "--out", out,
                        *extra)  # fmt: skip
    one_line_error(code, err, option)
    assert _everything(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]
    assert sorted(p.name for p in project.iterdir()) == ["COIN.json", "thesis.txt", "videos"]


def test_out_holding_the_annotations_or_curation_is_refused(
    tmp_path, sources, demo_ids, capsys
) -> None:
    project = _project(tmp_path, sources, demo_ids[:2])
    data = tmp_path / "data"
    data.mkdir()
    shutil.move(project / "COIN.json", data / "COIN.json")
    curation = tmp_path / "cur" / "curation.csv"
    curation.parent.mkdir()
    curation.write_text("video_id,decision,reason\n", "utf-8")
    before = _everything(tmp_path)
    args = ["--videos", project / "videos"]
    code, err = _splice(capsys, "--annotations", data / "COIN.json", *args, "--out", data)
    one_line_error(code, err, "--out", "annotation")
    code, err = _splice(capsys, "--annotations", data / "COIN.json", *args, "--curation",
                        curation, "--out", tmp_path / "x", "--work", curation.parent)  # fmt: skip
    one_line_error(code, err, "--work", "curation")
    assert _everything(tmp_path) == before


def test_out_that_is_not_a_splice_build_is_refused(
    tmp_path, sources, demo_ids, capsys, monkeypatch
) -> None:
    project = _project(tmp_path, sources, demo_ids[:2])
    monkeypatch.chdir(project)
    mine = project / "results"
    mine.mkdir()
    (mine / "notes.md").write_text("mine", "utf-8")
    work_like = project / "scratch"
    (work_like / "videos").mkdir(parents=True)  # what a work folder holds, but not one
    (work_like / "videos" / "keep.txt").write_text("mine", "utf-8")
    before = _everything(tmp_path)
    base = ["--annotations", "COIN.json", "--videos", "videos"]
    one_line_error(*_splice(capsys, *base, "--out", "results"), "--out", "results", "SPLICE build")
    one_line_error(*_splice(capsys, *base, "--out", "thesis.txt"), "--out", "thesis.txt", "file")
    one_line_error(*_splice(capsys, *base, "--work", "scratch"), "--work", "scratch")
    # A file the user put into a previous build is not the build's to delete either.
    assert _splice(capsys, *base, "--out", "splice")[0] == 0
    (project / "splice" / "predictions.jsonl").write_text("{}", "utf-8")
    before = _everything(tmp_path)
    one_line_error(*_splice(capsys, *base, "--out", "splice"), "predictions.jsonl")
    assert _everything(tmp_path) == before


def test_normal_layout_builds_and_leaves_user_files_alone(
    tmp_path, sources, demo_ids, capsys, monkeypatch
) -> None:
    """The default `--out` (`splice-data`) beside COIN.json and videos/ is the README's case; a
    folder named like the old staging folder is the user's and survives."""
    project = _project(tmp_path, sources, demo_ids[:2])
    monkeypatch.chdir(project)
    (project / "splice-data.incomplete").mkdir()
    (project / "splice-data.incomplete" / "mine.txt").write_text("mine", "utf-8")
    before = _everything(project)
    code, err = _splice(capsys, "--annotations", "COIN.json", "--videos", "videos")
    assert code == 0, err
    after = _everything(project)
    assert {k: v for k, v in after.items() if k in before} == before
    new = {k.split("/")[0] for k in after if k not in before}
    assert new == {schema.DEFAULT_BUILD_DIR, f"{schema.DEFAULT_BUILD_DIR}-work"}
    # What a killed build left beside the output goes; a user's folder of that name stays.
    dead = project / ".splice-data.incomplete-dead"
    (dead / "video_text").mkdir(parents=True)
    (dead / "video_text" / "test-00000-of-00001.parquet").write_bytes(b"PAR1")
    (project / ".splice-data.incomplete-mine").mkdir()
    (project / ".splice-data.incomplete-mine" / "notes.txt").write_text("mine", "utf-8")
    before = _everything(project)
    code, err = _splice(capsys, "--annotations", "COIN.json", "--videos", "videos", "--seed", "1")
    assert code == 0, err  # a previous build is replaced
    after = _everything(project)
    ours = ("splice-data/", ".splice-data.inc")
    assert {k: v for k, v in after.items() if not k.startswith(ours)} == {
        k: v for k, v in before.items() if not k.startswith(ours)
    }
    assert not dead.exists()
    assert (project / ".splice-data.incomplete-mine" / "notes.txt").read_text("utf-8") == "mine"
    assert sorted(p.name for p in project.iterdir()) == [
        ".splice-data.incomplete-mine", "COIN.json", "splice-data", "splice-data-work",
        "splice-data.incomplete", "thesis.txt", "videos",
    ]  # fmt: skip


def test_what_counts_as_a_previous_build_or_work_folder(tmp_path, demo_build) -> None:
    from splice_build.running.ownership import foreign_output, foreign_work

    out = Path(shutil.copytree(demo_build, tmp_path / "splice"))
    (out / ".DS_Store").write_bytes(b"\0")  # a desktop opened it
    assert foreign_output(out) is None
    assert foreign_output(tmp_path / "absent") is None and foreign_output(tmp_path) is not None
    (out / "video_text" / "notes.txt").write_text("mine", "utf-8")
    assert "video_text/notes.txt" in foreign_output(out)
    unmarked = tmp_path / "work"  # cuts without the marker every build writes: not ours
    (unmarked / "videos" / "abc").mkdir(parents=True)
    (unmarked / "videos" / "abc" / "cut.json").write_text("{}", "utf-8")
    assert "holds videos" in foreign_work(unmarked)
    (unmarked / "splice-work.json").write_text("{}", "utf-8")
    assert foreign_work(unmarked) is None


def test_a_build_failing_while_writing_leaves_the_previous_output(
    tmp_path, sources, demo_ids, monkeypatch, subset_build
) -> None:
    """The disk fills up while the card is written: the old build stays, whole, and the
    half-written new one is gone."""
    from splice_build.output import card

    annotations = subset_annotations(tmp_path, demo_ids[:2])
    out = copy_build(subset_build(2), tmp_path / "splice")  # the previous build, its work
    before = tree_digest(out)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(card, "render_card", disk_full)
    with pytest.raises(UserError, match="no space left on its disk.*left as it was"):
        run_build(config(annotations, sources, out, seed=3))
    assert tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coin.json", "splice", "splice-work"]


# --- 6. empty results and bad options ---------------------------------------------------


def test_zero_video_build_fails_and_keeps_the_previous_output(
    tmp_path, sources, demo_ids, capsys, subset_build
) -> None:
    ids = demo_ids[:2]
    annotations = subset_annotations(tmp_path, ids)
    out = copy_build(subset_build(2), tmp_path / "splice")  # the previous build, its work
    before = tree_digest(out)
    wrong = tmp_path / "downloads"  # a wrong --videos: exists, holds no source
    wrong.mkdir()
    code, err = _splice(capsys, "--annotations", annotations, "--videos", wrong, "--out", out,
                        "--work", tmp_path / "work2")  # fmt: skip
    one_line_error(code, err, "no video", "downloads", "probe 2")
    assert tree_digest(out) == before
    empty = tmp_path / "empty.json"
    empty.write_text('{"database": {}}', "utf-8")
    code, err = _splice(capsys, "--annotations", empty, "--videos", sources, "--out", out)
    one_line_error(code, err, "empty.json", "database")
    assert tree_digest(out) == before
    # No work2: a work folder the build made and cut nothing into is removed again.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "coin.json", "downloads", "empty.json", "splice", "splice-work",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "option, value",
    [
        ("--short-side", "0"),
        ("--short-side", "15"),
        ("--fps", "0"),
        ("--fps", "-5"),
        ("--fps", "0.001"),
        ("--fps", "nan"),
        ("--tolerance", "-1"),
        ("--workers", "0"),
        ("--limit", "0"),
        ("--subset-size", "-3"),
        ("--max-shard-mb", "0"),
    ],
)
def test_bad_options_are_refused_before_any_work(
    tmp_path, sources, demo_ids, capsys, option, value
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:1])
    out = tmp_path / "splice"
    code = main(["build", "--annotations", str(annotations), "--videos", str(sources),
                 "--out", str(out), "--no-progress", option, value])  # fmt: skip
    one_line_error(code, capsys.readouterr().err, option)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coin.json"]


def _encode(path: Path, frames: int, size: tuple[int, int], rate: Fraction) -> Path:
    import av
    import numpy as np

    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = *size, "yuv420p"
        for i in range(frames):
            img = np.full((size[1], size[0], 3), 40 * i % 256, np.uint8)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts, frame.time_base = i, 1 / rate
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


@pytest.mark.parametrize(
    "size, rate, frames, what",
    [
        ((2, 2), Fraction(10), 20, "short side"),  # --short-side 0 before the fix
        ((64, 48), Fraction(1, 1000), 1, "frame rate"),  # --fps 0.001: 1 frame, 1000 s
    ],
)
def test_validate_rejects_degenerate_clips(tmp_path, size, rate, frames, what) -> None:
    from splice_build.output.card import Provenance, write_card
    from splice_build.output.validate import validate
    from splice_build.output.writing.write import write_dataset
    from splice_build.records import Clip, ShuffledVideo, Step, VideoEntry

    seconds = float(frames / rate)
    steps, clips = [], []
    for k in range(2):
        start = 10.0 + k * (seconds + 5)
        steps.append(Step(step_id=k + 1, label=f"step {k}", start=start, end=start + seconds))
        path = _encode(tmp_path / f"c{k}.mp4", frames, size, rate)
        clips.append(Clip(k, path, seconds, frames, start, start, *size))
    entry = VideoEntry("vid", "Task", "Dish", 1, "testing", 2 * seconds + 30, "u", tuple(steps))
    video = ShuffledVideo(entry, tuple(clips[::-1]), tuple(steps[::-1]), (2, 1))
    out = tmp_path / "splice"
    written = write_dataset([video], out)
    write_card(out, written, Provenance("COIN.json", "0" * 64, 0, {}, videos_included=1))
    problems = [str(p) for p in validate(out)]
    assert len([p for p in problems if what in p]) == 2, problems


# --- 11. no local path in what is published ---------------------------------------------


def test_long_video_id_puts_no_local_path_in_the_report(tmp_path, sources, demo_ids) -> None:
    """A 240-character id once failed in the work folder with the folder's absolute path in
    the reason; now it is skipped at ingest (no name the build makes from it would fit),
    while the longest id kept builds in every format."""
    from splice_build.stages.ingest import MAX_VIDEO_ID

    long_id = "x" * (240 - len(demo_ids[0])) + demo_ids[0]
    longest = "y" * (MAX_VIDEO_ID - len(demo_ids[1])) + demo_ids[1]
    database = demo_database()
    entries = {long_id: database[demo_ids[0]], longest: database[demo_ids[1]]}
    annotations = tmp_path / "coin.json"
    annotations.write_text(json.dumps({"database": entries}), "utf-8")
    videos = tmp_path / "videos"
    videos.mkdir()
    shutil.copy(sources / f"{demo_ids[0]}.mp4", videos / f"{long_id}.mp4")
    shutil.copy(sources / f"{demo_ids[1]}.mp4", videos / f"{longest}.mp4")
    result = run_build(config(annotations, videos, tmp_path / "splice", format="both"))
    for path in (result.out / REPORT_JSON, result.out / "README.md"):
        text = path.read_text("utf-8")
        assert str(tmp_path) not in text and str(Path.home()) not in text, path.name
    status = {v.video_id: v for v in result.report.videos}
    assert (status[long_id].status, status[long_id].stage) == ("skipped", "ingest")
    assert "240 characters" in status[long_id].reason
    assert status[longest].status == "included", status[longest].reason
    assert result.problems == []


def test_reasons_name_no_local_folder(tmp_path) -> None:
    """Whatever raised, a reason that reaches the report names folders by role."""
    from splice_build.records import Skip
    from splice_build.running.report import BuildReport

    work = tmp_path / "splice-work"
    report = BuildReport(local_roots={"<work>": work, "<videos>": tmp_path / "videos"})
    report.skip(Skip("a", "cut", f"OSError: [Errno 36] File name too long: '{work}/videos/.t'"))
    report.skip(Skip("b", "probe", f"cannot open {tmp_path}/videos/b.mp4: broken"))
    report.warnings.append(f"curation row 3 names {tmp_path}/other/file.csv")
    report.write(tmp_path)
    text = (tmp_path / REPORT_JSON).read_text("utf-8")
    assert str(tmp_path) not in text
    assert "<work>/videos/.t" in text and "b.mp4: broken" in text


# --- 8. workers die with their driver; 9. one build per folder --------------------------


def _build_cmd(annotations: Path, videos: Path, out: Path, work: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "splice_build.cli", "build", "--annotations", str(annotations),
            "--videos", str(videos), "--out", str(out), "--work", str(work), "--no-progress",
            *extra]  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds workers via /proc")
def test_sigkill_of_the_driver_stops_its_workers_and_the_rerun_is_identical(
    tmp_path, sources, demo_ids, subset_build
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:4])
    straight, _ = subset_build(4)  # the session's build of these videos, read only
    out, work = tmp_path / "c" / "splice", tmp_path / "c" / "work"
    previous = run_build(config(annotations, sources, out, work=work, seed=7)).out
    before = tree_digest(previous)
    shutil.rmtree(work / "videos")  # the killed build must cut again
    cmd = _build_cmd(annotations, sources, out, work, "--workers", "2", "--no-validate")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_first_commit(proc, work)
    workers = descendants(proc.pid)
    assert workers, "the build started no worker process"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in workers):
        time.sleep(0.1)
    assert not [p for p in workers if alive(p)], "workers outlived their driver by 10 s"
    assert tree_digest(out) == before  # the killed build never touched the old output
    folder = WorkDir(work)
    for video in committed(work):  # every committed entry is whole
        assert folder.lookup(video.name).video is not None, video
    resumed = run_build(config(annotations, sources, out, work=work)).out
    assert tree_digest(resumed) == tree_digest(straight)


def test_a_second_build_on_the_same_folders_is_refused(
    tmp_path, sources, demo_ids, subset_build
) -> None:
    annotations = subset_annotations(tmp_path, demo_ids[:3])
    out, work = tmp_path / "splice", tmp_path / "work"
    first = subprocess.Popen(_build_cmd(annotations, sources, out, work, "--workers", "1"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    wait_for_first_commit(first, work)
    os.kill(first.pid, signal.SIGSTOP)  # mid-build, holding its folders, for as long as needed
    try:
        for other_out, other_work, named in (
            (out, tmp_path / "work2", "--out"),
            (tmp_path / "splice2", work, "--work"),
        ):
            second = subprocess.run(
                _build_cmd(annotations, sources, other_out, other_work, "--workers", "1"),
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            one_line_error(
                second.returncode,
                second.stderr,
                named,
                "another splice command",
            )
            assert not other_out.exists() or other_out == out
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    straight, _ = subset_build(3)  # the session's build of these videos, read only
    assert tree_digest(out) == tree_digest(straight)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coin.json", "splice", "work"]


def test_building_doc_names_every_folder_a_previous_build_holds():
    """docs/building.md lists what an `--out` may hold to be taken for a previous build:
    every folder the build writes (`ownership.OUTPUT_FOLDERS`), the question configs too."""
    from splice_build.running.ownership import OUTPUT_FOLDERS
    from tests.support.paths import REPO

    text = " ".join((REPO / "docs/building.md").read_text("utf-8").split())
    said = text.split("but a previous build", 1)[1].split(";", 1)[0]
    missing = [f for f in OUTPUT_FOLDERS if f"`{f}/`" not in said]
    assert not missing, f"docs/building.md's list of an --out's folders lacks {missing}: {said}"
