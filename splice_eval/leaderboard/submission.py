"""A submission scored with the board's metric: what ``score.json`` holds, written only by
this module (``add``, ``rescore``, ``init``'s reference rows), never taken from a
submission.

Prediction files are read and scored by the project's one reader and scorer
(``scoring.runs.read_runs`` / ``score_run`` through ``probe_effects.per_video``: each
metric per video, a video not answered scored wrong). A submission is one model: its
order runs give the config's metrics, its probe runs and question-format runs the extra
columns. The per-video scores are stored compactly (``vectors``) so the board ranks
without reading prediction files again.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

import splice_dataset as sd
import splice_formats
from splice_build.errors import UserError
from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard import statistics as stats
from splice_eval.leaderboard.records import MODEL, RESCORED, BoardConfig, Provenance
from splice_eval.leaderboard.store import BoardVideos

SCHEMA = 1
MISSING_SHOWN = 3
# An entry whose answered videos are more than this share unparsed or invalid (no
# readable order, an order that is not a permutation, a failed request) is refused unless
# --allow-invalid: a broken run scored 0.0, not a model's result. Any share is a note.
INVALID_MAX = 0.5
# The provenance fields that make two entries of one model and config the same run (an
# add of the same again is refused unless --replace); the submitter makes it independent.
SETTINGS = ("frames", "long_side", "clips_as", "prompt_version", "generation", "revision")


def settings_key(provenance: Provenance, config: str) -> str:
    """What makes an entry the same as another: model, config and the settings."""
    import json

    values = {k: getattr(provenance, k) for k in SETTINGS}
    return json.dumps([provenance.model.lower(), config, values], sort_keys=True, default=str)


def _cell(values: np.ndarray, cfg: BoardConfig, seed: int) -> dict[str, dict[str, float]]:
    """Each metric's mean and bootstrap interval over these videos (metrics x videos)."""
    counts = stats.resample_counts(values.shape[1], cfg.resamples, seed)
    low, high = stats.intervals(stats.resampled_means(values, counts))
    return {
        m: {"value": float(values[i].mean()), "low": float(low[i]), "high": float(high[i])}
        for i, m in enumerate(col.METRICS)
    }


def _groups(videos: BoardVideos) -> dict[str, dict[str, np.ndarray]]:
    """Breakdown name -> key -> the videos' mask (domains, clip counts, reasoning groups)."""
    from splice_eval.report.report import reasoning_groups

    domains = np.asarray(videos.domains)
    clips = np.asarray(videos.num_clips)
    tasks = np.asarray(videos.tasks)
    out: dict[str, dict[str, np.ndarray]] = {
        "domain": {d: domains == d for d in sorted(set(videos.domains))},
        "num_clips": {str(n): clips == n for n in sorted(set(videos.num_clips))},
        "reasoning_group": {},
    }
    for group in reasoning_groups():
        mask = np.isin(tasks, list(group["tasks"]))
        if mask.any():
            out["reasoning_group"][group["name"]] = mask
    return out


def config_block(
    per_video: Mapping[str, np.ndarray],
    videos: BoardVideos,
    cfg: BoardConfig,
    *,
    coverage: float = 1.0,
    partial: bool = False,
    groups: Mapping[str, Mapping[str, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """One config's scores: every metric with its interval, the breakdowns, the per-video
    values (for ranks), from per-video values aligned with the board's videos."""
    values = np.stack([np.asarray(per_video[m], dtype=np.float64) for m in col.METRICS])
    groups = _groups(videos) if groups is None else groups
    counts = stats.resample_counts(values.shape[1], cfg.resamples, cfg.seed)
    binary = values[col.METRICS.index(col.DEFAULT_METRIC)]
    breakdowns = {}
    for name, cells in groups.items():
        found = stats.group_intervals(binary, counts, list(cells.values()))
        breakdowns[name] = {
            key: {"value": mean, "low": low, "high": high}
            for key, (mean, low, high) in zip(cells, found, strict=True)
        }
    nclips = videos.clip_counts()
    return {
        "coverage": coverage,
        "partial": partial,
        "metrics": _cell(values, cfg, cfg.seed),
        "breakdowns": breakdowns,
        "per_video": {m: encode_values(m, values[i], nclips) for i, m in enumerate(col.METRICS)},
    }


def _check_build(runs: Sequence[Any], videos: BoardVideos, board: Path) -> list[str]:
    from splice_eval.scoring.build_checks import short_id

    notes = []
    for source in {s.file: s for run in runs for s in run.sources}.values():
        if not source.build_id:
            notes.append(f"{Path(source.file).name}: records no build identity (not checked)")
        elif videos.build_id and source.build_id != videos.build_id:
            raise UserError(
                f"{source.file}: made on build {short_id(source.build_id)}, but board {board} "
                f"ranks build {short_id(videos.build_id)}: its answers belong to another build"
            )
    return notes


def score_files(
    files: Sequence[Path],
    shown_names: Sequence[str],
    videos: BoardVideos,
    cfg: BoardConfig,
    board: Path,
    *,
    submitted: Mapping[str, Any],
    allow_partial: bool,
    name: str | None = None,
    kind: str = MODEL,
    meta_name: str = "meta.yaml",
    allow_invalid: bool = True,
) -> dict[str, Any]:
    """A submission's ``score.json`` from its prediction files (``files``: readable copies,
    ``shown_names``: how messages name them). Refused (UserError, one line): another
    build's answers, a video answered twice (duplicate or contradicting rows), several
    models, missing videos without ``allow_partial``, more than ``INVALID_MAX`` of the
    answers unparsed or invalid without ``allow_invalid``."""
    from splice_eval.scoring.probe_effects import per_video
    from splice_eval.scoring.runs import NO_PROBE, read_runs
    from splice_metric import metric_version

    refs = videos.references
    try:
        runs = read_runs(
            files, per_file=False, orders=refs, check=lambda r: None, build=f"board {board}'s build"
        )
    except UserError as exc:
        raise UserError(_renamed(str(exc), files, shown_names)) from None
    notes = _check_build(runs, videos, board)
    models = sorted({r.model for r in runs})
    if len(models) != 1:
        raise UserError(
            f"{', '.join(shown_names)}: answers of {len(models)} models "
            f"({', '.join(map(repr, models[:4]))}); one entry is one model: add each model's "
            "files apart"
        )
    provenance = _provenance(runs, submitted, meta_name, models[0])
    main = [r for r in runs if r.format == splice_formats.ORDER and r.probe == NO_PROBE]
    if not main:
        raise UserError(
            f"{', '.join(shown_names)}: no order answers without a probe: an entry needs the "
            "order task's answers on at least one config"
        )
    groups = _groups(videos)
    blocks: dict[str, dict[str, Any]] = {}
    raw_vectors: dict[str, dict[str, np.ndarray]] = {}
    for run in main:
        if run.config not in sd.CONFIGS:  # ranked per config: an entry of none is seen by none
            raise UserError(
                f"{_named(run, files, shown_names)}: config {run.config or 'not stated'}: "
                f"expected one of {', '.join(sd.CONFIGS)} (a 'config' field on each row or "
                "in the metadata line)"
            )
        answered = sum(v in run.orders for v in refs)
        coverage = answered / len(refs)
        if answered < len(refs) and not allow_partial:
            missing = [v for v in refs if v not in run.orders]
            raise UserError(
                f"{_named(run, files, shown_names)}: config {run.config}: {len(missing)} of "
                f"{len(refs)} videos have no answer (first: "
                f"{', '.join(map(repr, missing[:MISSING_SHOWN]))}); pass --allow-partial to "
                "add it as a partial entry"
            )
        notes += _invalid_note(run, refs, _named(run, files, shown_names), allow_invalid)
        vecs = per_video(run, refs)
        raw_vectors[run.config] = vecs
        blocks[run.config] = config_block(
            vecs, videos, cfg, coverage=coverage, partial=coverage < 1, groups=groups
        )
        blocks[run.config]["settings"] = settings_key(provenance, run.config)
        blocks[run.config]["answers"] = answers_digest(run.orders)
    _extras(runs, main, blocks, refs, cfg)
    if "video_text" in raw_vectors and "text" in raw_vectors:
        for metric in col.METRICS:
            diff = raw_vectors["video_text"][metric] - raw_vectors["text"][metric]
            mean, low, high = stats.interval_of(diff, cfg.resamples, cfg.seed)
            blocks["video_text"]["metrics"][f"{col.VISUAL_GAIN}:{metric}"] = {
                "value": mean,
                "low": low,
                "high": high,
            }
    return {
        "schema": SCHEMA,
        "name": name or provenance.model,
        "kind": kind,
        "tier": RESCORED,
        "metric_version": metric_version(),
        "build_id": videos.build_id,
        "provenance": asdict(provenance),
        "notes": notes,
        "configs": blocks,
    }


def answers_digest(orders: Mapping[str, Sequence[int] | None]) -> str:
    """A fingerprint of a run's answers (every video's order read): two entries with the
    same answers are one run submitted twice, never an independent reproduction."""
    import hashlib
    import json

    canonical = json.dumps(sorted((v, o) for v, o in orders.items()), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _invalid_note(
    run: Any, refs: Mapping[str, Sequence[int]], shown: str, allow_invalid: bool
) -> list[str]:
    """The share of the answered videos unparsed and invalid, as a note; refused above
    ``INVALID_MAX`` unless ``allow_invalid``."""
    from splice_eval.scoring.runs import invalid_counts

    counts = invalid_counts(run, refs)
    answered = len(refs) - counts.missing
    bad = counts.unparsed + counts.invalid + counts.errors
    if not answered or not bad:
        return []
    words = (
        f"{shown}: config {run.config}: of {answered} answers, {counts.unparsed / answered:.1%} "
        f"unparsed (no readable order), {counts.invalid / answered:.1%} invalid (not a "
        f"permutation of the clips)"
        + (f", {counts.errors / answered:.1%} failed requests" if counts.errors else "")
    )
    if bad / answered > INVALID_MAX and not allow_invalid:
        raise UserError(
            f"{words}: more than {INVALID_MAX:.0%} scored wrong for want of an order; pass "
            "--allow-invalid to add it anyway"
        )
    return [words]


def _provenance(
    runs: Sequence[Any], submitted: Mapping[str, Any], meta_name: str, model: str
) -> Provenance:
    """The first metadata line's values, completed by the submitted ones. A toolkit's file
    has no metadata line: its rows say which toolkit wrote it (``producer_of``)."""
    from splice_eval.leaderboard import meta as meta_mod
    from splice_eval.predictions import producer_of  # (the Space's copy has no readers)

    metadata = next((s.metadata for r in runs for s in r.sources if s.metadata), None)
    if metadata is None:
        producer = next(filter(None, (producer_of(s.file) for r in runs for s in r.sources)), "")
        metadata = {"producer": producer} if producer else None
    provenance = meta_mod.provenance(metadata, submitted, meta_name, model)
    if not provenance.model:
        provenance = Provenance(**{**asdict(provenance), "model": model})
    # what the file's metadata recorded is held to meta.yaml's rules too (a frame size
    # of 1e30 is refused here, not found unranked on the board)
    files = ", ".join(sorted({Path(s.file).name for r in runs for s in r.sources}))
    meta_mod.checked(meta_mod.shown_values(provenance), f"{files or 'the file'}'s metadata")
    return provenance


def _extras(
    runs: Sequence[Any],
    main: Sequence[Any],
    blocks: dict[str, dict[str, Any]],
    refs: Mapping[str, Sequence[int]],
    cfg: BoardConfig,
) -> None:
    """The probe runs' binary accuracy and the question formats' accuracy, as extra
    metrics of their config (only configs the submission answered in order form)."""
    from splice_eval.scoring.probe_effects import per_video
    from splice_eval.scoring.runs import references_for, score_run

    for run in runs:
        if run in main or run.config not in blocks:
            continue
        if run.format != splice_formats.ORDER:
            result = score_run(run, references_for(run, refs))
            metric = f"{run.format}_questions"
            blocks[run.config]["metrics"][metric] = {
                "value": float(result["accuracy"]),
                "low": None,
                "high": None,
            }
        else:
            vecs = per_video(run, refs)["binary_accuracy"]
            mean, low, high = stats.interval_of(vecs, cfg.resamples, cfg.seed)
            blocks[run.config]["metrics"][col.probe_metric(run.probe)] = {
                "value": mean,
                "low": low,
                "high": high,
            }


def _renamed(message: str, files: Sequence[Path], shown: Sequence[str]) -> str:
    for file, name in zip(files, shown, strict=True):
        message = message.replace(str(file), name)
    return message


def _named(run: Any, files: Sequence[Path], shown: Sequence[str]) -> str:
    return _renamed(run.sources[0].file if run.sources else run.model, files, shown)


# metric -> whether its per-video value is a share of the video's clips
_PER_CLIP = {
    "binary_accuracy": False,
    "hamming_accuracy": True,
    "lcs_ratio": True,
    "edit_distance": False,
}


def encode_values(metric: str, values: np.ndarray, num_clips: np.ndarray) -> dict[str, str]:
    """Per-video scores stored compactly in ``score.json``, so ranking a thousand entries
    reads a few kilobytes each, never their prediction files: each paper metric of a video
    is a small whole number once multiplied by its clip count where it is a share (Hamming:
    clips in place; LCS: its length) or as it is (binary, edit distance), one byte per
    video; values that are not whole (the random row's expectations) as float32."""
    scaled = values * num_clips if _PER_CLIP[metric] else values
    whole = np.rint(scaled)
    if (
        np.all(np.abs(scaled - whole) < 1e-6)
        and whole.min(initial=0) >= 0
        and whole.max(initial=0) <= 255
    ):
        data, dtype = whole.astype(np.uint8).tobytes(), "u1"
    else:
        data, dtype = np.asarray(values, dtype="<f4").tobytes(), "f4"
    return {"dtype": dtype, "data": base64.b64encode(data).decode("ascii")}


def decode_values(metric: str, stored: dict[str, str], num_clips: np.ndarray) -> np.ndarray:
    raw = base64.b64decode(stored["data"])
    if stored["dtype"] == "f4":
        values = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    elif stored["dtype"] == "u1":
        values = np.frombuffer(raw, dtype=np.uint8).astype(np.float32)
        if _PER_CLIP[metric]:
            values = values / num_clips
    else:
        raise ValueError(f"unknown per-video encoding {stored['dtype']!r}")
    if len(values) != len(num_clips):
        raise ValueError(f"{len(values)} per-video values for {len(num_clips)} videos")
    return values
