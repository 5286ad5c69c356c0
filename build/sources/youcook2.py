"""The ``youcook2`` adapter: ``youcookii_annotations_trainval.json`` (or the ``YouCookII/``
release folder holding it in ``annotations/``, with ``label_foodtype.csv``).

The file is shaped like COIN's: ``{"database": {<YouTube id>: {"duration", "subset",
"recipe_type", "video_url", "annotations": [{"segment": [start, end], "id", "sentence"}]}}}``.

Rules of this source (the shared ones are `rules`'):

- ``recipe_type`` is a string (``"113"``); the task is its dish name from
  ``label_foodtype.csv`` (``id,name``) when the folder has it, else ``recipe <id>``;
  ``domain`` is ``YouCook2`` (it has no domains); COIN's ``recipe_type`` column stays null;
- the test split has no sentences: a ``testing`` video (or one whose steps have no
  ``sentence``) is skipped, ``no-sentences``;
- captions are the sentences; ``answer.step_ids`` holds the annotation ``id`` (the step's
  position in its video: YouCook2 has no step taxonomy);
- 1-second steps exist and are kept (the shared least step length is 1 s).

A damaged file is refused whole: truncated JSON, an entry or step missing a required field
(``duration``, ``subset``, ``annotations``, ``segment``, ``id``), a time that is not
seconds, or a segment past its video's duration (another unit).
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
from splice_build.sources.jsonfile import field, head, read_json, time_field

SOURCE = SourceCard(
    name="youcook2",
    title="YouCook2",
    adapter_version=1,
    license="unknown",
    license_note=(
        "unclear: no official licence terms were found (third parties state a non-commercial "
        "licence of the University of Michigan, a mirror states MIT); this card does not "
        "guess, check YouCook2's own terms before use"
    ),
    citation=(
        "Zhou, Xu and Corso, Towards Automatic Learning of Procedures from Web Instructional "
        "Videos, AAAI 2018"
    ),
    videos="YouCook2's YouTube videos",
    default_domain="YouCook2",
)
ANNOTATIONS = "youcookii_annotations_trainval.json"
FOODTYPES = "label_foodtype.csv"


def _file(path: Path) -> Path:
    if path.is_dir():
        for candidate in (path / "annotations" / ANNOTATIONS, path / ANNOTATIONS):
            if candidate.is_file():
                return candidate
        found = sorted(path.glob("**/youcookii_annotations_*.json"))
        if found:
            return found[0]
    return path


def looks_like(path: Path) -> str | None:
    text = head(_file(path))
    if (
        '"database"' in text
        and re.search(r'"annotations"\s*:', text)
        and ('"sentence"' in text or '"recipe_type": "' in text)
    ):
        return 'a YouCook2 annotation file ("database" entries with "annotations" sentences)'
    return None


def read_foodtypes(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    names = {}
    for n, row in enumerate(csv.reader(io.StringIO(read_text(path, FOODTYPES))), start=1):
        if not row:
            continue
        if len(row) < 2:
            raise damaged(path, f"line {n}", "name", "missing (id,name expected; truncated?)")
        names[row[0].strip()] = row[1].strip()
    return names


def load(path: Path, options: SourceOptions | None = None) -> IngestResult:
    file = _file(path)
    root, _ = read_json(file, "YouCook2 annotation file")
    if not isinstance(root, dict) or not isinstance(root.get("database"), dict):
        raise UserError(f'{file}: no "database" object; not a YouCook2 annotation file')
    folder = path if path.is_dir() else file.parent
    food = folder / FOODTYPES
    if not food.is_file():
        food = file.parent.parent / FOODTYPES
    dishes = read_foodtypes(food)
    raws, skips = [], []
    for vid, raw in root["database"].items():
        duration = time_field(file, vid, raw, "duration")
        subset = field(file, vid, raw, "subset", str)
        recipe = field(file, vid, raw, "recipe_type", (str, int))
        steps = field(file, vid, raw, "annotations", list)
        if subset == "testing" or any(isinstance(s, dict) and "sentence" not in s for s in steps):
            skips.append(
                Skip(vid, rules.STAGE, f"no-sentences: the {subset} split has no sentences")
            )
            continue
        raws.append(
            RawVideo(
                vid,
                dishes.get(str(recipe), f"recipe {recipe}"),
                SOURCE.default_domain,
                duration,
                str(raw.get("video_url") or f"https://www.youtube.com/watch?v={vid}"),
                tuple(_step(file, vid, i, s, duration) for i, s in enumerate(steps)),
                vid,
            )
        )
    read = [file] + ([food] if food.is_file() else [])
    return rules.ingested(path, files_sha256(read), raws, options, SOURCE, skips)


def _step(file: Path, vid: str, index: int, raw: object, duration: float) -> RawStep:
    where = f"annotations[{index}]"
    segment = field(file, vid, raw, "segment", list, where)
    if len(segment) != 2:
        raise damaged(file, vid, f"{where}.segment", f"{segment!r} is not [start, end]")
    step_id = field(file, vid, raw, "id", int, where)
    sentence = field(file, vid, raw, "sentence", str, where).strip()
    start = seconds(segment[0], file, vid, f"{where}.segment[0]")
    end = seconds(segment[1], file, vid, f"{where}.segment[1]")
    check_units(file, vid, f"{where}.segment[1]", end, duration)
    if end <= start:
        raise damaged(file, vid, f"{where}.segment", f"end {end:g} is not after start {start:g}")
    return RawStep(step_id, sentence, start, end)


__all__ = ["SOURCE", "load", "looks_like"]
