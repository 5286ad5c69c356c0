"""The ``goalstep`` adapter: Ego4D Goal-Step's ``goalstep_train.json`` / ``goalstep_valid.json``.

``{"split", "videos": [{"video_uid", "start_time", "end_time", "goal_category",
"goal_description", "segments": [<step>]}]}``; a step has ``start_time``, ``end_time`` (seconds
from the video's start), ``step_category`` (``"<domain>: <step>"``), ``step_description``,
``is_continued``, ``is_relevant`` and ``segments``, its substeps, with the same fields.

Rules of this source (the shared ones are `rules`'):

- level (``--level``): the clips are the video's steps (default) or all their substeps;
- ``is_relevant``: ``essential`` and ``optional`` steps are kept, ``irrelevant`` and
  ``unsure`` ones dropped (counted as ``irrelevant-step``); a step without the field is
  taken as ``essential`` (one real validation step lacks it: a stated default, not a refusal);
- ``is_continued``: a step continuing an earlier one carries its caption; next to it, the
  shared repeat rule merges the two; after other steps (an interleaved step) the video is
  skipped, ``interleaved-step``; a missing field is taken as ``false``;
- captions are ``step_category`` without its ``"<domain>: "`` prefix (the taxonomy, which
  repeats where the activity repeats; the free-text description never does); steps have no
  ids, so ``answer.step_ids`` holds `base.stable_step_id`; ``domain`` is the goal category's
  part before ``:`` (``COOKING``) and ``task`` the rest (``MAKE_BREAD``);
- the test split has no times: a video without timed ``segments`` is skipped, ``no-times``;
- the video's duration is its ``end_time``: a time past it is another unit.

The videos need an Ego4D licence: the build takes them from a local ``--videos`` folder only
and nothing downloads them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_build.records import Skip
from splice_build.sources import rules
from splice_build.sources.base import (
    IngestResult,
    RawStep,
    RawVideo,
    SourceCard,
    SourceOptions,
    check_units,
    damaged,
    files_sha256,
    stable_step_id,
)
from splice_build.sources.jsonfile import field, head, read_json, time_field

SOURCE = SourceCard(
    name="goalstep",
    title="Ego4D Goal-Step",
    adapter_version=1,
    license="other",
    license_note=(
        "annotations: MIT (Goal-Step's LICENSE); videos: Ego4D's licence, which each user "
        "must hold (the build takes them from a local folder only)"
    ),
    citation=(
        "Song et al., Ego4D Goal-Step: Toward Hierarchical Understanding of Procedural "
        "Activities, NeurIPS 2023 Datasets and Benchmarks"
    ),
    videos="Ego4D videos from a local folder (an Ego4D licence is needed; none are downloaded)",
    default_domain="Ego4D",
)
# why ``splice download`` refuses this source (the registry's `downloadable`)
NO_DOWNLOAD = (
    "Goal-Step's videos are Ego4D's, under the Ego4D licence: take them from your licensed "
    "copy (splice build --videos DIR)"
)
RELEVANT = ("essential", "optional")
DEFAULT_RELEVANCE = "essential"  # a step without is_relevant
DEFAULT_CONTINUED = False  # a step without is_continued


def looks_like(path: Path) -> str | None:
    text = head(path)
    if re.search(r'"videos"\s*:', text) and '"video_uid"' in text:
        return 'an Ego4D Goal-Step file ("videos" with "video_uid" and goal steps)'
    return None


def load(path: Path, options: SourceOptions | None = None) -> IngestResult:
    level = (options or SourceOptions()).level
    root, _ = read_json(path, "Goal-Step annotation file")
    videos = root.get("videos") if isinstance(root, dict) else None
    if not isinstance(videos, list):
        raise UserError(f'{path}: no "videos" list; not a Goal-Step annotation file')
    raws, skips = [], []
    for index, raw in enumerate(videos):
        vid = field(path, f"videos[{index}]", raw, "video_uid", str)
        if "segments" not in raw:
            skips.append(Skip(vid, rules.STAGE, "no-times: a test-split video has no timed steps"))
            continue
        duration = time_field(path, vid, raw, "end_time")
        goal = field(path, vid, raw, "goal_category", str)
        domain, _, task = goal.partition(":")
        task = task.strip() or goal
        steps = field(path, vid, raw, "segments", list)
        if level == "substep":
            listed = [
                (f"segments[{i}].segments[{j}]", sub)
                for i, step in enumerate(steps)
                for j, sub in enumerate(field(path, vid, step, "segments", list, f"segments[{i}]"))
            ]
        else:
            listed = [(f"segments[{i}]", step) for i, step in enumerate(steps)]
        read = [_step(path, vid, where, s, task, duration) for where, s in listed]
        interleaved = _interleaved(read)
        if interleaved:
            skips.append(Skip(vid, rules.STAGE, f"interleaved-step: {interleaved}"))
            continue
        raws.append(
            RawVideo(vid, task, domain.strip() or SOURCE.default_domain, duration, "",
                     tuple(step for step, _ in read), vid)
        )  # fmt: skip
    return rules.ingested(path, files_sha256([path]), raws, options, SOURCE, skips)


def _step(
    file: Path, vid: str, where: str, raw: Any, task: str, duration: float
) -> tuple[RawStep, bool]:
    start = time_field(file, vid, raw, "start_time", where)
    end = time_field(file, vid, raw, "end_time", where)
    check_units(file, vid, f"{where}.end_time", end, duration)
    if end <= start:
        raise damaged(file, vid, f"{where}.end_time", f"{end:g} is not after start {start:g}")
    category = field(file, vid, raw, "step_category", str, where)
    label = category.split(":", 1)[-1].strip() or category
    relevance = raw.get("is_relevant") or DEFAULT_RELEVANCE
    continued = bool(raw.get("is_continued", DEFAULT_CONTINUED))
    dropped = "" if relevance in RELEVANT else "irrelevant-step"
    step = RawStep(stable_step_id(task, label), label, start, end, dropped=dropped)
    return step, continued


def _interleaved(read: list[tuple[RawStep, bool]]) -> str:
    """Why a continued step resumes one that other (kept) steps interrupted, or ""."""
    kept = [(s, c) for s, c in read if not s.dropped]
    for i, (step, continued) in enumerate(kept):
        if not continued:
            continue
        earlier = [j for j in range(i) if kept[j][0].label == step.label]
        if earlier and earlier[-1] != i - 1:
            return f"step {i + 1} {step.label!r} continues step {earlier[-1] + 1} after other steps"
    return ""


__all__ = ["DEFAULT_RELEVANCE", "RELEVANT", "SOURCE", "load", "looks_like"]
