"""Build time against the size of the annotation file, with a few sources (issue 21, wall 9).

A build over a large annotation file with only a few of its videos on disk skips most of
them at the probe ("no source video"); what each skip costs the driver must not grow with
the number of videos already reported (the progress bar once recounted the whole skip list
after every video: 10,000 / 20,000 / 40,000 entries took 7 / 16 / 42 s). Here the bundled
real COIN entries are copied under new ids into a 10,000-entry file (the baseline, built in
the same run) and a 40,000-entry one; both hold the same few stand-in sources. The 40,000-
entry build should take about the baseline's time plus the extra parse and selection of
30,000 entries, so the script prints both build times, the parse + selection time of each
file, and the ratio of the large build to (baseline + the extra parse).

    python bench/annotation_scale.py [--sources 3] [--small 10000] [--large 40000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from splice_build.demo import standin
from splice_build.running.pipeline import BuildConfig, run_build
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, load_annotations
from splice_build.stages.select import select_annotations


def synthesise(entries: int, database: dict, path: Path) -> Path:
    """``entries`` real entries, the bundled ones first and then copies under new ids."""
    real = sorted(database)
    out = {}
    for n in range(entries):
        copy, video_id = divmod(n, len(real))
        out[f"{real[video_id]}-copy{copy}" if copy else real[video_id]] = database[real[video_id]]
    path.write_text(json.dumps({"database": out}), "utf-8")
    return path


def timed_parse(annotations: Path) -> float:
    start = time.perf_counter()
    select_annotations(annotations)
    return time.perf_counter() - start


def timed_build(annotations: Path, videos: Path, root: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    # progress on (the default): the bar is what once cost O(videos) per video
    config = BuildConfig(annotations, videos, root / "splice", root / "work", workers=1)
    result = run_build(replace(config, validate=False))
    counts = result.report.counts
    return time.perf_counter() - start, {"included": counts.included, "skipped": counts.skipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sources", type=int, default=3, help="stand-in sources on disk")
    parser.add_argument("--small", type=int, default=10_000, help="entries of the baseline")
    parser.add_argument("--large", type=int, default=40_000, help="entries of the large file")
    args = parser.parse_args()
    database = json.loads(BUNDLED_ANNOTATIONS.read_text("utf-8"))["database"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = synthesise(args.small, database, tmp / "small.json")
        large = synthesise(args.large, database, tmp / "large.json")
        videos = tmp / "videos"
        usable = [e for e in load_annotations(small).entries if 2 <= len(e.steps) <= 7]
        for entry in usable[: args.sources]:
            standin.render_source(entry, videos / f"{entry.video_id}.mp4")
        parse_small, parse_large = timed_parse(small), timed_parse(large)
        build_small, counts_small = timed_build(small, videos, tmp / "small")
        build_large, counts_large = timed_build(large, videos, tmp / "large")
    expected = build_small + (parse_large - parse_small)
    print(f"sources on disk: {args.sources}")
    print(f"parse + select  {args.small:6d} entries: {parse_small:6.2f} s")
    print(f"parse + select  {args.large:6d} entries: {parse_large:6.2f} s")
    print(f"build (baseline){args.small:6d} entries: {build_small:6.2f} s  {counts_small}")
    print(f"build           {args.large:6d} entries: {build_large:6.2f} s  {counts_large}")
    print(f"ratio large / small build: {build_large / build_small:.2f}x")
    print(
        f"ratio large / (baseline + extra parse {parse_large - parse_small:.2f} s): "
        f"{build_large / expected:.2f}x (target: about 1)"
    )


if __name__ == "__main__":
    main()
