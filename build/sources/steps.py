"""The ``steps`` adapter: a lab's own annotated footage, one row per step.

A CSV (with a header) or a JSONL file (one object per line), UTF-8. Columns:

- ``video`` (required): the video's id, which names its file in ``--videos`` (``<id>.mp4``);
- ``start``, ``end`` (required): seconds from the video's start, numbers (``12.5``; a clock
  time such as ``0:05`` is refused);
- ``label`` (required): the step's caption, the one models see;
- ``task``, ``domain`` (optional): default ``steps`` (the source's name);
- ``split`` (optional): the lab's own split name; checked to be one per video, not written
  into the rows (the build is one ``test`` split; a lab keeps a set private by not
  publishing it).

A video's rows must be listed in time order, and may be anywhere in the file (all rows of a
video are gathered). Steps have no source ids: ``answer.step_ids`` holds
`base.stable_step_id` of (task, label). A row missing a required field, a truncated row
or line, a time that is not seconds, or a video whose rows name two tasks, domains or splits
is a damaged file, refused whole.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from splice_build.errors import decode_text, read_bytes
from splice_build.sources import rules
from splice_build.sources.base import (
    IngestResult,
    RawStep,
    RawVideo,
    SourceCard,
    SourceOptions,
    check_units,
    damaged,
    seconds,
    stable_step_id,
)

SOURCE = SourceCard(
    name="steps",
    title="own footage (the steps format)",
    adapter_version=1,
    license="other",
    license_note="the lab's own: the build's owner states it (SPLICE ships no such data)",
    citation="the lab's own annotations (cite SPLICE: Ballout, Wilfred et al., 2025)",
    videos="the lab's own videos, from a local folder",
    default_domain="steps",
)
# why ``splice download`` refuses this source (the registry's `downloadable`)
NO_DOWNLOAD = "a lab's own footage is local: pass its folder to splice build --videos DIR"
REQUIRED = ("video", "start", "end", "label")
OPTIONAL = ("task", "domain", "split")


def looks_like(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8-sig", "replace")
    except OSError:
        return None
    first = head.lstrip().split("\n", 1)[0].strip()
    if first.startswith("{"):
        try:
            keys = set(json.loads(first))
        except (ValueError, TypeError, RecursionError):
            keys = {k for k in REQUIRED if f'"{k}"' in first}
    else:
        keys = {c.strip() for c in first.split(",")}
    if set(REQUIRED) <= keys:
        return "a steps file (one row per step: video, start, end, label)"
    return None


def _rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) for every row of the file, as CSV or JSONL."""
    return _json_rows(path, text) if text.lstrip().startswith("{") else _csv_rows(path, text)


def _json_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            what = f"not JSON ({exc.msg}; truncated?)"
            raise damaged(path, f"line {n}", "(the line)", what) from None
        except RecursionError:
            raise damaged(path, f"line {n}", "(the line)", "nested too deeply") from None
        if not isinstance(row, dict):
            raise damaged(path, f"line {n}", "(the line)", "not a JSON object")
        rows.append((f"line {n}", row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise damaged(path, "line 1 (header)", missing[0], f"no such column in {header}")
    reader.fieldnames = header
    rows = []
    try:
        for row in reader:
            if None in row:
                where = f"line {reader.line_num}"
                raise damaged(path, where, "(the row)", "more cells than the header has")
            rows.append((f"line {reader.line_num}", row))
    except csv.Error as exc:
        raise damaged(path, f"line {reader.line_num}", "(the row)", f"not CSV ({exc})") from None
    return rows


def _text(path: Path, where: str, row: dict[str, Any], name: str, default: str | None) -> str:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise damaged(path, where, name, "missing (a required field)")
        return default
    if not isinstance(value, str):
        raise damaged(path, where, name, f"{value!r} is not text")
    return value.strip()


def load(path: Path, options: SourceOptions | None = None) -> IngestResult:
    data = read_bytes(path, "steps file")
    text = decode_text(data, path, "steps file")
    videos: dict[str, dict[str, Any]] = {}
    for where, row in _rows(path, text):
        for name in REQUIRED:  # the first missing field in the columns' order is named
            _required(path, where, row, name)
        vid = _text(path, where, row, "video", None)
        label = _text(path, where, row, "label", None)
        start = seconds(_required(path, where, row, "start"), path, where, "start")
        end = seconds(_required(path, where, row, "end"), path, where, "end")
        check_units(path, where, "end", end, None)
        if end <= start:
            raise damaged(path, where, "end", f"{end:g} is not after start {start:g}")
        video = videos.setdefault(vid, {"steps": [], "where": where})
        for name in OPTIONAL:
            value = _text(path, where, row, name, SOURCE.default_domain)
            if video.setdefault(name, value) != value:
                what = f"{value!r}, but an earlier row of video {vid} says {video[name]!r}"
                raise damaged(path, where, name, what)
        video["steps"].append((label, start, end))
    raws = [
        RawVideo(
            video_id=vid,
            task=v["task"],
            domain=v["domain"],
            duration=None,
            video_url="",
            steps=tuple(
                RawStep(stable_step_id(v["task"], label), label, start, end)
                for label, start, end in v["steps"]
            ),
            where=v["where"],
        )
        for vid, v in videos.items()
    ]
    return rules.ingested(path, hashlib.sha256(data).hexdigest(), raws, options, SOURCE)


def _required(path: Path, where: str, row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if value is None or value == "":
        raise damaged(path, where, name, "missing (a required field)")
    return value


__all__ = ["REQUIRED", "SOURCE", "load", "looks_like"]
