"""How a prediction file's bytes are read (`splice_eval.predictions` says what they mean):
bounded and streamed, so that no file a user hands over (a 1 GB file of garbage, a 300 kB
.xlsx whose one cell unpacks to 300 MB, a quote left open) makes a command hold more than a
row at a time, or read rows shifted onto other videos. Each bound is said in its refusal.

- JSONL, CSV and TSV files up to ``MAX_FILE_BYTES``, read a line at a time, a line or a
  row at most ``MAX_ROW_BYTES`` (a cell may be that long: Python's csv stops at 131,072
  characters unless told otherwise, which it is only while it reads a row of ours);
- CSV and TSV quoting is strict: a quote left open is refused naming the row it opens;
- a ``.json`` list up to ``MAX_TABLE_BYTES``, its records decoded one at a time;
- an ``.xlsx`` whose parts unpack to at most ``MAX_TABLE_BYTES`` (the sizes its zip
  directory declares, which ``zipfile`` never reads past), streamed by openpyxl.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, open_user_file, read_text, require, size_words

MAX_FILE_BYTES = 64 * 1024 * 1024  # a JSONL, CSV or TSV file
MAX_ROW_BYTES = 4 * 1024 * 1024  # one line (JSONL) or one row (CSV, TSV, a JSON record)
MAX_TABLE_BYTES = 16 * 1024 * 1024  # a .json list (read whole); an .xlsx's unpacked parts
WHAT = "prediction file"


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """The file's lines (``\\n`` ends one: raw_output may hold U+2028 and the other breaks
    of str.splitlines) numbered from 1, read one at a time, each at most MAX_ROW_BYTES."""
    with open_user_file(path, WHAT, MAX_FILE_BYTES) as fh:
        for lineno in itertools.count(1):
            line = fh.readline(MAX_ROW_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_ROW_BYTES:
                raise UserError(
                    f"{path}:{lineno}: a line over {size_words(MAX_ROW_BYTES)}, more than "
                    "one prediction may be"
                )
            try:
                yield lineno, line.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(
                    f"{path} line {lineno}: not UTF-8 (byte 0x{line[exc.start]:02x}); save the "
                    f"{WHAT} as UTF-8"
                ) from None


def xlsx_records(path: Path, values: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """The first sheet's rows, streamed, once its parts are known to unpack to at most
    MAX_TABLE_BYTES (a small .xlsx may unpack to gigabytes; zipfile yields no more than an
    entry declares). ``values``: the values saved with formulas (else the formulas)."""
    try:
        with zipfile.ZipFile(open_user_file(path, WHAT, MAX_FILE_BYTES)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, EOFError):
        raise UserError(f"{path}: not a readable .xlsx file (not a zip archive)") from None
    if unpacked > MAX_TABLE_BYTES:
        raise UserError(
            f"{path}: unpacks to {size_words(unpacked)}, over the {size_words(MAX_TABLE_BYTES)} "
            "an .xlsx prediction file may hold"
        )
    openpyxl = require("openpyxl", "vlmeval", f"reading {path.name}")
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=values)
    except Exception as exc:  # openpyxl raises zipfile, KeyError and its own errors alike
        raise UserError(f"{path}: not a readable .xlsx file ({type(exc).__name__})") from None
    try:
        lines = book.worksheets[0].iter_rows(values_only=True)
        header = next(lines, None) or ()
        for number, cells in enumerate(lines, 2):
            if any(v is not None for v in cells):
                yield number, dict(zip(header, cells, strict=False))
    finally:
        book.close()


def json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a .json list, decoded one at a time (a list of a million tiny
    records never becomes a million objects at once)."""
    text = read_text(path, WHAT, MAX_TABLE_BYTES)
    decoder = json.JSONDecoder()
    space = re.compile(r"\s*")
    pos = space.match(text, 0).end() + 1  # past the "[" is_table saw
    number = 0
    while True:
        pos = space.match(text, pos).end()
        if text.startswith("]", pos) and number == 0:
            pos += 1
            break
        number += 1
        try:
            record, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        except RecursionError:
            raise UserError(f"{path}: record {number}: nested too deeply") from None
        if not isinstance(record, dict):
            raise UserError(f"{path}: expected a JSON list of records (VLMEvalKit's json)")
        yield number, record
        pos = space.match(text, pos).end()
        if text.startswith(",", pos):
            pos += 1
        elif text.startswith("]", pos):
            pos += 1
            break
        else:
            raise UserError(f"{path}: not valid JSON (expected ',' or ']' after record {number})")
    if text[pos:].strip():
        raise UserError(f"{path}: not valid JSON (text after the list's end)")


class _RowLines:
    """A file's lines for the csv module, counting the characters of the row being read,
    so that one row (a quote left open runs on to the file's end) stays within a bound."""

    def __init__(self, path: Path):
        self.path, self.lines = path, lines(path)
        self.start = self.lineno = 1
        self.size = 0

    def __iter__(self) -> Iterator[str]:
        for lineno, line in self.lines:
            self.lineno = lineno
            self.size += len(line)
            if self.size > MAX_ROW_BYTES:
                raise UserError(
                    f"{self.path}:{self.start}: the row starting on this line runs over "
                    f"{size_words(MAX_ROW_BYTES)} (is a quote in it left open?)"
                )
            yield line

    def next_row(self) -> None:
        self.start, self.size = self.lineno + 1, 0


def csv_records(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """A CSV or TSV file's rows under its header row, streamed. Strict quoting: a quote
    left open (which would shift later answers onto other videos) is refused naming the
    line of the row it opens in. A cell may be as long as a row (Python's csv stops at
    131,072 characters unless told otherwise)."""
    lines = _RowLines(path)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    while True:
        limit = csv.field_size_limit(MAX_ROW_BYTES)  # the process's own, put back at once
        try:
            cells = next(reader, None)
        except csv.Error as exc:
            raise UserError(
                f"{path}:{lines.start}: a quote in the row starting on this line is not "
                f"closed where it should be ({exc}); check the quoting of that row"
            ) from None
        finally:
            csv.field_size_limit(limit)
        if cells is None:
            return
        start = lines.start
        lines.next_row()
        if header is None:
            header = cells
            continue
        yield start, dict(zip(header, cells, strict=False))


def starts_a_list(path: Path) -> bool:
    """Whether the file's first character that is not white space opens a JSON list."""
    with open_user_file(path, WHAT, MAX_FILE_BYTES) as fh:
        while chunk := fh.read(64 * 1024):
            start = chunk.decode("utf-8-sig", "replace").lstrip()
            if start:
                return start.startswith("[")
    return False
