"""Reading a source's JSON file, shared by the JSON adapters: the whole file refused in one
line when it is not JSON (truncated), and a required field of an entry named when missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, decode_text, read_bytes
from splice_build.sources.base import damaged, seconds


def read_json(path: Path, what: str) -> tuple[Any, bytes]:
    """The JSON value of ``path`` and its bytes; UserError naming the line where it stops."""
    data = read_bytes(path, what)
    text = decode_text(data, path, what)
    try:
        return json.loads(text), data
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path} line {exc.lineno} column {exc.colno}: not a JSON {what} ({exc.msg}; is it "
            "truncated?); the file is refused whole"
        ) from None
    except RecursionError:
        raise UserError(f"{path}: nested too deeply to be a {what}") from None


def field(
    path: Path, entry: str, raw: Any, name: str, kind: type | tuple[type, ...], where: str = ""
) -> Any:
    """``raw[name]``, which must be there and of ``kind``; else the file is damaged (the
    field named ``<where>.<name>``: ``annotations[2].segment``)."""
    shown = f"{where}.{name}" if where else name
    if not isinstance(raw, dict):
        what = f"not an object ({type(raw).__name__})"
        raise damaged(path, entry, where or name, what)
    if name not in raw or raw[name] is None:
        raise damaged(path, entry, shown, "missing (a required field)")
    value = raw[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise damaged(path, entry, shown, f"{value!r} is not {_names(kind)}")
    return value


def time_field(path: Path, entry: str, raw: Any, name: str, where: str = "") -> float:
    """``raw[name]`` as seconds (`base.seconds`: a clock time like ``0:05`` is named so)."""
    value = field(path, entry, raw, name, (int, float, str), where)
    return seconds(value, path, entry, f"{where}.{name}" if where else name)


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {"str": "text", "list": "a list", "dict": "an object", "int": "an integer"}
    return " or ".join(words.get(k.__name__, "a number") for k in kinds)


def head(path: Path, size: int = 1 << 16) -> str:
    """The first ``size`` bytes of a file as text, for `looks_like` ("" for a folder)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


__all__ = ["field", "head", "read_json", "time_field"]
