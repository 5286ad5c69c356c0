"""The ``coin`` adapter: a COIN.json-format annotation file into validated ``VideoEntry``s.

A broken entry must never stop a build of 11,827 videos, so every problem with one video
becomes a ``Skip`` whose reason names the field (``annotation[2].segment [30.0, 12.0]: end
before start``); only a file that cannot be an annotation file at all raises.

Choices the issue left open (also stated in the build's card through the skip reasons):

* Order. COIN lists a video's steps chronologically (checked on all 10,070 real entries),
  and the chronological order *is* the benchmark's answer. An entry whose steps are out
  of order is therefore reported as damaged rather than silently re-sorted.
* Touching steps (one ends exactly where the next starts, 705 times in the real file) are
  fine, also within ``records.ROUNDING`` (float noise: 2.9000000000000004 against 2.9, the
  tolerance validate's segment check allows); any real overlap is a skip.
* ``SEGMENT_TOLERANCE``: a segment may end up to 1 s after ``duration``, because COIN marks
  most times in whole seconds while ``duration`` is the exact file length; whether the
  local video really covers the segment is probe's job. Nothing may start before 0.
* ``start``/``end`` (the span of the task inside the video) are optional; when present
  they must be numbers with ``0 <= start <= end <= duration + tolerance``. They are not
  carried further: clips are cut from the step segments alone.
* A step's ``id`` (a string in COIN.json, an int accepted too) must be a step of the
  entry's task and its ``label`` must equal the taxonomy's label for that id, so that the
  captions and the answer's step ids can never disagree.
* ``recipe_type`` must be the taxonomy's Target Id of ``class`` (after resolving the three
  2019 aliases, see ``taxonomy.TASK_ALIASES``).
* A video id given twice in ``database`` skips every copy (which one is right is unknown),
  and an id that is not a plain YouTube-style id (letters, digits, ``-``, ``_``) is skipped
  because ids become file names in the work folder.
* The shared rules (`rules`): out-of-order and overlapping steps are skipped under their
  rule codes; by default COIN is kept as the paper published it (repeated steps kept, no
  least step length), which keeps a COIN build's ``build_id`` and shard bytes;
  ``--repeated-steps merge`` and ``--min-step-seconds`` apply those rules to COIN too.
* A malformed entry is skipped (``invalid-entry``) rather than the file refused, as this
  reader always did: a file that is not COIN.json at all (truncated, no ``database``) is.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, decode_text, read_bytes
from splice_build.records import ROUNDING, Skip, Step, VideoEntry
from splice_build.sources import rules
from splice_build.sources.base import IngestResult, SourceCard, SourceOptions
from splice_build.stages import taxonomy

STAGE = "ingest"
SOURCE = SourceCard(
    name="coin",
    title="COIN",
    adapter_version=1,
    license="cc-by-nc-4.0",
    license_note="Creative Commons Attribution-NonCommercial 4.0 (COIN's LICENSE; research only)",
    citation=(
        "Tang et al., COIN: A Large-scale Dataset for Comprehensive Instructional Video "
        "Analysis, CVPR 2019"
    ),
    videos="COIN's YouTube videos",
    default_domain="COIN",
)
# COIN's public annotations as the package ships them: the 10,070 of COIN's 11,827 videos
# whose step timestamps are public (see coin/SOURCES.md), in COIN.json format. The default
# of every command that takes --annotations; the full file can be passed instead.
BUNDLED_ANNOTATIONS = (
    Path(__file__).resolve().parents[1] / "data" / "coin" / "COIN_public_10070.json"
)


SEGMENT_TOLERANCE = 1.0  # seconds a segment (or `end`) may pass `duration`
REQUIRED_FIELDS = ("class", "recipe_type", "subset", "duration", "video_url", "annotation")
STEP_FIELDS = ("id", "segment", "label")
_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]+")
MAX_VIDEO_ID = rules.MAX_VIDEO_ID


class _Invalid(Exception):
    """One entry is unusable; the message is the skip reason."""


class _Object(dict):
    """A JSON object that remembers keys given more than once (json keeps the last)."""

    duplicates: set[str]


def _object_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    obj.duplicates = set()
    for key, value in pairs:
        if key in obj:
            obj.duplicates.add(key)
        obj[key] = value
    return obj


@functools.cache
def bundled_sha256() -> str:
    """The bundled file's sha256, so a card can say when a build used COIN's public subset."""
    return hashlib.sha256(BUNDLED_ANNOTATIONS.read_bytes()).hexdigest()


def looks_like(path: Path) -> str | None:
    """What a COIN file looks like, when ``path`` looks like one (its first 64 KiB)."""
    head = _head(path)
    if '"database"' in head and re.search(r'"annotation"\s*:', head) and '"label"' in head:
        return 'a COIN.json file ("database" entries with "annotation" steps and "label"s)'
    return None


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return ""


def load(path: str | Path, options: SourceOptions | None = None) -> IngestResult:
    """The adapter: `load_annotations` with the shared rules the options ask for (none by
    default: COIN as published)."""
    got = load_annotations(path)
    options = rules.resolved(options, SOURCE.name)
    entries, skips = [], list(got.skips)
    for entry in got.entries:
        try:
            steps = rules.check_steps(entry.steps, options)
        except rules.Rejected as exc:
            skips.append(Skip(entry.video_id, STAGE, str(exc)))
            continue
        entries.append(entry if steps == entry.steps else _with_steps(entry, steps))
    return IngestResult(
        path=got.path,
        sha256=got.sha256,
        entries=entries,
        skips=sorted(skips, key=lambda s: s.video_id),
        source=SOURCE,
        options={"repeated_steps": options.repeated_steps,
                 "min_step_seconds": options.min_step_seconds},
    )  # fmt: skip


def _with_steps(entry: VideoEntry, steps: tuple[Step, ...]) -> VideoEntry:
    return replace(entry, steps=steps)


def load_annotations(path: str | Path) -> IngestResult:
    """Parse and validate a COIN.json-format file (``{"database": {id: entry}}``).

    A file that cannot be used at all (missing, a folder, not UTF-8, not JSON, truncated,
    no ``database`` object) raises UserError naming it, and the line where JSON parsing
    stopped; a UTF-8 byte order mark is accepted. Every other problem skips one video.
    """
    path = Path(path)
    data = read_bytes(path, "annotation file")
    root = parse_annotation_json(data, path)
    if not isinstance(root, dict) or "database" not in root:
        raise UserError(f'{path}: no "database" object; expected COIN.json format')
    database = root["database"]
    if not isinstance(database, dict):
        raise UserError(f'{path}: "database" is {_kind(database)}, expected an object')
    if not database:
        raise UserError(f'annotation file {path}: its "database" is empty; no video')
    entries, skips = parse_database(database)
    return IngestResult(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        entries=entries,
        skips=skips,
        source=SOURCE,
    )


def parse_annotation_json(data: bytes, path: str | Path) -> Any:
    """The JSON of an annotation file's bytes (UTF-8, BOM accepted); UserError naming the
    file and the line where parsing stopped. Repeated video ids are remembered."""
    text = decode_text(data, path, "annotation file")
    try:
        return json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path} line {exc.lineno} column {exc.colno}: not a JSON annotation file "
            f"({exc.msg}; is it truncated?)"
        ) from None
    except RecursionError:
        raise UserError(
            f"{path}: arrays or objects nested too deeply to read (COIN.json nests a few levels); "
            "not a COIN annotation file"
        ) from None


def parse_database(database: Mapping[str, Any]) -> tuple[list[VideoEntry], list[Skip]]:
    """Validate every entry of a ``database`` mapping (video id -> COIN entry)."""
    tax = taxonomy.load()
    duplicates = getattr(database, "duplicates", set())
    entries: list[VideoEntry] = []
    skips: list[Skip] = []
    for video_id in sorted(database):
        try:
            if video_id in duplicates:
                raise _Invalid("video id appears more than once in database")
            entries.append(parse_entry(video_id, database[video_id], tax))
        except _Invalid as exc:
            skips.append(Skip(video_id, STAGE, str(exc)))
    return entries, skips


def parse_entry(video_id: str, raw: Any, tax: taxonomy.Taxonomy) -> VideoEntry:
    """One COIN entry as a VideoEntry; raises _Invalid with the reason."""
    _check_video_id(video_id)
    if not isinstance(raw, dict):
        raise _Invalid(f"entry is {_kind(raw)}, expected an object")
    _no_duplicate_fields(raw, "")
    missing = [f for f in REQUIRED_FIELDS if f not in raw]
    if missing:
        raise _Invalid(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")

    name = _typed(raw, "class", str)
    recipe_type = _typed(raw, "recipe_type", int)
    subset = _typed(raw, "subset", str)
    video_url = _typed(raw, "video_url", str)
    duration = _number(raw["duration"], "duration")
    if duration <= 0:
        raise _Invalid(f"duration {duration}: not positive")
    _check_span(raw, duration)
    if not subset:
        raise _Invalid("subset: empty string")

    task = _task(name, recipe_type, tax)
    steps = _steps(raw["annotation"], task, duration)
    return VideoEntry(
        video_id=video_id,
        task=task.name,
        domain=task.domain,
        recipe_type=recipe_type,
        subset=subset,
        duration=duration,
        video_url=video_url,
        steps=steps,
    )


def _check_video_id(video_id: str) -> None:
    if not _VIDEO_ID.fullmatch(video_id):
        raise _Invalid(f"video id {video_id!r} is not a YouTube id (letters, digits, - and _)")
    if len(video_id) > MAX_VIDEO_ID:
        raise _Invalid(
            f"video id of {len(video_id)} characters is not a YouTube id (at most {MAX_VIDEO_ID})"
        )


def _task(name: str, recipe_type: int, tax: taxonomy.Taxonomy) -> taxonomy.TaskInfo:
    """The task of an entry's ``class``, which its ``recipe_type`` must agree with."""
    try:
        task = tax.task(name)
    except KeyError:
        raise _Invalid(f"class {name!r}: unknown COIN task") from None
    if recipe_type != task.recipe_type:
        other = tax.by_recipe_type.get(recipe_type)
        known = f"is task {other.name!r}" if other else "is not a COIN Target Id"
        raise _Invalid(
            f"recipe_type {recipe_type} {known}, but class {name!r} is "
            f"recipe_type {task.recipe_type}"
        )
    return task


def _steps(annotation: Any, task: taxonomy.TaskInfo, duration: float) -> tuple[Step, ...]:
    """An entry's annotation as its steps, each valid and in chronological order."""
    if not isinstance(annotation, list):
        raise _Invalid(f"annotation is {_kind(annotation)}, expected a list")
    steps = tuple(_step(i, a, task, duration) for i, a in enumerate(annotation))
    for i in range(1, len(steps)):
        prev, cur = steps[i - 1], steps[i]
        here = f"annotation[{i}].segment {_seg(cur)}"
        there = f"annotation[{i - 1}].segment {_seg(prev)}"
        if cur.start < prev.start - ROUNDING:
            raise _Invalid(
                f"out-of-order: {here} starts before {there}: steps not in chronological order"
            )
        if cur.start < prev.end - ROUNDING:  # touching within float rounding is no overlap
            raise _Invalid(f"overlapping-steps: {here} overlaps {there}")
    return steps


def _step(index: int, raw: Any, task: taxonomy.TaskInfo, duration: float) -> Step:
    where = f"annotation[{index}]"
    if not isinstance(raw, dict):
        raise _Invalid(f"{where} is {_kind(raw)}, expected an object")
    _no_duplicate_fields(raw, f"{where}.")
    missing = [f for f in STEP_FIELDS if f not in raw]
    if missing:
        raise _Invalid(
            f"{where}: missing field{'s' if len(missing) > 1 else ''} " + ", ".join(missing)
        )

    step_id, label = _step_label(raw, where, task)
    segment = raw["segment"]
    if not isinstance(segment, list) or len(segment) != 2:
        raise _Invalid(f"{where}.segment {segment!r}: expected [start, end]")
    start = _number(segment[0], f"{where}.segment[0]")
    end = _number(segment[1], f"{where}.segment[1]")
    step = Step(step_id=step_id, label=label, start=start, end=end)
    here = f"{where}.segment {_seg(step)}"
    if end < start:
        raise _Invalid(f"{here}: end before start")
    if end == start:
        raise _Invalid(f"{here}: zero length")
    if start < 0:
        raise _Invalid(f"{here}: starts before 0")
    if end > duration + SEGMENT_TOLERANCE:
        raise _Invalid(
            f"{here}: ends after the video's duration {duration} s "
            f"(tolerance {SEGMENT_TOLERANCE} s)"
        )
    return step


def _step_label(raw: dict, where: str, task: taxonomy.TaskInfo) -> tuple[int, str]:
    """A step's id and label, which must be a step of its task, named as the taxonomy does."""
    step_id = _step_id(raw["id"], f"{where}.id")
    expected = task.step_label(step_id)
    if expected is None:
        raise _Invalid(f"{where}.id {step_id}: not a step of task {task.name!r}")
    label = raw["label"]
    if not isinstance(label, str):
        raise _Invalid(f"{where}.label is {_kind(label)}, expected a string")
    if label != expected:
        raise _Invalid(f"{where}.label {label!r}: the taxonomy calls step {step_id} {expected!r}")
    return step_id, label


def _check_span(raw: dict, duration: float) -> None:
    """Validate the optional task span ``start``/``end`` when the file has it."""
    span = {k: _number(raw[k], k) for k in ("start", "end") if k in raw}
    start, end = span.get("start", 0.0), span.get("end", duration)
    if start < 0 or end < start or end > duration + SEGMENT_TOLERANCE:
        raise _Invalid(
            f"start {start}, end {end}: not 0 <= start <= end <= duration {duration} "
            f"(tolerance {SEGMENT_TOLERANCE} s)"
        )


def _step_id(value: Any, where: str) -> int:
    """COIN.json stores step ids as strings of digits; ints are accepted too."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise _Invalid(f"{where} {value!r}: not an integer step id")


def _typed(raw: dict, field: str, kind: type) -> Any:
    value = raw[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _Invalid(f"{field} is {_kind(value)}, expected {dict(_KINDS)[kind]}")
    return value


def _number(value: Any, where: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Invalid(f"{where} is {_kind(value)}, expected a number")
    if not math.isfinite(value):
        raise _Invalid(f"{where} {value}: not a finite number")
    return float(value)


def _no_duplicate_fields(raw: dict, prefix: str) -> None:
    dup = sorted(getattr(raw, "duplicates", ()))
    if dup:
        raise _Invalid(f"{prefix}{dup[0]}: field given more than once")


_KINDS = (
    (bool, "a boolean"),  # before int: bool is an int subclass
    (dict, "an object"),
    (list, "a list"),
    (str, "a string"),
    (int, "an integer"),
    (float, "a number"),
)


def _kind(value: Any) -> str:
    """A JSON value's type, with its article, for reasons ("is a list, expected ...")."""
    if value is None:
        return "null"
    return next((name for t, name in _KINDS if isinstance(value, t)), type(value).__name__)


def _seg(step: Step) -> str:
    return f"[{step.start}, {step.end}]"


__all__ = [
    "BUNDLED_ANNOTATIONS",
    "SEGMENT_TOLERANCE",
    "SOURCE",
    "bundled_sha256",
    "load",
    "load_annotations",
    "looks_like",
    "parse_database",
]
