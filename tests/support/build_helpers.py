"""Helpers for tests that run the pipeline on subsets of the demo's real annotations."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from splice_build.cli import main
from splice_build.demo.run import demo_annotations_path
from splice_build.running.pipeline import BuildConfig
from splice_build.running.workdir import CUT_RECORD


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def demo_database() -> dict[str, Any]:
    """The bundled demo annotations' ``database`` (video id -> raw COIN entry)."""
    return json.loads(demo_annotations_path().read_text("utf-8"))["database"]


def subset_annotations(tmp: Path, ids: list[str], name: str = "coin.json") -> Path:
    full = demo_database()
    path = tmp / name
    path.write_text(json.dumps({"database": {i: full[i] for i in ids}}), "utf-8")
    return path


def run_splice(
    *argv: str | Path, timeout: float = 600, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """``splice argv`` as a separate process, the way a user types it (in ``cwd``, else here)."""
    return subprocess.run(
        [sys.executable, "-m", "splice_build.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def clip_first_frames(out: Path) -> list[int]:
    """The source frame index (tests/support/videos.py's bars) each clip of a one-video build starts
    with, sorted (clips are stored shuffled)."""
    import io

    import av
    import pyarrow.parquet as pq

    import splice_dataset as schema
    from tests.support.videos import read_index

    (row,) = pq.read_table(out / schema.shard_dir(schema.FULL_CONFIG)).to_pylist()
    found = []
    for clip in row[schema.CLIPS]:
        with av.open(io.BytesIO(clip["bytes"])) as container:
            found.append(read_index(next(container.decode(video=0))))
    return sorted(found)


def config(annotations: Path, sources: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(
        annotations=annotations, videos=sources, out=out, progress=False, workers=1, **kw
    )


def copy_build(build: tuple[Path, Path], out: Path, work: Path | None = None) -> Path:
    """A test's own copy of a shared build (conftest's ``subset_build``): its output at
    ``out`` and its work folder at ``work`` (default ``<out>-work``, a build's own default),
    file times kept, so a build on the copy reuses the work folder as it would the original.
    Returns ``out``."""
    shared_out, shared_work = build
    shutil.copytree(shared_out, out, symlinks=True)
    shutil.copytree(shared_work, work or out.with_name(f"{out.name}-work"), symlinks=True)
    return out


def committed(work: Path) -> list[Path]:
    """The video folders a build has committed to its work folder."""
    return [p for p in (work / "videos").glob("[!.]*") if (p / CUT_RECORD).exists()]


def wait_for_first_commit(proc: subprocess.Popen, work: Path, timeout: float = 300) -> None:
    """Wait until a build running in ``proc`` has committed one video, so that a test can
    kill it half-way; fails if the build ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if (work / "videos").is_dir() and committed(work):
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the build finished before it could be killed"


def ids_with_steps(count: int, steps: int) -> list[str]:
    """The first ``count`` demo video ids (sorted) with at least ``steps`` annotated steps."""
    full = demo_database()
    return [v for v in sorted(full) if len(full[v]["annotation"]) >= steps][:count]


def retimed_annotations(
    tmp: Path,
    segments: dict[str, list[tuple[float, float]]],
    duration: float,
    name: str = "coin.json",
) -> Path:
    """Demo entries (real COIN tasks, step ids and labels) given new segments and duration,
    for builds from short sources that a test makes itself."""
    full = demo_database()
    database = {}
    for vid, segs in segments.items():
        raw = copy.deepcopy(full[vid])
        raw["annotation"] = [
            {**step, "segment": [s, e]}
            for step, (s, e) in zip(raw["annotation"][: len(segs)], segs, strict=True)
        ]
        raw["duration"] = duration
        raw["start"], raw["end"] = segs[0][0], segs[-1][1]
        database[vid] = raw
    path = tmp / name
    path.write_text(json.dumps({"database": database}), "utf-8")
    return path


def descendants(pid: int) -> set[int]:
    """Processes started (directly or not) by pid, found through /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether a process still runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def process_title(pid: int) -> str:
    """The command line of a process ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def readme_build(capsys, project: Path, *extra: str) -> tuple[int, str]:
    """``splice build --annotations COIN.json --videos videos/ --out splice/`` (the README's
    command, its output named ``splice/`` here: these tests are about what a build may
    touch, not about the default folder) run in ``project`` in this process, with ``extra``
    added or overriding; the
    exit code and what it printed on stderr."""
    cwd = Path.cwd()
    os.chdir(project)
    try:
        code = main(["build", "--annotations", "COIN.json", "--videos", "videos/", "--out",
                     "splice/", "--workers", "1", "--no-progress", *extra])  # fmt: skip
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().err


def one_line_error(code: int, err: str, *words: str) -> str:
    """The user-error promise: exit 2 and one stderr line holding every one of ``words``."""
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], (word, err)
    return lines[0]


def cli_build(annotations: Path, videos: Path, out: Path) -> subprocess.CompletedProcess:
    """``splice build`` as a user types it (one worker, no bar), which must exit 0."""
    built = run_splice(
        "build", "--annotations", annotations, "--videos", videos, "--out", out,
        "--workers", "1", "--no-progress",
    )  # fmt: skip
    assert built.returncode == 0, (built.stdout, built.stderr)
    return built
