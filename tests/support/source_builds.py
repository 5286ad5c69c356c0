"""One build per source per test run (`once.build_once`): a fixture written in the source's
own format by the test module, its kept videos rendered as small stand-ins (the demo's
renderer), and `splice build --source NAME` run on them the way a user types it."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_dataset import MAX_CLIPS, MIN_CLIPS
from tests.support.once import build_once


def splice(*argv: str | Path) -> tuple[int, str, str]:
    """``splice argv`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def render_standins(source: str, annotations: Path, videos: Path) -> list[str]:
    """A small stand-in video for every entry the adapter keeps with 2..7 steps."""
    from splice_build.demo import standin
    from splice_build.sources import registry

    videos.mkdir(parents=True, exist_ok=True)
    made = []
    for entry in registry.load(source, annotations).entries:
        if MIN_CLIPS <= entry.num_steps <= MAX_CLIPS:
            standin.render_source(entry, videos / f"{entry.video_id}.mp4", size=(64, 36), fps=5)
            made.append(entry.video_id)
    return made


def build_source(
    tmp_path_factory: pytest.TempPathFactory,
    source: str,
    write: Callable[[Path], Path],
    *extra: str,
) -> dict:
    """``{"out", "annotations", "videos"}`` of the run's one build of ``source`` from the
    fixture ``write(folder)`` writes (returning the path to pass as --annotations)."""

    def make(root: Path) -> dict:
        annotations = write(root / "release")
        videos = root / "videos"
        render_standins(source, annotations, videos)
        out = root / "splice"
        code, stdout, stderr = splice(
            "build", "--source", source, "--annotations", annotations, "--videos", videos,
            "--out", out, "--workers", "1", "--no-progress", *extra,
        )  # fmt: skip
        assert code == 0, stdout + stderr
        return {"out": str(out), "annotations": str(annotations), "videos": str(videos)}

    return build_once(tmp_path_factory, f"source-{source}", make)


def skips_by_reason(out: Path) -> dict[str, int]:
    """The build report's skipped videos by reason code (`rules.reason_code`), the select
    stage's step count as ``segment-count``."""
    from splice_build.sources.rules import reason_code

    report = json.loads((Path(out) / "build_report.json").read_text("utf-8"))
    counts: Counter[str] = Counter()
    for video in report["videos"]:
        if video["status"] == "skipped":
            code = "segment-count" if video["stage"] == "select" else reason_code(video["reason"])
            counts[code] += 1
    return dict(sorted(counts.items()))


def load_three(out: Path) -> dict[str, list[dict]]:
    """The build loaded as a user does (``load_dataset`` through the schema's loader, clips
    undecoded: torchcodec is not a test dependency), each of the three configs."""
    import splice_dataset as schema

    return {
        config: list(schema.load(config, source=str(out), decode=False))
        for config in ("video", "video_text", "text")
    }
