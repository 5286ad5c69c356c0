"""The machine's own conditions, through ``splice build`` as a user types it (issue 21,
walls 1, 5 and 7): the README's build right after the demo; a full disk, a read-only
parent, a file name that is not UTF-8, a deeply nested annotation file (one line naming
the folder or file, exit 2, nothing lost); a finished output that follows the umask; no
empty work folder left by a build of no video.

Full-disk and read-only conditions are real: a small tmpfs, mounted when running as root,
and unmounted again; the tests say why they are skipped otherwise."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from splice_build.running.report import load_report
from splice_dataset import DEFAULT_BUILD_DIR
from tests.support.build_helpers import (
    one_line_error,
    readme_build,
    subset_annotations,
    tree_digest,
)


def _project(tmp_path: Path, sources: Path, ids: list[str]) -> Path:
    project = tmp_path / "project"
    (project / "videos").mkdir(parents=True)
    for vid in ids:
        shutil.copy(sources / f"{vid}.mp4", project / "videos")
    subset_annotations(project, ids, "COIN.json")
    return project


@contextlib.contextmanager
def _tmpfs(at: Path, options: str) -> Iterator[Path]:
    """A real tmpfs mounted at ``at`` (skipped, with the reason, where that is not possible)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; this test runs as a user")
    at.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(at)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs at {at}: {mounted.stderr.strip()}")
    try:
        yield at
    finally:
        if subprocess.run(["umount", str(at)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(at)], check=True)  # a file still open: detach


# --- wall 1: the README's build right after the demo ------------------------------------


def test_the_readme_build_runs_right_after_the_demo(capsys, tmp_path, demo_build, demo_ids):
    """`make demo` leaves ./splice-data and ./splice-data-work (its cuts/ and
    stand-in-sources/); the README's `splice build ... --out splice-data/` uses that same
    work folder by default."""
    project = _project(tmp_path, demo_build.parent / "work" / "stand-in-sources", demo_ids[:2])
    out, work = project / DEFAULT_BUILD_DIR, project / f"{DEFAULT_BUILD_DIR}-work"
    shutil.copytree(demo_build, out)
    shutil.copytree(demo_build.parent / "work", work)
    demo_files = tree_digest(work)
    code, err = readme_build(capsys, project, "--out", f"{DEFAULT_BUILD_DIR}/")
    assert code == 0, err
    assert load_report(out)["counts"]["included"] == 2
    after = tree_digest(work)
    assert {k: v for k, v in after.items() if k in demo_files} == demo_files  # the demo's kept


def test_a_work_folder_the_demo_did_not_write_is_still_refused(capsys, tmp_path, sources):
    project = _project(tmp_path, sources, [])
    (project / "splice-work" / "cuts").mkdir(parents=True)
    (project / "splice-work" / "cuts" / "notes.txt").write_text("mine", "utf-8")
    one_line_error(*readme_build(capsys, project), "--work", "not a SPLICE work folder", "cuts")
    assert (project / "splice-work" / "cuts" / "notes.txt").read_text("utf-8") == "mine"


# --- wall 5: the machine's own failures ---------------------------------------------------


def test_a_full_disk_under_out_is_one_line_and_keeps_the_previous_build(
    capsys, tmp_path, sources, demo_ids
) -> None:
    project = _project(tmp_path, sources, demo_ids[:3])
    with _tmpfs(tmp_path / "disk", "size=12m") as disk:
        out = disk / "splice"
        code, err = readme_build(
            capsys, project, "--out", str(out), "--work", "work", "--limit", "1"
        )
        assert code == 0, err
        before = tree_digest(out)
        filler = disk / "filler.bin"
        with open(filler, "wb") as f:  # the disk full but for a little over the old build
            free = shutil.disk_usage(disk).free
            f.write(b"\0" * max(free - 200_000, 0))
        built = readme_build(capsys, project, "--out", str(out), "--work", "work")
        line = one_line_error(*built, "--out", str(out), "space")
        assert "Traceback" not in line
        assert tree_digest(out) == before  # the previous build, as it was
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin", "splice"]
        filler.unlink()
        code, err = readme_build(capsys, project, "--out", str(out), "--work", "work")
        assert code == 0, err  # the cuts were kept: space freed, the same command works


def test_a_read_only_parent_of_out_is_one_line(capsys, tmp_path, sources, demo_ids) -> None:
    project = _project(tmp_path, sources, demo_ids[:1])
    with _tmpfs(tmp_path / "ro", "size=1m,ro") as ro:
        built = readme_build(capsys, project, "--out", str(ro / "splice"), "--work", "work")
        one_line_error(*built, "--out", str(ro), "read-only")
    assert not (project / "work").exists()  # refused before any work


def test_a_file_name_that_is_not_utf8_skips_that_file_with_a_reason(
    capsys, tmp_path, sources, demo_ids
) -> None:
    good, other = demo_ids[:2]
    project = _project(tmp_path, sources, [good])
    subset_annotations(project, [good, other], "COIN.json")
    bad = os.fsdecode(b"\xff\xfe [" + other.encode() + b"].mp4")
    shutil.copy(sources / f"{other}.mp4", project / "videos" / bad)
    code, err = readme_build(capsys, project)
    assert code == 0, err
    report = load_report(project / "splice")
    status = {v["video_id"]: (v["status"], v["reason"]) for v in report["videos"]}
    assert status[good][0] == "included"
    assert status[other][0] == "skipped" and "no source video" in status[other][1]
    named = [w for w in report["warnings"] if "not UTF-8" in w]
    assert len(named) == 1 and "\\xff\\xfe [" + other in named[0], report["warnings"]
    assert (project / "videos" / bad).exists()  # not the build's to rename or delete


def test_a_deeply_nested_annotation_file_is_one_line(capsys, tmp_path) -> None:
    project = tmp_path / "project"
    (project / "videos").mkdir(parents=True)
    depth = 200_000
    (project / "COIN.json").write_text('{"database": ' + "[" * depth + "]" * depth + "}")
    one_line_error(*readme_build(capsys, project), "COIN.json", "nested")
    assert sorted(p.name for p in project.iterdir()) == ["COIN.json", "videos"]


# --- wall 7: what a finished or an empty build leaves ------------------------------------


def test_a_finished_out_follows_the_umask(capsys, tmp_path, sources, demo_ids) -> None:
    project = _project(tmp_path, sources, demo_ids[:1])
    old = os.umask(0o022)
    try:
        code, err = readme_build(capsys, project)
    finally:
        os.umask(old)
    assert code == 0, err
    out = project / "splice"
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        want = 0o755 if path.is_dir() else 0o644
        assert mode == want, (path, oct(mode))


def test_a_build_of_no_video_leaves_no_work_folder(capsys, tmp_path, sources, demo_ids):
    project = _project(tmp_path, sources, [])
    subset_annotations(project, demo_ids[:2], "COIN.json")  # and no source for either
    one_line_error(*readme_build(capsys, project), "no video")
    assert sorted(p.name for p in project.iterdir()) == ["COIN.json", "videos"]
