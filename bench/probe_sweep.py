"""A sweep of 3 models x 4 probes on a real build, with and without the frame cache.

Each of the 12 ``splice run``s asks the same fake OpenAI-compatible endpoint on 127.0.0.1
(so the time measured is the runner's, mostly decoding and encoding frames) about every
video of the demo build. Without the cache every run decodes every clip again; with it a
clip is decoded once for the whole sweep (the cache holds frames before the probe). The
script prints the decodes per clip of each sweep (counted, target 1.0 with the cache) and
the wall-time ratio of the cached sweep to the uncached one, measured in the same run.
It says what it is doing as it goes (the build's bars, then one line per run), so no
phase is silent for more than one run.

    python bench/probe_sweep.py [--frames num_frames=8,long_side=224] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the fake endpoint lives with the tests
print("probe sweep: importing, then building the demo ...", flush=True)

import splice_dataset as schema  # noqa: E402
from splice_build.cli import main as splice_main  # noqa: E402
from splice_build.demo.run import build_demo  # noqa: E402
from splice_eval.run import frame_cache, probes  # noqa: E402
from tests.support.fake_openai_server import FakeOpenAIServer, Reply, count_clips  # noqa: E402

MODELS = ("model-a", "model-b", "model-c")
SWEEP_PROBES = probes.PROBES[1:]  # the four probes


class Counted:
    """``sample_frames`` counted wherever the runner calls it (the decoder still runs)."""

    def __init__(self, real) -> None:
        self.real, self.count, self.lock = real, 0, threading.Lock()

    def __call__(self, clip, **kwargs):
        with self.lock:
            self.count += 1
        return self.real(clip, **kwargs)


def identity(request) -> Reply:
    n = count_clips(request)
    return Reply(content="<order>" + ", ".join(f"Video {k}" for k in range(1, n + 1)) + "</order>")


def sweep(build: Path, out: Path, frames: str, cache: Path | None, url: str, name: str) -> float:
    """The 12 runs, one line each as it ends (flushed: the runs themselves print nothing)."""
    start = time.perf_counter()
    runs = [(model, probe) for model in MODELS for probe in SWEEP_PROBES]
    for done, (model, probe) in enumerate(runs, 1):
        argv = ["run", "--endpoint", url, "--model", model, "--config", "video"]
        argv += ["--data", str(build), "--frames", frames, "--probe", probe]
        argv += ["--out", str(out / f"{model}-{probe}.jsonl")]
        argv += ["--no-frame-cache"] if cache is None else ["--frame-cache", str(cache)]
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            code = splice_main(argv)
        if code != 0:
            raise SystemExit(f"splice run failed ({code}): {' '.join(argv)}")
        elapsed = time.perf_counter() - start
        print(
            f"{name}: run {done}/{len(runs)} ({model}, {probe}) done, {elapsed:.1f} s in",
            flush=True,
        )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", default="num_frames=8,long_side=224")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    counter = Counted(frame_cache.sample_frames)
    frame_cache.sample_frames = counter  # the cache's decoder
    probes.sample_frames = counter  # the uncached path's decoder
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAIServer(identity, max_requests=10**6) as server,
    ):
        root = Path(tmp)
        build = build_demo(
            out_dir=root / "splice", work_dir=root / "work", workers=args.workers, progress=True
        )
        rows = list(schema.load("video", source=str(build), decode=False))
        clips = sum(r[schema.NUM_CLIPS] for r in rows)
        results = {}
        for name, cache in (("without cache", None), ("with cache", root / "frames")):
            out = root / name.replace(" ", "-")
            out.mkdir()
            print(f"{name}: {len(MODELS) * len(SWEEP_PROBES)} runs ...", flush=True)
            before = counter.count
            wall = sweep(build, out, args.frames, cache, server.url, name)
            results[name] = (wall, (counter.count - before) / clips)
    runs = len(MODELS) * len(SWEEP_PROBES)
    print(
        f"{len(rows)} videos, {clips} clips, {runs} runs ({len(MODELS)} models x "
        f"{len(SWEEP_PROBES)} probes), frames {args.frames}"
    )
    for name, (wall, per_clip) in results.items():
        print(f"{name:<14} wall {wall:7.2f} s   decodes per clip {per_clip:5.2f}")
    ratio = results["with cache"][0] / results["without cache"][0]
    print(f"wall-time ratio with/without cache: {ratio:.2f}")


if __name__ == "__main__":
    main()
