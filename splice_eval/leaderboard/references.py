"""The reference rows ``init`` seeds a board with, so a new entry is read against them:

- the paper's reported rows (Tables 2 and 5, ``report.paper``), tier ``reported``: the
  authors' figures on their release, shown as published and never re-scored here; on a
  COIN board only (another source's build is not what they measured);
- ``random (exact)``: the metric's exact expectation of a uniformly random order, per
  video (``splice_metric.expected_random``), on every config;
- the project's baselines (``splice baseline``: random, identity, taxonomy prior,
  visual similarity) run on this build and added as any submission is;
- the human protocol's answers, when given (``splice annotate ingest``'s files).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

import splice_dataset as sd
from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard import store, submission
from splice_eval.leaderboard.records import REFERENCE, REPORTED, RESCORED, BoardConfig, Provenance
from splice_eval.leaderboard.store import BoardVideos
from splice_eval.report import paper

BASELINES = ("random", "identity", "taxonomy-prior", "visual-similarity")


def paper_scores(source: str = "coin") -> list[dict[str, Any]]:
    """One score.json per model of Tables 2 and 5 (rows matched by ``paper.model_key``):
    COIN's figures, so none on a board of another source (``source``: the build's)."""
    if source != "coin":
        return []
    models: dict[str, dict[str, Any]] = {}
    for table in paper.METRIC_TABLES:
        for name, values in table.rows:
            key = paper.model_key(name)
            score = models.setdefault(
                key,
                {
                    "schema": submission.SCHEMA,
                    "name": f"{name} (paper)",
                    "kind": REFERENCE,
                    "tier": REPORTED,
                    "metric_version": "",
                    "build_id": "",
                    "provenance": asdict(Provenance(model=name, paper="")),
                    "notes": [paper.PAPER_NOTE],
                    "configs": {},
                },
            )
            tables = score["provenance"]["paper"]
            score["provenance"]["paper"] = f"{tables}, {table.table}" if tables else table.table
            for (config, metric), value in zip(table.columns, values, strict=True):
                if value is None:
                    continue
                block = score["configs"].setdefault(
                    config, {"coverage": 1.0, "partial": False, "metrics": {}}
                )
                block["metrics"][metric] = {"value": value, "low": None, "high": None}
    return list(models.values())


def random_exact(videos: BoardVideos, cfg: BoardConfig) -> dict[str, Any]:
    """The exact expectation of random orders on this build, every config."""
    from splice_metric import METRICS, expected_random, metric_version

    nclips = np.asarray(videos.num_clips)
    expected = {n: expected_random(int(n))[0] for n in np.unique(nclips)}
    per_video = {m: np.array([expected[n][METRICS.index(m)] for n in nclips]) for m in col.METRICS}
    block = submission.config_block(per_video, videos, cfg)
    return {
        "schema": submission.SCHEMA,
        "name": "random (exact)",
        "kind": REFERENCE,
        "tier": RESCORED,
        "metric_version": metric_version(),
        "build_id": videos.build_id,
        "provenance": asdict(Provenance(model="random", toolkit="splice_metric")),
        "notes": ["the metric's exact expectation of a uniformly random order"],
        "source": "random_exact",
        "configs": {c: block for c in sd.CONFIGS},
    }


def write_reference(board: Path, slug: str, score: dict[str, Any]) -> None:
    folder = store.entry_dir(board, slug)
    folder.mkdir(parents=True, exist_ok=True)
    store.write_json(folder / store.SCORE_FILE, score)


def baseline_files(
    data: Path, names: Sequence[str], out: Path, build_id: str
) -> list[tuple[str, list[Path]]]:
    """Each baseline's prediction files on every config it answers (``splice baseline``'s
    own writer and metadata)."""
    from splice_eval.predictions import write_predictions
    from splice_eval.scoring.baselines import CONFIGS_OF, baseline_metadata, run_baseline

    made = []
    for name in names:
        files = []
        for config in CONFIGS_OF[name]:
            path = out / f"{name}-{config}.jsonl"
            write_predictions(
                path,
                run_baseline(name, data, config),
                baseline_metadata(name, config, 0) | {"build_id": build_id or None},
            )
            files.append(path)
        made.append((name, files))
    return made
