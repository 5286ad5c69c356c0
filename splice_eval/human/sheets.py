"""The filled ``folder,order`` sheets of ``splice annotate``, read line by line.

Annotators fill them by hand, so every malformed line is refused naming its file and
line (``SheetError``) rather than guessed at. This reads the organiser's own format (with
``unk`` and best guesses), not model output: model answers go through
``splice_metric.parse_order`` only.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from splice_build.errors import UserError, read_text

SHEET_HEADER = ("folder", "order")
UNK = "unk"


class SheetError(UserError):
    """A problem in a filled sheet; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class SheetAnswer:
    folder: int
    unk: bool
    order: tuple[int, ...] | None  # part numbers, first to last; None for a bare unk
    raw: str
    where: str  # "file:line"


_ORDER_RE = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")


def parse_cell(text: str) -> tuple[bool, tuple[int, ...] | None]:
    """``[2, 3, 1]`` / ``unk`` / ``unk [2, 3, 1]`` -> (unk, parts). Raises ValueError.

    This reads the organiser's own sheet format (with ``unk`` and best guesses), not model
    output; model answers go through ``splice_metric.parse_order`` only."""
    s = text.strip()
    unk = s.lower().startswith(UNK)
    if unk:
        s = s[len(UNK) :].strip()
        if not s:
            return True, None
    m = _ORDER_RE.fullmatch(s)
    if not m:
        raise ValueError(f"order {text.strip()!r} is not like [2, 3, 1], unk or unk [2, 3, 1]")
    return unk, tuple(int(x) for x in m.group(1).split(","))


def read_sheet(path: str | Path) -> list[SheetAnswer]:
    """Parse one filled sheet; every malformed line raises naming file and line."""
    path = Path(path)
    answers: list[SheetAnswer] = []
    seen: dict[int, str] = {}
    text = read_text(path, "sheet")  # UTF-8, BOM accepted; Latin-1 names the line
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise SheetError(f"{path}: not a readable CSV sheet ({exc})") from None
    if not rows or tuple(c.strip().lower() for c in rows[0][:2]) != SHEET_HEADER:
        raise SheetError(f"{path}:1: header must be 'folder,order'")
    for lineno, row in enumerate(rows[1:], 2):
        where = f"{path}:{lineno}"
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise SheetError(f"{where}: expected 2 fields (folder,order), got {len(row)}")
        folder_text, cell = row
        try:
            folder = int(folder_text.strip())
        except ValueError:
            raise SheetError(f"{where}: folder {folder_text!r} is not a number") from None
        if not cell.strip():
            raise SheetError(f"{where}: folder {folder} has no order (write [..] or unk)")
        try:
            unk, order = parse_cell(cell)
        except ValueError as exc:
            raise SheetError(f"{where}: folder {folder}: {exc}") from None
        if folder in seen:
            raise SheetError(f"{where}: folder {folder} already answered at {seen[folder]}")
        seen[folder] = where
        answers.append(SheetAnswer(folder, unk, order, cell.strip(), where))
    return answers


def format_cell(unk: bool, order: tuple[int, ...] | None) -> str:
    """The cell ``parse_cell`` reads back: ``[2, 3, 1]``, ``unk`` or ``unk [2, 3, 1]``.

    Written by the annotation app, so a sheet saved from the browser is byte for byte the
    kind an annotator types."""
    if order is None:
        if not unk:
            raise ValueError("an answer needs an order or unk")
        return UNK
    text = "[" + ", ".join(str(p) for p in order) + "]"
    return f"{UNK} {text}" if unk else text
