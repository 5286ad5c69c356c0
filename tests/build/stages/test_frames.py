"""Issue 20's real-world sources through the command line: a sparse variable frame rate
AVI, videos that start after their audio (mp4 empty edit, MPEG-TS), a full-range source
and an AVI with B-frames all build, validate and exit 0 (`splice build`, `splice validate`).
What their clips hold is checked frame by frame in tests/build/stages/test_cut.py."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from splice_build.cli import main
from tests.support.build_helpers import ids_with_steps, retimed_annotations
from tests.support.videos import source_frames, write_levels_video, write_sparse_avi, write_video


def _sources(videos: Path, ids: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Writes one source per id; returns the segments each is annotated with."""
    sparse, late_mp4, late_ts, full, bframes = ids
    src = write_sparse_avi(videos / f"{sparse}.avi")
    last = float(source_frames(src)[-1][0])
    late = dict(n_frames=200, fps=25, time_base=Fraction(1, 25), audio=True, size=(96, 64))
    write_video(videos / f"{late_mp4}.mp4", pts=[50 + i for i in range(200)], **late)
    write_video(
        videos / f"{late_ts}.ts",
        fmt="mpegts",
        codec="mpeg2video",
        pts=[13 + i for i in range(200)],
        **late,
    )
    write_levels_video(videos / f"{full}.mkv", pix_fmt="yuvj420p", n_frames=60)
    write_video(videos / f"{bframes}.avi", fmt="avi", codec="mpeg4", b_frames=2, n_frames=60)
    return {
        sparse: [(2.0, 9.5), (22.0, 28.5), (35.0, round(last + 0.3, 2))],
        late_mp4: [(1.0, 2.5), (3.0, 5.0), (5.0, 8.0)],
        late_ts: [(1.0, 3.0), (3.0, 5.0), (6.0, 8.2)],
        full: [(0.5, 2.0), (3.0, 4.5), (4.5, 5.9)],
        bframes: [(0.0, 1.0), (1.0, 2.0), (3.0, 5.9)],
    }


def test_real_world_sources_build_and_validate(tmp_path):
    ids = ids_with_steps(5, 3)
    videos = tmp_path / "videos"
    videos.mkdir()
    annotations = retimed_annotations(tmp_path, _sources(videos, ids), duration=41.0)
    out = tmp_path / "out"
    argv = ["--annotations", annotations, "--videos", videos, "--out", out, "--workers", "1"]
    assert main(["build", *map(str, argv), "--no-progress"]) == 0
    report = json.loads((out / "build_report.json").read_text("utf-8"))
    included = {v["video_id"] for v in report["videos"] if v["status"] == "included"}
    assert included == set(ids), report["videos"]
    assert main(["validate", str(out)]) == 0
