"""How a prediction file's bytes are read (`splice_eval.predictions` says what they mean):
streamed with a bound per row, so that no file a user hands over (a 1 GB file of garbage, a
reasoning model's log of hundreds of MB, one degenerate answer of 100 MB, a 300 kB .xlsx
whose one cell unpacks to 300 MB, a quote left open) makes a command hold more than a row
at a time, costs the other rows, or shifts rows onto other videos. Each bound is said where
it acts.

- JSONL, CSV and TSV files: no bound on the file; read a line at a time, a row of at most
  ``MAX_ROW_BYTES`` read whole (a cell may be that long: Python's csv stops at 131,072
  characters unless told otherwise, which it is only while it reads a row of ours);
- a longer row is read on in pieces of ``PIECE_BYTES``, each of its texts (a JSON string, a
  CSV cell) kept to its last ``LONG_TEXT_KEEP`` characters, where a final answer is
  (`long_rows`); it is read so and a warning names it and what was cut. One that is
  still over ``MAX_CUT_ROW_CHARS`` once cut (not a prediction: garbage, a list
  of a million texts) is skipped with a warning naming it; either way the file's other
  rows are read;
- CSV and TSV quoting is strict: a quote left open is refused naming the row it opens, and
  so is a quoted cell holding lines that read as rows of their own (a quote left open that
  closes at the end of a later line);
- a ``.json`` list up to ``MAX_TABLE_BYTES``, read whole, its records decoded one at a time;
- an ``.xlsx`` of at most ``MAX_TABLE_BYTES`` whose parts unpack to at most that (the sizes
  its zip directory declares, which ``zipfile`` never reads past), streamed by openpyxl.
"""

from __future__ import annotations

import codecs
import csv
import itertools
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from splice_build.errors import UserError, open_user_file, read_text, require, size_words
from splice_eval.long_rows import LONG_TEXT_KEEP, cut_csv_row

MAX_ROW_BYTES = 4 * 1024 * 1024  # a line (JSONL) or a row (CSV, TSV, a JSON record) read whole
PIECE_BYTES = 1024 * 1024  # how a longer line is read on
MAX_TABLE_BYTES = 16 * 1024 * 1024  # a .json list (read whole); an .xlsx, and its parts unpacked
NO_FILE_BOUND = sys.maxsize  # JSONL, CSV, TSV: streamed, bounded per row
WHAT = "prediction file"
# Kept in a row read from a longer one: how many characters its texts lost (extra field).
ROW_CUT = "row_cut_chars"


def warn(message: str) -> None:
    """A row read other than whole, or skipped: said on stderr, the command goes on."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


class LongLine:
    """A line over MAX_ROW_BYTES, as ``lines`` yields it: read on only through ``pieces``
    (text pieces of at most PIECE_BYTES, the whole line from its start, its end included);
    what is not read by the time ``lines`` goes on is skipped unread."""

    def __init__(self, path: Path, lineno: int, first: bytes, fh: BinaryIO):
        self.path, self.lineno, self.first, self.fh = path, lineno, first, fh
        self.size = len(first)
        self.ended = first.endswith(b"\n")

    def _raw(self) -> Iterator[bytes]:
        if self.first:
            first, self.first = self.first, b""
            yield first
        while not self.ended:
            piece = self.fh.readline(PIECE_BYTES)
            if not piece:
                self.ended = True
                return
            self.size += len(piece)
            self.ended = piece.endswith(b"\n")
            yield piece

    def pieces(self) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8-sig" if self.lineno == 1 else "utf-8")()
        for piece in self._raw():
            try:
                yield decoder.decode(piece, final=self.ended)
            except UnicodeDecodeError as exc:
                raise UserError(
                    f"{self.path} line {self.lineno}: not UTF-8 (byte 0x{piece[exc.start]:02x}); "
                    f"save the {WHAT} as UTF-8"
                ) from None

    def skip(self) -> None:
        for _ in self._raw():
            pass


def lines(path: Path) -> Iterator[tuple[int, str | LongLine]]:
    """The file's lines (``\\n`` ends one: raw_output may hold U+2028 and the other breaks
    of str.splitlines) numbered from 1, read one at a time: each as text when it is at most
    MAX_ROW_BYTES, else as a `LongLine` to read on in pieces."""
    with open_user_file(path, WHAT, NO_FILE_BOUND) as fh:
        for lineno in itertools.count(1):
            line = fh.readline(MAX_ROW_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_ROW_BYTES:
                long = LongLine(path, lineno, line, fh)
                yield lineno, long
                long.skip()
                continue
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
        with zipfile.ZipFile(open_user_file(path, WHAT, MAX_TABLE_BYTES)) as archive:
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


class _LongRow(Exception):
    """A CSV row over MAX_ROW_BYTES: read on by `cut_csv_row` from its first line."""


class _RowLines:
    """A file's lines for the csv module, counting the characters of the row being read:
    a row that runs over MAX_ROW_BYTES (a long cell, a quote left open running on) stops
    the csv module (`_LongRow`), its lines so far kept, to be read on by `cut_csv_row`."""

    def __init__(self, path: Path):
        self.path, self.lines = path, lines(path)
        self.start = self.lineno = 1
        self.size = 0
        self.row: list[str | LongLine] = []  # the lines of the row being read

    def __iter__(self) -> Iterator[str]:
        for lineno, line in self.lines:
            self.lineno = lineno
            self.row.append(line)
            if isinstance(line, LongLine):
                raise _LongRow()
            self.size += len(line)
            if self.size > MAX_ROW_BYTES:
                raise _LongRow()
            yield line

    def row_pieces(self) -> Iterator[str]:
        """The row being read from its first line, then the lines after it, for as long as
        they are asked for (a reader of one row stops at its end: a line's end)."""
        for line in self.row:
            yield from line.pieces() if isinstance(line, LongLine) else (line,)
        for lineno, line in self.lines:
            self.lineno = lineno
            yield from line.pieces() if isinstance(line, LongLine) else (line,)

    def next_row(self) -> None:
        self.start, self.size, self.row = self.lineno + 1, 0, []


def csv_records(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """A CSV or TSV file's rows under its header row, streamed. Strict quoting: a quote
    left open (which would shift later answers onto other videos) is refused naming the
    line of the row it opens in. A cell may be as long as a row (Python's csv stops at
    131,072 characters unless told otherwise); a longer row is read by `cut_csv_row`, with
    a warning (its cut is kept in the row as ``ROW_CUT``)."""
    header: list[str] | None = None
    for start, cells, cut in _csv_rows(path, delimiter):
        if header is None:
            header = cells
            continue
        _check_swallowed_rows(header, cells, delimiter, f"{path}:{start}")
        row: dict[str, Any] = dict(zip(header, cells, strict=False))
        if cut:
            row[ROW_CUT] = cut
        yield start, row


_ID_COLUMNS = ("video_id", "video")  # the column a row's video is named in (else the first)
_ID_SHAPE = re.compile(r"[\w\-/.]+")


def _check_swallowed_rows(header: list[str], cells: list[str], delimiter: str, where: str) -> None:
    """Refuse a row whose quoted cell holds lines that read as rows of their own: a quote
    left open that closes at the end of a later line (strict quoting sees nothing wrong)
    swallowed the rows between. Such a line has at least the header's cells, its video cell
    an id of the row's own id's shape (as long, no spaces): prose ("First, the pan") never
    has one."""
    names = [name.strip() for name in header]
    column = next((names.index(c) for c in _ID_COLUMNS if c in names), 0)
    own = cells[column].strip() if column < len(cells) else ""
    if len(header) < 2 or not _ID_SHAPE.fullmatch(own):
        return
    for cell in cells:
        for line in cell.splitlines()[1:] if "\n" in cell else ():
            try:
                parts = next(csv.reader([line], delimiter=delimiter), [])
            except csv.Error:
                continue
            other = parts[column].strip() if len(parts) >= len(header) else ""
            if len(other) == len(own) and _ID_SHAPE.fullmatch(other):
                raise UserError(
                    f"{where}: the quoted cell of the row starting on this line runs on over "
                    f"a line that reads as a row of its own (video {other!r}): is a quote "
                    "left open? Check the quoting of that row"
                )


def _csv_rows(path: Path, delimiter: str) -> Iterator[tuple[int, list[str], int]]:
    """Each row's first line, its cells, and how many characters `cut_csv_row` cut."""
    lines = _RowLines(path)
    while True:
        reader = csv.reader(lines, delimiter=delimiter, strict=True)
        limit = csv.field_size_limit(MAX_ROW_BYTES)  # the process's own, put back at once
        cut = 0
        try:
            cells = next(reader, None)
        except csv.Error as exc:
            raise UserError(
                f"{path}:{lines.start}: a quote in the row starting on this line is not "
                f"closed where it should be ({exc}); check the quoting of that row"
            ) from None
        except _LongRow:
            where = f"{path}:{lines.start}"
            cells, cut = cut_csv_row(lines.row_pieces(), delimiter, where)
            if cells is None:
                warn(
                    f"{where}: a row that is no prediction even with each cell kept to its "
                    f"last {size_words(LONG_TEXT_KEEP)} (too many cells): skipped, its video "
                    "not answered"
                )
                lines.next_row()
                continue
            warn(
                f"{where}: a row over the {size_words(MAX_ROW_BYTES)} read whole; read with "
                f"each cell kept to its last {size_words(LONG_TEXT_KEEP)} (where a final "
                f"answer is): {cut} characters cut"
            )
        finally:
            csv.field_size_limit(limit)
        if cells is None:
            return
        start = lines.start
        lines.next_row()
        yield start, cells, cut


def starts_a_list(path: Path) -> bool:
    """Whether the file's first character that is not white space opens a JSON list."""
    with open_user_file(path, WHAT, NO_FILE_BOUND) as fh:
        while chunk := fh.read(64 * 1024):
            start = chunk.decode("utf-8-sig", "replace").lstrip()
            if start:
                return start.startswith("[")
    return False
