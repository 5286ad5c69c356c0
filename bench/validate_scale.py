"""Validation at scale (issue 22): per-video cost of a fresh build, a cached rerun and a
standalone ``splice validate`` at 1 and 2 workers (and ``--quick``: what the driver does
alone), each phase's share, the longest silence.

The recipe of the issue's figures: the first N entries of the bundled COIN annotations
(real step times, 2..7 steps), each with a tiny stand-in source (64x36, 2 fps) rendered to
cover its whole duration; builds with ``--workers 2``. Phases are read off the build's own
stderr (its bars and ``splice: ...`` status lines, timestamped as they are written); the
longest silence is the longest gap between two writes to stderr. Every figure is measured
in this run; the targets are printed beside them. The driver's resident memory is printed
after each build (its growth per video, read at two sizes, says whether it is bounded).

``splice_build`` is imported inside ``main``: a spawned worker runs this file's top level
again (``multiprocessing``'s spawn re-imports the parent's main module), so top-level
imports of ``datasets``/pyarrow would put about 100 MB more into every build worker than
``splice build`` gives them.

    python bench/validate_scale.py [--videos 400] [--large]   # --large: 3,200 videos
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE, FPS = (64, 36), 2
PAPER_VIDEOS = 3381  # Table 1
# The build's status lines that open each phase after the cut (pipeline.finish_build).
PHASES = (
    ("probe+cut", ""),
    ("shards", "splice: writing the shards"),
    ("card", "splice: writing the card"),
    ("validation", "splice: validating"),
    ("swap", "splice: swapping"),
)


class Stamped(io.TextIOBase):
    """stderr, remembering when each write came and what it said."""

    def __init__(self) -> None:
        self.writes: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.writes.append((time.perf_counter(), text))
        return len(text)


def timed(fn) -> tuple[float, Stamped, float]:
    """(seconds, the stderr it wrote, its start)."""
    err = Stamped()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        fn()
    return time.perf_counter() - start, err, start


def command(argv: list[str]) -> tuple[float, Stamped, float]:
    """``splice ...`` as its user runs it, in its own process (its workers then start from
    the ``splice`` script, not from this bench), with its stderr timestamped."""
    err = Stamped()
    start = time.perf_counter()
    splice = Path(sys.executable).with_name("splice")
    with subprocess.Popen(
        [str(splice), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as proc:
        while chunk := proc.stderr.read1(1 << 16):
            err.write(chunk.decode("utf-8", "replace"))
    return time.perf_counter() - start, err, start


def silence(err: Stamped, start: float, seconds: float) -> float:
    times = [start, *(t for t, _ in err.writes), start + seconds]
    return max(b - a for a, b in zip(times, times[1:], strict=False))


def phases(err: Stamped, start: float, seconds: float) -> dict[str, float]:
    """Seconds of each phase, from the first status line that opens it (the last pass's)."""
    opened = [start]
    for _, marker in PHASES[1:]:
        hits = [t for t, text in err.writes if text.startswith(marker)]
        opened.append(hits[-1] if hits else opened[-1])
    opened.append(start + seconds)
    return {name: opened[i + 1] - opened[i] for i, (name, _) in enumerate(PHASES)}


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def inputs(tmp: Path, n: int) -> tuple[Path, Path]:
    from splice_build.demo import standin
    from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, load_annotations

    raw = json.loads(BUNDLED_ANNOTATIONS.read_text("utf-8"))["database"]
    ids = sorted(v for v, e in raw.items() if 2 <= len(e.get("annotation", [])) <= 7)[:n]
    annotations = tmp / "coin.json"
    annotations.write_text(json.dumps({"database": {v: raw[v] for v in ids}}), "utf-8")
    sources = tmp / "sources"
    for entry in load_annotations(annotations).entries:
        standin.render_source(entry, sources / f"{entry.video_id}.mp4", size=SIZE, fps=FPS)
    return annotations, sources


def report(name: str, n: int, seconds: float, err: Stamped, start: float, parts: bool) -> None:
    print(f"{name:<22} {1000 * seconds / n:8.2f} ms/video   longest silence "
          f"{silence(err, start, seconds):6.2f} s")  # fmt: skip
    if parts:
        shares = phases(err, start, seconds)
        print("    " + ", ".join(f"{k} {100 * v / seconds:.0f}%" for k, v in shares.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--videos", type=int, default=400)
    parser.add_argument("--large", action="store_true", help="3,200 videos")
    args = parser.parse_args()
    n = 3200 if args.large else args.videos
    from splice_build.running.pipeline import BuildConfig, run_build

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        annotations, sources = inputs(tmp, n)
        print(f"{n} videos, stand-ins rendered in {time.perf_counter() - t0:.0f} s")
        config = BuildConfig(annotations=annotations, videos=sources, out=tmp / "splice", workers=2)
        before = rss_mb()
        fresh = timed(lambda: run_build(config))
        after_fresh = rss_mb()
        rerun = timed(lambda: run_build(config))
        after_rerun = rss_mb()
        out = str(config.out)
        one = command(["validate", out, "--workers", "1"])
        two = command(["validate", out, "--workers", "2"])
        quick = command(["validate", out, "--quick"])
        report("fresh build", n, *fresh, parts=True)
        report("cached rerun", n, *rerun, parts=True)
        report("validate --workers 1", n, *one, parts=False)
        report("validate --workers 2", n, *two, parts=False)
        report("validate --quick", n, *quick, parts=False)  # the driver's part: no decode
        print(f"driver RSS: {before:.0f} MB before, {after_fresh:.0f} MB after the fresh build "
              f"({1024 * (after_fresh - before) / n:.1f} KB/video), {after_rerun:.0f} MB after "
              f"the rerun")  # fmt: skip
        share = phases(fresh[1], fresh[2], fresh[0])["validation"] / fresh[0]
        print(f"targets: final validation {100 * share:.1f}% of a fresh build (<= 10%); "
              f"rerun {1000 * rerun[0] / n:.2f} ms/video (<= 5 at 3,200); "
              f"validate 2 vs 1 worker {one[0] / two[0]:.2f}x (>= 1.7)")  # fmt: skip
        per_video = two[0] / n
        print(f"standalone validate of the paper's {PAPER_VIDEOS} videos of these stand-ins: "
              f"{PAPER_VIDEOS * per_video:.0f} s on 2 cores, "
              f"{PAPER_VIDEOS * per_video * 2 / 16:.0f} s on 16 (linear in cores)")  # fmt: skip


if __name__ == "__main__":
    main()
