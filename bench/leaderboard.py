"""The leaderboard at the paper's scale: 1,000 entries of 3,381 videos (Table 1's clip
counts) on three configs, their ``score.json`` files synthesized as the scorer writes them
(per-video scores stored compactly, intervals, breakdowns). Each step is printed as a ratio
against the floor measured in the same run: reading and parsing every entry's
``score.json`` (what any board of these entries must at least do once).

- ``show``: ``splice leaderboard show --board B`` in a fresh process, and the table it
  renders from (``table.load_board`` + ``board_rows``) in this one; ``show --metric
  hamming_accuracy`` as a ratio of the default's CPU (every metric's ranks are indexed);
- first render: ``board_rows`` plus the web page's Blocks when its module is installed;
- ``add`` of one 10,143-row file (one model on the three configs), re-ranking the board;
- ``rescore``: peak memory of a fresh process re-scoring 10 and then 40 entries with
  prediction files (flat: the same peak for four times the entries).

Need (issue 42): show and the first render under 2 s, add under 10 s, rescore's memory flat.

Run: .venv/bin/python bench/leaderboard.py [--entries 1000] [--videos 3381] [--rescore 0 0]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from splice_eval.leaderboard import index, store  # noqa: E402
from splice_eval.leaderboard.records import BoardConfig, Provenance  # noqa: E402
from splice_eval.leaderboard.store import BoardVideos, write_videos  # noqa: E402
from splice_eval.leaderboard.submission import encode_values  # noqa: E402
from splice_eval.predictions import Prediction, write_predictions  # noqa: E402
from splice_metric import metric_version  # noqa: E402

TABLE1 = {2: 1020, 3: 1026, 4: 734, 5: 333, 6: 172, 7: 96}
CONFIGS = ("video", "video_text", "text")
BUILD_ID = "b" * 64


def synthetic_videos(count: int, rng: random.Random) -> BoardVideos:
    weights = [TABLE1[n] for n in sorted(TABLE1)]
    clips = rng.choices(sorted(TABLE1), weights, k=count)
    ids = tuple(f"v{k:06d}" for k in range(count))
    orders = []
    for n in clips:
        order = list(range(1, n + 1))
        rng.shuffle(order)
        orders.append(tuple(order))
    return BoardVideos(
        BUILD_ID,
        ids,
        tuple(orders),
        tuple(clips),
        tuple(f"domain{k % 12}" for k in range(count)),
        tuple(f"task{k % 180}" for k in range(count)),
    )


def synthetic_score(k: int, videos: BoardVideos, rng: np.random.Generator) -> dict:
    """One entry's score.json as the scorer writes it (values drawn for a model of skill p)."""
    nclips = videos.clip_counts()
    size = len(nclips)
    blocks = {}
    for config in CONFIGS:
        p = rng.uniform(0.1, 0.7)
        right = rng.random(size) < p
        in_place = np.where(right, nclips, np.floor(rng.random(size) * (nclips - 1)))
        values = {
            "binary_accuracy": right.astype(np.float32),
            "hamming_accuracy": in_place / nclips,
            "lcs_ratio": np.maximum(in_place, 1) / nclips,
            "edit_distance": nclips - np.maximum(in_place, 1),
        }
        metrics = {}
        for m, v in values.items():
            se = 1.96 * float(v.std()) / np.sqrt(size)
            mean = float(v.mean())
            metrics[m] = {"value": mean, "low": mean - se, "high": mean + se}
        breakdowns = {
            "num_clips": {
                str(n): {"value": float(right[nclips == n].mean()), "low": None, "high": None}
                for n in TABLE1
            }
        }
        blocks[config] = {
            "coverage": 1.0,
            "partial": False,
            "metrics": metrics,
            "breakdowns": breakdowns,
            "per_video": {m: encode_values(m, v, nclips) for m, v in values.items()},
            "settings": "",
        }
    provenance = Provenance(
        model=f"org/model-{k}",
        params_b=float(rng.choice([2, 7, 13, 34, 72])),
        weights=str(rng.choice(["open", "closed"])),
        toolkit="splice run",
        frames="16",
        submitter=f"team{k}",
        contamination="no",
    )
    return {
        "schema": 1,
        "name": f"model-{k}",
        "kind": "model",
        "tier": "rescored",
        "metric_version": metric_version(),
        "build_id": BUILD_ID,
        "provenance": provenance.as_dict(),
        "notes": [],
        "configs": blocks,
        # named, never read to rank (a board ranks only entries scored from files)
        "prediction_files": ["predictions-1.jsonl.gz"],
    }


def make_board(root: Path, entries: int, count: int) -> tuple[Path, BoardVideos]:
    board = root / "board"
    board.mkdir()
    videos = synthetic_videos(count, random.Random(0))
    cfg = BoardConfig(BUILD_ID, "synthetic", metric_version(), videos=count)
    store.write_config(board, cfg)
    write_videos(board, videos)
    rng = np.random.default_rng(0)
    for k in range(entries):
        folder = board / store.ENTRIES / f"model-{k}"
        folder.mkdir(parents=True)
        store.write_json(folder / store.SCORE_FILE, synthetic_score(k, videos, rng))
    return board, videos


def prediction_file(path: Path, videos: BoardVideos, model: str, seed: int) -> Path:
    rng = random.Random(seed)
    rows = []
    for config in CONFIGS:
        for vid, order in zip(videos.ids, videos.orders, strict=True):
            answer = list(order)
            if rng.random() < 0.6:
                rng.shuffle(answer)
            rows.append(Prediction(vid, config, model, None, answer))
    meta = {"producer": "splice run", "model": model, "build_id": BUILD_ID}
    return write_predictions(path, rows, meta)


def floor(board: Path) -> float:
    start = time.perf_counter()
    for slug in store.entry_slugs(board):
        json.loads((board / store.ENTRIES / slug / store.SCORE_FILE).read_text())
    return time.perf_counter() - start


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def splice(*args: str) -> float:
    """Run a command in a fresh process; its CPU seconds (user + system): on a shared
    machine the wall clock also counts other people's work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "splice_build.cli", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rescore_peak(root: Path, videos: BoardVideos, entries: int) -> float:
    """Peak RSS (MiB) of a fresh ``rescore`` of a board of ``entries`` submissions."""
    from splice_eval.leaderboard import changes

    board = root / f"rescore-{entries}"
    board.mkdir()
    cfg = BoardConfig(BUILD_ID, "synthetic", "old", videos=len(videos.ids))
    store.write_config(board, cfg)
    write_videos(board, videos)
    for k in range(entries):
        folder = board / store.ENTRIES / f"r{k}"
        folder.mkdir(parents=True)
        source = prediction_file(root / "r.jsonl", videos, f"r{k}", k)
        names = [changes.keep_compressed(source, folder, 1)]
        score = synthetic_score(k, videos, np.random.default_rng(k))
        score["prediction_files"] = names
        store.write_json(folder / store.SCORE_FILE, score)
    # VmHWM, not ru_maxrss: a child's ru_maxrss starts from its parent's at the fork
    code = (
        "from pathlib import Path;"
        "from splice_eval.leaderboard import changes;"
        f"changes.rescore(Path({str(board)!r}), progress=False);"
        "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--videos", type=int, default=3381)
    parser.add_argument("--rescore", type=int, nargs=2, default=(10, 40))
    args = parser.parse_args()
    from splice_eval.leaderboard.table import board_rows, load_board

    with tempfile.TemporaryDirectory(prefix="bench-board-") as tmp:
        root = Path(tmp)
        made, (board, videos) = timed(lambda: make_board(root, args.entries, args.videos))
        print(f"synthesized {args.entries} entries x {len(CONFIGS)} configs x {args.videos} videos")
        print(f"  ({made:.1f} s)")
        base = min(floor(board) for _ in range(3))
        print(f"floor: reading the {args.entries} score.json files: {base:.3f} s")
        cpu_start = time.process_time()
        indexed, _ = timed(lambda: index.rebuild(board, store.read_config(board)))
        cpu_index = time.process_time() - cpu_start
        print(
            f"index (every config's ranks by each of the 4 metrics, written once per change): "
            f"{indexed:.2f} s wall, {cpu_index:.2f} s CPU"
        )
        print(f"  = {indexed / base:.1f}x floor")
        shown, cpu = timed(lambda: splice("leaderboard", "show", "--board", str(board)))
        print(
            f"show (fresh process, imports included): {shown:.2f} s wall, {cpu:.2f} s CPU = "
            f"{shown / base:.1f}x floor (need < 2 s)"
        )
        # the least CPU of three runs each: the machine is shared
        shows = {}
        for metric in ("binary_accuracy", "hamming_accuracy"):
            args_ = ("leaderboard", "show", "--board", str(board), "--metric", metric)
            shows[metric] = min(splice(*args_) for _ in range(3))
        ratio = shows["hamming_accuracy"] / shows["binary_accuracy"]
        print(
            f"show --metric hamming_accuracy: {shows['hamming_accuracy']:.2f} s CPU against "
            f"{shows['binary_accuracy']:.2f} s by the default metric = {ratio:.2f}x (need: "
            "about 1, every metric's ranks indexed; least of 3 fresh processes each)"
        )
        table, rows = timed(lambda: board_rows(load_board(board)))
        print(
            f"load_board + board_rows: {table:.3f} s = {table / base:.2f}x floor, {len(rows)} rows"
        )
        try:
            from splice_eval.leaderboard.web import page
        except ImportError:
            page = None
        if page is not None and hasattr(page, "build_page"):
            imported, _ = timed(lambda: __import__("gradio"))
            first, _ = timed(lambda: page.build_page(load_board(board)))
            print("first render (load_board + the page's Blocks; Gradio imported first in")
            print(f"  {imported:.1f} s): {first:.2f} s = {first / base:.1f}x floor (need < 2 s)")
        else:
            print(
                "first render: the web page module is not installed; board_rows above is its data"
            )
        pred = prediction_file(root / "add.jsonl", videos, "added", 99)
        added, cpu = timed(lambda: splice("leaderboard", "add", str(pred), "--board", str(board)))
        print(
            f"add of one {3 * args.videos}-row file (fresh process): {added:.2f} s wall, "
            f"{cpu:.2f} s CPU = {added / base:.1f}x floor (need < 10 s)"
        )
        small, large = args.rescore
        if not small:
            print("rescore: skipped (--rescore 0 0)")
            return 0
        peak_small = rescore_peak(root, videos, small)
        peak_large = rescore_peak(root, videos, large)
        print(
            f"rescore peak RSS: {small} entries {peak_small:.0f} MiB, {large} entries "
            f"{peak_large:.0f} MiB: ratio {peak_large / peak_small:.2f} (flat: about 1)"
        )
        shutil.rmtree(board, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process's peak RSS: {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
