"""Build throughput by executor: local with 1 and 2 workers, and Ray with 2 CPUs.

All three build the same inputs (the demo's real COIN annotations with stand-in sources
rendered at 854x480, 25 fps, so a video costs about what a real 480p COIN video does)
from an empty work folder; the baseline is the local executor with one worker, measured in
the same run. Each worker gets cores // workers threads (the pipeline's rule), so on a
2-core machine one worker already uses both cores and the speed-up mostly shows process
overhead. Ray is skipped with a message when the extra is not installed.

    python bench/scale.py [--videos N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from splice_build.demo import standin
from splice_build.demo.run import demo_annotations_path
from splice_build.running.pipeline import BuildConfig, run_build
from splice_build.stages.ingest import load_annotations

SIZE, FPS = (854, 480), 25


def _timed_build(annotations: Path, sources: Path, root: Path, **kw) -> tuple[float, int]:
    start = time.perf_counter()
    result = run_build(
        BuildConfig(
            annotations=annotations,
            videos=sources,
            out=root / "splice",
            work=root / "work",
            progress=False,
            validate=False,
            **kw,
        )
    )
    return time.perf_counter() - start, len(result.report.included)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--videos", type=int, default=8, help="demo videos to build")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        full = json.loads(demo_annotations_path().read_text("utf-8"))["database"]
        ids = sorted(full)[: args.videos]
        annotations = tmp / "coin.json"
        annotations.write_text(json.dumps({"database": {i: full[i] for i in ids}}))
        sources = tmp / "sources"
        sources.mkdir()
        for entry in load_annotations(annotations).entries:
            standin.render_source(entry, sources / f"{entry.video_id}.mp4", size=SIZE, fps=FPS)
        runs = {}
        for name, kw in (
            ("local, 1 worker", {"workers": 1}),
            ("local, 2 workers", {"workers": 2}),
            ("ray, 2 CPUs", {"executor": "ray", "workers": 2}),
        ):
            if kw.get("executor") == "ray":
                try:
                    import ray
                except ImportError:
                    print(f"{name:18s} skipped: pip install '.[ray]'")
                    continue
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            seconds, videos = _timed_build(annotations, sources, tmp / name.replace(" ", ""), **kw)
            runs[name] = videos / seconds
            print(f"{name:18s} {videos} videos in {seconds:6.2f} s = {runs[name]:.2f} videos/s")
        base = runs["local, 1 worker"]
        for name, rate in runs.items():
            print(f"{name:18s} speed-up vs local 1 worker: {rate / base:.2f}x")


if __name__ == "__main__":
    main()
