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

import splice_dataset as sd

TARGET_RATIO = 0.8


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
        frames = []
        for frame in container.decode(stream):
            frames.append((frame.time, frame.to_ndarray(width=w, height=h, format="rgb24")))
    frames.sort(key=lambda f: f[0])
    t0 = frames[0][0]
    step = frames[-1][0] - frames[-2][0] if len(frames) > 1 else 1 / fps
    duration = frames[-1][0] + step - t0
    picked = []
    for k in range(max(1, math.ceil(Fraction(duration).limit_denominator() * Fraction(fps)))):
        on_screen = [f for f in frames if f[0] - t0 <= k / fps + 1e-9]
        picked.append(on_screen[-1][1])
    return len(picked)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=None, help="a built SPLICE folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clips", type=int, default=24, help="clips for the frames bench")
    args = parser.parse_args(argv)

    tmp = None
    folder = args.folder
    if folder is None:
        from splice_build.demo import build_demo

        tmp = tempfile.TemporaryDirectory(prefix="splice-bench-")
        print("building the demo into", tmp.name, file=sys.stderr)
        folder = build_demo(out_dir=Path(tmp.name) / "splice", work_dir=Path(tmp.name) / "work")

    start = time.perf_counter()
    ds = sd.load("video_text", source=folder, streaming=True, decode=False)
    setup_t = time.perf_counter() - start
    stream_t = arrow_t = float("inf")
    rows = 0
    for _ in range(args.repeat):
        t, rows = best(lambda: stream_rows(ds), 1)
        stream_t = min(stream_t, t)
        t, arrow_rows = best(lambda: pyarrow_rows(folder), 1)
        arrow_t = min(arrow_t, t)
        assert rows == arrow_rows, (rows, arrow_rows)
    ratio = (rows / stream_t) / (rows / arrow_t)
    size = sum(p.stat().st_size for p in sd.shard_files(folder, "video_text")[sd.SPLIT])
    print(f"rows: {rows} (video_text, clips embedded; {size / 1e6:.1f} MB of shards)")
    print(f"  load(..., streaming=True) setup (data files, card): {setup_t * 1e3:.0f} ms, once")
    print(f"  streaming load():  {rows / stream_t:10.1f} rows/s")
    print(f"  pyarrow baseline:  {rows / arrow_t:10.1f} rows/s")
    verdict = "OK" if ratio >= TARGET_RATIO else "BELOW TARGET"
    print(f"  ratio streaming / pyarrow: {ratio:.2f} (target >= {TARGET_RATIO}: {verdict})")

    clips = clips_of(folder, args.clips)
    sample_t = naive_t = float("inf")
    delivered = naive_delivered = 0
    decoded_frames = 0
    for data in clips[:1]:  # warm up codecs
        sd.sample_frames(data, fps=1.0, max_side=448)
    for _ in range(args.repeat):
        t, delivered = best(
            lambda: sum(len(sd.sample_frames(c, fps=1.0, max_side=448).frames) for c in clips), 1
        )
        sample_t = min(sample_t, t)
        t, naive_delivered = best(lambda: sum(every_frame_then_pick(c, 1.0, 448) for c in clips), 1)
        naive_t = min(naive_t, t)
    assert delivered == naive_delivered, (delivered, naive_delivered)
    for data in clips:
        import io

        with av.open(io.BytesIO(data)) as c:
            decoded_frames += sum(1 for _ in c.decode(video=0))
    print(f"clips: {len(clips)} ({decoded_frames} frames in all, {delivered} at 1 fps)")
    print(
        f"  sample_frames(fps=1, max_side=448): {len(clips) / sample_t:8.1f} clips/s, "
        f"{delivered / sample_t:8.1f} frames/s delivered"
    )
    print(
        f"  decode every frame, then pick:      {len(clips) / naive_t:8.1f} clips/s, "
        f"{delivered / naive_t:8.1f} frames/s delivered "
        f"({decoded_frames / naive_t:.1f} frames/s decoded)"
    )
    print(f"  speed-up sample_frames / every frame: {naive_t / sample_t:.2f}x")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
