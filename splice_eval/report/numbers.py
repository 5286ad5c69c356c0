"""The report's numbers as plain data (``build_report``, also written as report.json): the
paper's scores per run, by clips, domain, duration bin and reasoning-type group, and
Section 7.5's adjacency of the first and last clips. Every score comes from
``splice_metric`` (through ``runs.score_run``); a video of the build without a prediction
is scored as an invalid (empty) prediction and counted as missing.

For a uniformly random order of n clips, the first and last chronological clips are
adjacent with probability 2/n (n-1 adjacent position pairs, 2 orders each, out of n(n-1)
ordered position pairs); chance for a set of videos is the mean of 2/n over them."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from importlib import resources
from pathlib import Path

import numpy as np

from splice_build.output.stats import BIN_LABELS, duration_bin
from splice_eval.builddata import VideoMeta
from splice_eval.scoring.probe_effects import compare_runs
from splice_eval.scoring.runs import (
    NO_PROBE,
    Run,
    invalid_counts,
    not_in_build,
    read_runs,
    score_run,
)
from splice_metric import PAPER_METRICS, random_baseline

METRIC_TITLES = dict(zip(PAPER_METRICS, ("Binary", "Hamming", "LCS", "Edit"), strict=True))
ADJACENCY_MIN_CLIPS = 4  # Section 7.5 looks at videos with four or more clips
CONFIDENCE = 0.95


def reasoning_groups() -> list[dict]:
    """The named task lists of Tables 3-4 (see the data file for sources and derivation)."""
    text = resources.files("splice_eval").joinpath("data", "reasoning_groups.json").read_text()
    return json.loads(text)["groups"]


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    """One run per (model, config, probe) across the files, by model, config and probe."""
    runs = read_runs(paths, per_file=False)
    return sorted(runs, key=lambda r: (r.model, r.config, r.probe != NO_PROBE, r.probe))


def references_of(videos: Sequence[VideoMeta]) -> dict[str, list[int]]:
    """The answer order of each video, in the given order: what runs are scored against."""
    return {v.video_id: list(v.order) for v in videos}


def score_videos(run: Run, videos: Sequence[VideoMeta], keys: Sequence[str] | None = None) -> dict:
    """The metric's result (with 95% intervals and the exact random expectation) for a run
    over these videos, optionally broken down by one key per video."""
    return score_run(
        run,
        references_of(videos),
        groups=keys,
        random_baseline=True,
        confidence_level=CONFIDENCE,
        seed=0,
    )


def random_expectation(num_clips: Sequence[int]) -> dict[str, float]:
    """The metric's exact expected scores of uniformly random orders for these clip counts."""
    if not len(num_clips):
        return {m: math.nan for m in PAPER_METRICS}
    result = random_baseline(num_clips)
    return {m: result[m] for m in PAPER_METRICS}


def adjacency(run: Run, videos: Sequence[VideoMeta]) -> dict[str, float]:
    """Section 7.5: first and last chronological clips predicted next to each other."""
    adjacent = first_before_last = valid = 0
    chance = []
    for v in videos:
        order = run.orders.get(v.video_id)
        n = v.num_clips
        if n < ADJACENCY_MIN_CLIPS:
            continue
        chance.append(2 / n)
        if order is None or sorted(order) != sorted(v.order):
            continue  # an invalid answer says nothing about adjacency
        valid += 1
        pos_first, pos_last = order.index(v.order[0]), order.index(v.order[-1])
        adjacent += abs(pos_first - pos_last) == 1
        first_before_last += pos_first < pos_last
    return {
        "videos": len(chance),
        "valid": valid,
        "adjacent_rate": adjacent / valid if valid else math.nan,
        "chance": float(np.mean(chance)) if chance else math.nan,
        "first_before_last_rate": first_before_last / valid if valid else math.nan,
    }


def _rows(result: dict, breakdown: str, order: Sequence) -> list[dict]:
    """Binary accuracy, interval and random expectation per key of a breakdown."""
    rows = []
    for key in order:
        cell = result[breakdown].get(key)
        if cell is None:
            continue
        lo, hi = cell["confidence_intervals"]["binary_accuracy"]
        rows.append(
            {
                "key": str(key),
                "videos": cell["count"],
                "mean": cell["binary_accuracy"],
                "lo": lo,
                "hi": hi,
                "random": result["random_baseline"][breakdown][key]["binary_accuracy"],
            }
        )
    return rows


def duration_key(duration: float) -> str:
    """A video's duration bin, labelled as Table 6 (and the card's statistics) label it."""
    return BIN_LABELS[duration_bin(duration)]


def build_report(runs: Sequence[Run], meta: dict[str, VideoMeta], source: str = "coin") -> dict:
    """All numbers of the report as plain data (also written as report.json). A build of
    another source than COIN (``source``: its ``--source`` name) is grouped by its own
    tasks instead of COIN's reasoning-type task groups (which name COIN's tasks)."""
    videos = [meta[v] for v in sorted(meta)]
    counts = [v.num_clips for v in videos]
    clip_keys = sorted(set(counts))
    domains = sorted({v.domain for v in videos})
    coin = source == "coin"
    groups = reasoning_groups() if coin else []
    tasks = sorted({v.task for v in videos})
    out: dict = {
        "source": source,
        "videos": len(videos),
        "random_exact": random_expectation(counts),
        "random_by_clips": {str(n): random_expectation([n])["binary_accuracy"] for n in clip_keys},
        "runs": [],
    }
    references = references_of(videos)
    out["probes"] = [asdict(c) for c in compare_runs(runs, references)]
    for run in runs:
        overall = score_videos(run, videos)
        ci = overall["confidence_intervals"]
        by_domain = score_videos(run, videos, [v.domain for v in videos])
        by_duration = score_videos(run, videos, [duration_key(v.duration) for v in videos])
        group_rows = [_group_row(run, videos, g) for g in groups]
        by_task = (
            {}
            if coin
            else {
                "by_task": _rows(
                    score_videos(run, videos, [v.task for v in videos]), "by_group", tasks
                )
            }
        )
        out["runs"].append(
            {
                "model": run.model,
                "config": run.config,
                "probe": run.probe,
                **invalid_counts(run, references).as_dict(),
                "orders_from_raw": run.from_raw.rows,
                "sources": [asdict(source) for source in run.sources],
                "not_in_build": len(not_in_build(run, references)),
                "overall": {
                    m: {"mean": overall[m], "lo": ci[m][0], "hi": ci[m][1]} for m in PAPER_METRICS
                },
                "by_clips": _rows(overall, "by_num_clips", clip_keys),
                "by_domain": _rows(by_domain, "by_group", domains),
                "by_duration": _rows(by_duration, "by_group", BIN_LABELS),
                "adjacency": adjacency(run, videos),
                "reasoning_groups": group_rows,
                **by_task,
            }
        )
    return out


def _group_row(run: Run, videos: Sequence[VideoMeta], group: dict) -> dict:
    """Binary accuracy of a run on the videos of one reasoning-type task group."""
    members = set(group["tasks"])
    chosen = [v for v in videos if v.task in members]
    row = {"group": group["name"], "table": group["table"], "videos": len(chosen)}
    if not chosen:
        return row | {"binary": math.nan, "lo": math.nan, "hi": math.nan, "random": math.nan}
    res = score_videos(run, chosen)
    lo, hi = res["confidence_intervals"]["binary_accuracy"]
    random = res["random_baseline"]["binary_accuracy"]
    return row | {"binary": res["binary_accuracy"], "lo": lo, "hi": hi, "random": random}
