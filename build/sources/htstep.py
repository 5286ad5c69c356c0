"""The ``htstep`` adapter: HT-Step's ``annotations.json`` joined to its ``taxonomy.csv``
(the release's ``data/`` folder, or the annotation file with the taxonomy beside it).

``annotations.json`` is keyed by YouTube id: ``{"subset", "activity", "variation",
"annotations": [{"segment": [start, end], "id": <global_step_index>}]}``; ``taxonomy.csv``
has ``global_step_index,activity,step_index,variation,variation_index,headline,paragraph``.

Rules of this source (the shared ones are `rules`'):

- every step id is joined to ``taxonomy.csv``: its caption is the step's ``headline`` and
  ``answer.step_ids`` holds the ``global_step_index``; an id the taxonomy lacks, or one of
  another activity, is a damaged file;
- a video keeps its single variation: one whose steps come from two variations of its
  activity, or from another variation than its ``variation`` field, is skipped,
  ``mixed-variations`` (the official evaluator asserts one variation per video);
- ``domain`` is ``HT-Step`` (it has no domains); generic headlines ("Finished.") are kept;
- HT-Step states no durations: a time past 10 hours is taken for another unit.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from splice_build.errors import UserError, read_text
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
    seconds,
)
from splice_build.sources.jsonfile import field, head, read_json

SOURCE = SourceCard(
    name="htstep",
    title="HT-Step",
    adapter_version=1,
    license="cc-by-nc-4.0",
    license_note=(
        "Creative Commons Attribution-NonCommercial 4.0 (the HT-Step annotations, per its "
        "README); the videos are HowTo100M's, from YouTube"
    ),
    citation=(
        "Afouras et al., HT-Step: Aligning Instructional Articles with How-To Videos, "
        "NeurIPS 2023 Datasets and Benchmarks"
    ),
    videos="HowTo100M's YouTube videos",
    default_domain="HT-Step",
)
ANNOTATIONS = "annotations.json"
TAXONOMY = "taxonomy.csv"
COLUMNS = ("global_step_index", "activity", "step_index", "variation", "headline")


def _files(path: Path) -> tuple[Path, Path]:
    folder = path if path.is_dir() else path.parent
    if path.is_dir() and not (folder / ANNOTATIONS).is_file() and (folder / "data").is_dir():
        folder = folder / "data"
    annotations = path if path.is_file() else folder / ANNOTATIONS
    return annotations, folder / TAXONOMY


def looks_like(path: Path) -> str | None:
    annotations, taxonomy = _files(path)
    text = head(annotations)
    if taxonomy.is_file() and re.search(r'"activity"\s*:', text) and '"variation"' in text:
        return f"an HT-Step release ({ANNOTATIONS} with activities and variations, {TAXONOMY})"
    return None


def read_taxonomy(path: Path) -> dict[int, tuple[str, str, str]]:
    """global_step_index -> (activity, variation, headline)."""
    if not path.is_file():
        raise UserError(f"{path}: not found; HT-Step's {TAXONOMY} must be beside {ANNOTATIONS}")
    reader = csv.DictReader(io.StringIO(read_text(path, "HT-Step taxonomy")))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise damaged(path, "line 1 (header)", missing[0], "no such column")
    steps = {}
    for row in reader:
        where = f"line {reader.line_num}"
        for name in COLUMNS:
            if row.get(name) is None:
                raise damaged(path, where, name, "missing (truncated?)")
        if not row["global_step_index"].strip().isdigit():
            raise damaged(path, where, "global_step_index", "not a number")
        steps[int(row["global_step_index"])] = (
            row["activity"].strip(),
            row["variation"].strip(),
            row["headline"].strip(),
        )
    return steps


def written_orders(path: Path) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Activity -> each variation's headlines by ``step_index`` (``splice baseline
    written-order``), from ``taxonomy.csv`` (checked as the build checks it)."""
    taxonomy_file = _files(Path(path))[1]
    read_taxonomy(taxonomy_file)  # a damaged taxonomy is refused as the build refuses it
    reader = csv.DictReader(io.StringIO(read_text(taxonomy_file, "HT-Step taxonomy")))
    steps: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for row in reader:
        index = row["step_index"].strip()
        if not index.isdigit():
            raise damaged(taxonomy_file, f"line {reader.line_num}", "step_index", "not a number")
        key = (row["activity"].strip(), row["variation"].strip())
        steps.setdefault(key, []).append((int(index), row["headline"].strip()))
    orders: dict[str, list[tuple[str, ...]]] = {}
    for (activity, _variation), listed in sorted(steps.items()):
        orders.setdefault(activity, []).append(tuple(h for _, h in sorted(listed)))
    return {activity: tuple(variants) for activity, variants in orders.items()}


def load(path: Path, options: SourceOptions | None = None) -> IngestResult:
    annotations, taxonomy_file = _files(path)
    taxonomy = read_taxonomy(taxonomy_file)
    root, _ = read_json(annotations, "HT-Step annotation file")
    if not isinstance(root, dict):
        raise UserError(f"{annotations}: not an object keyed by video id; not HT-Step's")
    raws, skips = [], []
    for vid, raw in root.items():
        activity = field(annotations, vid, raw, "activity", str)
        segments = field(annotations, vid, raw, "annotations", list)
        variation = raw.get("variation")
        steps, variations = [], set()
        for i, seg in enumerate(segments):
            step, var = _step(annotations, vid, i, seg, activity, taxonomy)
            steps.append(step)
            variations.add(var)
        stated = {str(variation)} if variation not in (None, "") else set()
        if len(variations | stated) > 1:
            said = ", ".join(sorted(variations | stated))
            skips.append(Skip(vid, rules.STAGE, f"mixed-variations: steps of variations {said}"))
            continue
        url = f"https://www.youtube.com/watch?v={vid}"
        raws.append(RawVideo(vid, activity, SOURCE.default_domain, None, url, tuple(steps), vid))
    read = [annotations, taxonomy_file]
    return rules.ingested(path, files_sha256(read), raws, options, SOURCE, skips)


def _step(
    file: Path, vid: str, index: int, raw: object, activity: str, taxonomy: dict
) -> tuple[RawStep, str]:
    where = f"annotations[{index}]"
    segment = field(file, vid, raw, "segment", list, where)
    if len(segment) != 2:
        raise damaged(file, vid, f"{where}.segment", f"{segment!r} is not [start, end]")
    step_id = field(file, vid, raw, "id", (int, str), where)
    if isinstance(step_id, str) and not step_id.strip().isdigit():
        raise damaged(file, vid, f"{where}.id", f"{step_id!r} is not a step index")
    step_id = int(step_id)
    if step_id not in taxonomy:
        raise damaged(file, vid, f"{where}.id", f"{step_id} is not in {TAXONOMY}")
    owner, variation, headline = taxonomy[step_id]
    if owner != activity:
        what = f"{step_id} is a step of {owner!r} in {TAXONOMY}, not of {activity!r}"
        raise damaged(file, vid, f"{where}.id", what)
    start = seconds(segment[0], file, vid, f"{where}.segment[0]")
    end = seconds(segment[1], file, vid, f"{where}.segment[1]")
    check_units(file, vid, f"{where}.segment[1]", end, None)
    if end <= start:
        raise damaged(file, vid, f"{where}.segment", f"end {end:g} is not after start {start:g}")
    return RawStep(step_id, headline, start, end), variation


__all__ = ["SOURCE", "load", "looks_like", "read_taxonomy", "written_orders"]
