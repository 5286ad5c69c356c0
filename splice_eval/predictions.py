"""The one format for predictions, shared by baselines, the human protocol, the model
runner, ``splice score`` and ``splice report``.

A prediction file is JSON Lines, one object per (video, config)::

    {"video_id": "4MiubN1oQkg", "config": "video_text", "model": "random",
     "raw_output": "<order>Video 2, Video 1</order>", "order": [2, 1]}

``order`` is the parsed answer in the dataset's label space (``null`` when the raw output
could not be parsed: scored as an invalid prediction). Extra keys (``usage``, ``error``,
``annotator``...) are kept and ignored by scoring.

The first line may say how the answers were produced, so that a score is never read apart
from its settings and a rerun never mixes two settings in one file::

    {"splice_metadata": {"producer": "splice run", "model": "...", "config": "video",
     "endpoint": "http://host:8000/v1", "prompt_version": "...", "clips_as": "images",
     "frames": {"fps": 1.0}, "sampling": {"max_tokens": 1024, "temperature": 0.0},
     "splice_version": "0.1.0"}}

Every writer here records one (runner, baselines, human protocol); files without it
(older ones, other tools) still read. ``raw_output`` is stored capped (``cap_raw_output``):
the first and last ``RAW_OUTPUT_KEEP`` characters of a longer answer, with a marker
between; ``order`` is parsed from the whole answer before the cap.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, read_text

REQUIRED = ("video_id", "config", "model", "raw_output", "order")
METADATA_KEY = "splice_metadata"
# Metadata that may differ between runs appending to one file: where the server was and
# which release asked do not change what the answers mean; everything else does.
VOLATILE_METADATA = frozenset({"endpoint", "splice_version", "created"})
RAW_OUTPUT_KEEP = 16 * 1024  # characters kept from each end of a longer raw output


@dataclass(frozen=True)
class Prediction:
    video_id: str
    config: str
    model: str
    raw_output: str | None
    order: list[int] | None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        data = asdict(self)
        extra = data.pop("extra")
        return json.dumps({**data, **extra}, ensure_ascii=False)


def project_version() -> str:
    """The installed splice-benchmark version, recorded in every file's metadata."""
    import importlib.metadata

    try:
        return importlib.metadata.version("splice-benchmark")
    except importlib.metadata.PackageNotFoundError:  # a source tree, not installed
        return "unknown"


def cap_raw_output(text: str | None, keep: int = RAW_OUTPUT_KEEP) -> tuple[str | None, int]:
    """``text`` cut to its first and last ``keep`` characters with a marker between, and
    how many characters were cut (0 when it was short enough to keep whole)."""
    if text is None or len(text) <= 2 * keep:
        return text, 0
    cut = len(text) - 2 * keep
    marker = f"\n[... {cut} characters cut by splice: raw_output keeps {keep} from each end ...]\n"
    return text[:keep] + marker + text[-keep:], cut


def metadata_line(metadata: dict[str, Any]) -> str:
    return json.dumps({METADATA_KEY: metadata}, ensure_ascii=False, sort_keys=True)


def metadata_conflict(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The first setting (by name) on which two files' metadata differ, or None."""
    for key in sorted((set(old) | set(new)) - VOLATILE_METADATA):
        if old.get(key) != new.get(key):
            return f"{key} {old.get(key)!r} (in the file) vs {new.get(key)!r} (this run)"
    return None


def describe_metadata(metadata: dict[str, Any] | None) -> str:
    """One line saying how a file's answers were produced, for ``score`` and ``report``."""
    if not metadata:
        return "no metadata line: how these answers were produced is not recorded"
    shown = []
    for key in sorted(metadata, key=lambda k: (k not in _SHOWN_FIRST, _SHOWN_FIRST.get(k, 0), k)):
        value = metadata[key]
        if value is None:
            continue
        if isinstance(value, dict):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        shown.append(f"{key} {value}")
    return "; ".join(shown)


_SHOWN_FIRST = {"producer": 0, "model": 1, "config": 2, "endpoint": 3}


def read_metadata(path: str | Path) -> dict[str, Any] | None:
    """The file's metadata line, or None when it has none."""
    path = Path(path)
    for line in read_text(path, "prediction file").split("\n"):
        if line.strip():
            return _metadata_of(line, path)
    return None


def _metadata_of(line: str, path: Path) -> dict[str, Any] | None:
    if METADATA_KEY not in line:
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None  # reported as a bad line by the reader
    if not isinstance(data, dict) or set(data) != {METADATA_KEY}:
        return None
    if not isinstance(data[METADATA_KEY], dict):
        raise UserError(f"{path}:1: {METADATA_KEY} must be a JSON object")
    return data[METADATA_KEY]


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read a JSONL prediction file; a bad line raises naming the file and line number."""
    return list(iter_predictions(path))


def iter_predictions(path: str | Path) -> Iterator[Prediction]:
    """The predictions of a file (its metadata line skipped; see ``read_metadata``)."""
    path = Path(path)
    # split on "\n" only: raw_output may hold U+2028 and other line breaks of str.splitlines
    first = True
    for lineno, line in enumerate(read_text(path, "prediction file").split("\n"), 1):
        if not line.strip():
            continue
        if first and _metadata_of(line, path) is not None:
            first = False
            continue
        first = False
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise UserError(f"{path}:{lineno}: expected a JSON object")
        if METADATA_KEY in data:
            raise UserError(f"{path}:{lineno}: a metadata line belongs on the first line")
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise UserError(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
        order = data["order"]
        if order is not None and not (
            isinstance(order, list)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in order)
        ):
            raise UserError(f"{path}:{lineno}: field 'order' must be a list of ints or null")
        yield Prediction(
            video_id=str(data["video_id"]),
            config=str(data["config"]),
            model=str(data["model"]),
            raw_output=data["raw_output"],
            order=order,
            extra={k: v for k, v in data.items() if k not in REQUIRED},
        )


def write_predictions(
    path: str | Path,
    predictions: Iterable[Prediction],
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write predictions atomically (a partial file never replaces a good one), after a
    metadata line when ``metadata`` is given."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        if metadata is not None:
            fh.write(metadata_line(metadata) + "\n")
        for p in predictions:
            fh.write(p.to_json() + "\n")
    tmp.replace(path)
    return path
