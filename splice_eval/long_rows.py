"""A row over the prediction reader's row bound (`prediction_files.MAX_ROW_BYTES`), read in
pieces in bounded memory: each of its texts (a JSON string, a CSV cell) is kept to its last
``LONG_TEXT_KEEP`` characters, where a reasoning model's final answer is, so that one
degenerate answer of 100 MB is read and scored (or found unparsed) instead of costing its
file. What is left, the row's structure and its short fields, is read exactly; a row that
is still over ``MAX_CUT_ROW_CHARS`` so cut (garbage, a million texts or cells) is no
prediction, and is reported as such (None) after being read to its end.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from splice_build.errors import UserError

LONG_TEXT_KEEP = 1024 * 1024  # characters kept from the end of each text of a longer row
MAX_CUT_ROW_CHARS = 16 * 1024 * 1024  # a longer row once its texts are cut (else skipped)


class _Tail:
    """A text read in pieces, of which only the last LONG_TEXT_KEEP characters are kept."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = self.cut = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.kept += len(text)
        if self.kept > 2 * LONG_TEXT_KEEP:
            self.value()

    def value(self) -> str:
        text = "".join(self.parts)
        if len(text) > LONG_TEXT_KEEP:
            self.cut += len(text) - LONG_TEXT_KEEP
            text = text[-LONG_TEXT_KEEP:]
        self.parts, self.kept = [text], len(text)
        return text


_OUTSIDE = re.compile(r'[^"]+')
# a run of a JSON string's characters: plain ones and whole escapes (a surrogate pair whole)
_STRING_RUN = re.compile(
    r'(?:[^"\\]+|\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}'
    r'|u[0-9a-fA-F]{4}|["\\/bfnrt]))+'
)
_ESCAPE_MAX = 12  # the longest escape (a surrogate pair), kept for the next piece when cut
_JOIN_EVERY = 4096
_CELL_COST = 64  # what a cell of a long CSV row counts for besides its text (its object)


def cut_json_row(pieces: Iterable[str]) -> tuple[str, int] | None:
    """A JSON text read in pieces, each string kept to its last LONG_TEXT_KEEP characters,
    and how many characters were cut; None when it is not JSON text this can cut (a string
    left open, a bad escape) or still over MAX_CUT_ROW_CHARS cut (what is left of the
    pieces is then not read)."""
    row = _JsonCut()
    for piece in pieces:
        if not row.feed(piece):
            return None
    if row.text is not None or row.carry:
        return None
    return "".join(row.done + row.out), row.cut


class _JsonCut:
    """`cut_json_row`'s state between pieces: the text so far (strings cut), the string
    being read, and an escape cut by a piece's end."""

    def __init__(self) -> None:
        self.done: list[str] = []  # ``out`` joined every _JOIN_EVERY parts (a million
        self.out: list[str] = []  # tiny parts would take far more memory than their text)
        self.size = self.cut = 0
        self.text: _Tail | None = None
        self.carry = ""

    def feed(self, piece: str) -> bool:
        """Take the next piece; False when the row cannot be cut (see `cut_json_row`)."""
        piece, self.carry = self.carry + piece, ""
        i = 0
        while i < len(piece):
            i = self._outside(piece, i) if self.text is None else self._inside(piece, i)
            if i < 0 or self.size > MAX_CUT_ROW_CHARS:
                return False
            if len(self.out) > _JOIN_EVERY:
                self.done.append("".join(self.out))
                self.out = []
        return True

    def _outside(self, piece: str, i: int) -> int:
        m = _OUTSIDE.match(piece, i)
        if m is None:  # a string opens
            self.text = _Tail()
            return i + 1
        self.out.append(m.group())
        self.size += m.end() - i
        return m.end()

    def _inside(self, piece: str, i: int) -> int:
        assert self.text is not None
        m = _STRING_RUN.match(piece, i)
        if m is not None:
            try:
                self.text.add(json.loads(f'"{m.group()}"'))
            except json.JSONDecodeError:  # a control character: not JSON
                return -1
            return m.end()
        if piece[i] == '"':  # the string closes
            kept = json.dumps(self.text.value(), ensure_ascii=False)
            self.out.append(kept)
            self.size, self.cut, self.text = self.size + len(kept), self.cut + self.text.cut, None
            return i + 1
        if len(piece) - i < _ESCAPE_MAX:  # an escape cut by the piece's end
            self.carry = piece[i:]
            return len(piece)
        return -1  # a bad escape: not JSON


_QUOTED_RUN = re.compile(r'(?:[^"]+|"")+')  # a quoted cell's text, doubled quotes in it


def cut_csv_row(pieces: Iterable[str], delimiter: str, where: str) -> tuple[list[str] | None, int]:
    """One CSV row read in pieces (from its first character; it ends at a line end outside
    quotes, or the pieces' end), each cell kept to its last LONG_TEXT_KEEP characters, and
    how many characters were cut; None for the cells when they are still over
    MAX_CUT_ROW_CHARS so cut (the row is read to its end all the same). Quoting as the csv
    module's strict mode reads it; a quote that is not closed where it should be raises
    naming ``where``."""
    row = _CsvCut(delimiter, where)
    for piece in pieces:
        if row.feed(piece):
            break
    else:
        if row.quoted and not row.quote_seen:
            raise UserError(
                f"{where}: a quote in the row starting on this line is never closed; check "
                "the quoting of that row"
            )
        row.end_cell()
    return (None if row.overlong else row.cells), row.cut


class _CsvCut:
    """`cut_csv_row`'s state between pieces: the cells so far, the cell being read, and
    where in its quoting the reader is."""

    def __init__(self, delimiter: str, where: str) -> None:
        self.delimiter, self.where = delimiter, where
        self.plain = re.compile('[^"\\r\\n]+')  # unquoted cells, as many as there are
        self.cells: list[str] = []
        self.cell = _Tail()
        self.cut = self.size = 0
        self.quoted = self.quote_seen = self.ended = self.overlong = False
        self.fresh = True  # at a cell's first character

    def end_cell(self) -> None:
        text = self.cell.value()
        self.cut += self.cell.cut
        self.cell, self.fresh = _Tail(), True
        self.size += len(text) + _CELL_COST
        if self.size > MAX_CUT_ROW_CHARS:  # a million cells: read on, keep none
            self.overlong, self.cells = True, []
        if not self.overlong:
            self.cells.append(text)

    def feed(self, piece: str) -> bool:
        """Take the next piece; True once the row has ended (at a line end)."""
        i = 0
        while i < len(piece) and not self.ended:
            if self.quote_seen:
                i = self._after_quote(piece, i)
            elif self.quoted:
                i = self._in_quotes(piece, i)
            else:
                i = self._outside(piece, i)
        return self.ended

    def _after_quote(self, piece: str, i: int) -> int:
        """A quote inside a quoted cell: doubled, or the cell's end."""
        self.quote_seen = False
        if piece[i] == '"':
            self.cell.add('"')
            return i + 1
        self.quoted = False
        if piece[i] not in (self.delimiter, "\r", "\n"):
            raise UserError(
                f"{self.where}: a quote in the row starting on this line is not closed where "
                f"it should be ('{self.delimiter}' expected after '\"'); check the quoting "
                "of that row"
            )
        return i

    def _in_quotes(self, piece: str, i: int) -> int:
        if i == 0 and '"' not in piece:  # a whole line inside the cell
            self.cell.add(piece)
            return len(piece)
        m = _QUOTED_RUN.match(piece, i)
        if m is None:  # a lone quote: doubled by the next piece's first, or the cell's end
            self.quote_seen = True
            return i + 1
        self.cell.add(m.group().replace('""', '"'))
        return m.end()

    def _outside(self, piece: str, i: int) -> int:
        m = self.plain.match(piece, i)
        if m is not None:  # unquoted cells: the current one's text, whole ones, a new one
            span = m.group()
            if not self.overlong:
                first, *others = span.split(self.delimiter)
                self.cell.add(first)
                for part in others:
                    self.end_cell()
                    if self.overlong:
                        break
                    self.cell.add(part)
            self.fresh = span.endswith(self.delimiter)
            return m.end()
        if piece[i] == '"':
            if self.fresh:  # a quoted cell opens
                self.quoted = True
            else:  # a quote inside an unquoted cell is text, as the csv module reads it
                self.cell.add('"')
            self.fresh = False
            return i + 1
        self.end_cell()  # a line end: the row's end
        self.ended = True
        return len(piece)
