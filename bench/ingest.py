"""Ingest cost per video against the number of entries, for every source (issue 48).

Each source's adapter must read its annotations in time linear in their size: a rule or a
join that rescans what it has already read (a quadratic duplicate check, a taxonomy lookup
by scan) shows as a per-video cost that grows with the file. For every ``--source`` this
writes synthetic annotations in the source's own format (``--small`` and ``--large``
entries of four steps each, one of every eight repeating a step, so that the rules do work),
reads them with the adapter (`sources.registry.load`, best of ``--repeat`` runs), and prints
the seconds per video of each size and their ratio, large over small: flat is about 1.

    python bench/ingest.py [--small 2000] [--large 20000] [--repeat 3] [--source NAME ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from splice_build.sources import registry
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS

LABELS = ("wash", "cut", "mix", "serve", "wash")
CARD = LABELS[:4]  # CrossTask's task card, HT-Step's taxonomy


def _steps(n: int) -> list[tuple[int, str, float, float]]:
    """Four steps (step number, label, start, end); every eighth video repeats its first."""
    labels = LABELS[1:] if n % 8 else (LABELS[0], LABELS[1], LABELS[2], LABELS[4])
    return [(k + 1, label, 1.0 + 5 * k, 4.0 + 5 * k) for k, label in enumerate(labels)]


def _vid(n: int) -> str:
    return f"v{n:010d}"


def write_coin(root: Path, entries: int) -> Path:
    database = json.loads(BUNDLED_ANNOTATIONS.read_text("utf-8"))["database"]
    real = sorted(database)
    out = {_vid(n): database[real[n % len(real)]] for n in range(entries)}
    path = root / "coin.json"
    path.write_text(json.dumps({"database": out}), "utf-8")
    return path


def write_crosstask(root: Path, entries: int) -> Path:
    (root / "annotations").mkdir(parents=True)
    card = f"1\nBench Task\nhttp://example.org\n4\n{','.join(CARD)}\n\n"
    (root / "tasks_primary.txt").write_text(card, "utf-8")
    lines = []
    for n in range(entries):
        rows = "".join(f"{CARD.index(label) + 1},{s},{e}\n" for _, label, s, e in _steps(n))
        (root / "annotations" / f"1_{_vid(n)}.csv").write_text(rows, "utf-8")
        lines.append(f"1,{_vid(n)},https://www.youtube.com/watch?v={_vid(n)}\n")
    (root / "videos.csv").write_text("".join(lines), "utf-8")
    return root


def write_youcook2(root: Path, entries: int) -> Path:
    database = {
        _vid(n): {
            "duration": 30.0, "subset": "training", "recipe_type": "101",
            "annotations": [
                {"segment": [s, e], "id": k - 1, "sentence": label}
                for k, label, s, e in _steps(n)
            ],
            "video_url": f"https://www.youtube.com/watch?v={_vid(n)}",
        }
        for n in range(entries)
    }  # fmt: skip
    path = root / "youcookii_annotations_trainval.json"
    path.write_text(json.dumps({"database": database}), "utf-8")
    return path


def write_htstep(root: Path, entries: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    ids = {"wash": 0, "cut": 1, "mix": 2, "serve": 3}
    taxonomy = (
        "global_step_index,activity,step_index,variation,variation_index,headline,paragraph\n"
    )
    taxonomy += "".join(f"{i},Bench,{i},none,{i + 1},{label}.,\n" for label, i in ids.items())
    (root / "taxonomy.csv").write_text(taxonomy, "utf-8")
    annotations = {
        _vid(n): {
            "subset": "train", "activity": "Bench", "variation": "none",
            "annotations": [{"segment": [s, e], "id": ids[label]} for _, label, s, e in _steps(n)],
        }
        for n in range(entries)
    }  # fmt: skip
    (root / "annotations.json").write_text(json.dumps(annotations), "utf-8")
    return root


def write_goalstep(root: Path, entries: int) -> Path:
    videos = [
        {
            "video_uid": _vid(n), "start_time": 0.0, "end_time": 30.0,
            "goal_category": "COOKING:BENCH", "goal_description": "bench",
            "segments": [
                {"start_time": s, "end_time": e, "step_category": f"Bench: {label}",
                 "step_description": label, "is_continued": False, "is_relevant": "essential",
                 "segments": []}
                for _, label, s, e in _steps(n)
            ],
        }
        for n in range(entries)
    ]  # fmt: skip
    path = root / "goalstep_train.json"
    path.write_text(json.dumps({"split": "train", "videos": videos}), "utf-8")
    return path


def write_steps(root: Path, entries: int) -> Path:
    rows = ["video,start,end,label\n"]
    for n in range(entries):
        rows += [f"{_vid(n)},{s},{e},{label}\n" for _, label, s, e in _steps(n)]
    path = root / "steps.csv"
    path.write_text("".join(rows), "utf-8")
    return path


WRITERS = {
    "coin": write_coin,
    "crosstask": write_crosstask,
    "youcook2": write_youcook2,
    "htstep": write_htstep,
    "goalstep": write_goalstep,
    "steps": write_steps,
}


def per_video(source: str, paths: dict[int, Path], repeat: int) -> dict[int, tuple[float, int]]:
    """Best seconds per video of ``repeat`` reads of each file, the sizes read in turn (so a
    busy machine slows both alike), and the videos the rules kept."""
    best = {n: float("inf") for n in paths}
    kept = {}
    for _ in range(repeat):
        for entries, path in paths.items():
            start = time.perf_counter()
            result = registry.load(source, path)
            best[entries] = min(best[entries], time.perf_counter() - start)
            kept[entries] = len(result.entries)
    return {n: (best[n] / n, kept[n]) for n in paths}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=2_000, help="entries of the baseline")
    parser.add_argument("--large", type=int, default=20_000, help="entries of the large file")
    parser.add_argument("--repeat", type=int, default=3, help="reads of each file (best taken)")
    parser.add_argument("--source", nargs="*", default=list(WRITERS), choices=list(WRITERS))
    args = parser.parse_args()
    sizes = [f"per video, {n}" for n in (args.small, args.large)]
    print(f"{'source':10s} {sizes[0]:>18s} {sizes[1]:>19s} {'ratio':>6s}")
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        for source in args.source:
            paths = {}
            for entries in (args.small, args.large):
                folder = Path(tmp) / f"{source}-{entries}"
                folder.mkdir()
                paths[entries] = WRITERS[source](folder, entries)
            costs = per_video(source, paths, args.repeat)
            (small, kept_small), (large, kept_large) = costs[args.small], costs[args.large]
            ratios[source] = large / small
            print(
                f"{source:10s} {small * 1e6:15.1f} us {large * 1e6:16.1f} us "
                f"{ratios[source]:6.2f}   (kept {kept_small} / {kept_large})"
            )
    print(f"largest ratio (large / small per-video ingest cost): {max(ratios.values()):.2f}")


if __name__ == "__main__":
    main()
