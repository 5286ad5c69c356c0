"""The build report's running counts (issue 21, wall 9): the cut loop reads them after every
video, so they are kept as videos are added, never recounted from the list; they must
still be exactly what a recount of the report's videos gives, dropped videos included.
The speed side of it is `bench/annotation_scale.py`'s, never a test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

from splice_build.demo import standin
from splice_build.records import Skip
from splice_build.running.report import REPORT_JSON, REPORT_TXT, BuildReport
from splice_build.stages.ingest import load_annotations
from tests.support.build_helpers import demo_database


def _recount(report: BuildReport) -> dict:
    skipped = [v for v in report.videos if v.status == "skipped"]
    included = [v for v in report.videos if v.status == "included"]
    return {
        "videos": len(report.videos),
        "included": len(included),
        "skipped": len(skipped),
        "clips": sum(v.num_clips for v in included),
        "by_stage": dict(Counter(v.stage for v in skipped)),
    }


def test_counts_follow_include_skip_and_drop():
    report = BuildReport()
    report.skip(Skip("a", "select", "fewer than 2 steps"))
    report.include("b", 3)
    report.skip(Skip("c", "probe", "no source video"))
    report.include("d", 4)
    report.skip(Skip("e", "probe", "no source video"))
    counts = report.counts
    assert (counts.videos, counts.included, counts.skipped, counts.clips) == (5, 2, 3, 7)
    assert counts.by_stage == {"select": 1, "probe": 2}
    report.drop(Skip("d", "validate", "clips[0] too short"))
    counts = report.counts
    assert (counts.videos, counts.included, counts.skipped, counts.clips) == (5, 1, 4, 3)
    assert counts.by_stage == {"select": 1, "probe": 2, "validate": 1}
    assert report.skips_by_stage() == counts.by_stage
    assert _recount(report) == {
        "videos": counts.videos,
        "included": counts.included,
        "skipped": counts.skipped,
        "clips": counts.clips,
        "by_stage": counts.by_stage,
    }


def test_large_annotation_file_report_counts_through_the_cli(tmp_path):
    """A few hundred entries (the bundled ones under new ids) and two stand-in sources,
    built by `splice build` as a user types it: the report and its summary count every
    video once, with the right stage."""
    database = demo_database()
    real = sorted(database)
    entries = {}
    for copy in range(12):
        for video_id in real:
            entries[f"{video_id}-{copy:03d}" if copy else video_id] = database[video_id]
    annotations = tmp_path / "coin.json"
    annotations.write_text(json.dumps({"database": entries}), "utf-8")
    videos = tmp_path / "videos"
    kept = [e for e in load_annotations(annotations).entries if e.video_id in real[:2]]
    for entry in kept:
        standin.render_source(entry, videos / f"{entry.video_id}.mp4", size=(64, 36), fps=4)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "splice_build.cli", "build", "--annotations", str(annotations),
         "--videos", str(videos), "--out", str(tmp_path / "splice"), "--workers", "1",
         "--no-progress", "--no-validate"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "splice" / REPORT_JSON).read_text("utf-8"))
    statuses = Counter(v["status"] for v in report["videos"])
    stages = Counter(v["stage"] for v in report["videos"] if v["status"] == "skipped")
    assert report["counts"]["videos"] == len(entries) == len(report["videos"])
    assert report["counts"]["included"] == statuses["included"] == len(kept)
    assert report["counts"]["skipped"] == statuses["skipped"] == len(entries) - len(kept)
    assert stages["probe"] == len(entries) - len(kept)
    text = (tmp_path / "splice" / REPORT_TXT).read_text("utf-8")
    assert f"skipped: {len(entries) - len(kept)}" in text
    assert f"  probe: {len(entries) - len(kept)}" in text
