"""The readers of order answers that list the clips: a plain list in mention order
(``Video 3, Video 1, Video 2``, ``3 -> 1 -> 2``, ``c, a, b``, one label a line), and items,
one clip each, perhaps after a marker (``1.``, ``second:``: a position) and before a caption.

A list is read in mention order only where it is plain: between and around its labels stand
only separators (commas, arrows, "then", "followed by", line breaks, list markers), masked
captions, and after the last label the end of its sentence or a reason ("because ...").
Any other word there (a position, an ordinal, a direction, a verb) is not this reader's form:
it returns None, and the answer is unparsed unless a reader of that form understands it."""

from __future__ import annotations

import re
from typing import Any

from .order_words import (
    CAPTION_MARK,
    NUMBERED_REFERENCE,
    ORDINALS,
    POSITION_ONLY,
    PRESENTED,
    REFERENCE,
    head_understood,
    position,
    same_kind,
)

# "Video 1 comes after Video 2": references related in prose, not listed in order
_RELATION_BEFORE = re.compile(
    r"\b(?:after|before|follows?|followed|precedes?|preceded|preceding|following)\W*$",
)
_RELATION_AFTER = re.compile(
    r"^\W*(?:(?:is|comes|came|happens|happened|occurs|goes)\W+)?"
    r"(?:last|later|earlier|after|before|follows?|precedes?)\b",
)
_ORDINAL_WORDS = "|".join(ORDINALS)
# what may stand between two clips of a plain list: "Video 2 -> Video 1", "**Video 2**, then
# Video 1", a masked caption, and the next item's marker of a numbered list or table ("\n2.
# Video 1", "Second: Video 1", "| 2 | Video 1")
_LIST_MARK = (
    rf"(?:(?:step|position|place)[ \t]*)?(?:\d+(?:st|nd|rd|th)?|{_ORDINAL_WORDS})"
    r"[ \t]*[.):|]"
)
_GAP_CHARS = rf"[\s,;|>→⟶➔*()\[\]\"'`–—{CAPTION_MARK}-]"
_LIST_GAP = re.compile(
    rf"(?:{_GAP_CHARS}|\b(?:then|and|next|finally|followed[ \t]+by)\b|(?<![\w.]){_LIST_MARK})*"
)
# after the first clip only: "Video 3 first, then Video 1, then Video 2"
_FIRST_GAP = re.compile(rf"[ \t]*\bfirst\b{_LIST_GAP.pattern}")


def _listed(text: str, left: re.Match, right: re.Match, first: bool) -> bool:
    """Whether only separators stand between two clips of a list (``first``: ``left`` is
    the list's first clip, which may be called first)."""
    if _LIST_GAP.fullmatch(text, left.end(), right.start()):
        return True
    return first and _FIRST_GAP.fullmatch(text, left.end(), right.start()) is not None


# before a plain list's first label: nothing but marks, or "first"
PLAIN_LEAD = re.compile(rf"(?:{_GAP_CHARS}|[:.]|\bfirst\b|(?<![\w.]){_LIST_MARK})*")
# after its last label: marks, then the end, a sentence's end or a reason
_REASON = r"because|since|as|given|which|so|this|that|due|based|i|it|these|they|the"
PLAIN_TAIL = re.compile(
    rf"(?:{_GAP_CHARS}|[:])*(?:$|[.!?](?:\s|$)|(?:\b(?:{_REASON})\b))",
)


def plain_around(block: str, start: int, end: int, lead_from: int = 0) -> bool:
    """Whether only separators stand before ``start`` (from ``lead_from``) and, after
    ``end``, only marks up to the end, a sentence end or a reason."""
    return bool(PLAIN_LEAD.fullmatch(block, lead_from, start)) and bool(
        PLAIN_TAIL.match(block, end)
    )


def from_references(block: str, listed: bool = False) -> list[int] | None:
    """The clips a block names, in order, when they form one plain list (the numbered ones
    when there are any, so "clips" or "part a" in prose is no clip "s" or "a" beside "Video
    2"). Clips related in prose are refused. ``listed``: untagged text, which must name
    each clip once and not as presented."""
    matches = list(REFERENCE.finditer(block))
    matches = [m for m in matches if m.group(1).isdecimal()] or matches
    if not matches:
        return None
    for left, right in zip(matches, matches[1:], strict=False):
        gap = block[left.end() : right.start()]
        if _RELATION_BEFORE.search(gap[-40:]) or _RELATION_AFTER.match(gap[:40]):
            return []
        if not _listed(block, left, right, left is matches[0]):
            return None
    if not plain_around(block, matches[0].start(), matches[-1].end()):
        return None
    order = same_kind([m.group(1) for m in matches])
    if not listed or not order:
        return order  # else one list, of each clip once, not the order shown ("shown as: ...")
    shown = PRESENTED.search(block, max(0, matches[0].start() - 80), matches[0].start())
    return None if shown or len(set(order)) < len(order) else order


# --- items, one clip each, perhaps captioned ---------------------------------------------------

# "1. Video 2 - clean bathtub", "second: Video 1", "Video 3 - [~~~]": an item is a clip named
# after an optional marker, then nothing, or a caption after "-", ":" or a bracket
_LEAD = re.compile(
    r"[ \t]*(?:(?:and|then|next|finally)\b[ \t]*)?(?:[-*•#>]+[ \t]*)?"
    rf"(?:\(?(?:(?:step|position|place)[ \t]*)?(?P<mark>\d{{1,3}}|{_ORDINAL_WORDS})(?:st|nd|rd|th)?"
    r"[ \t]*[.):–—-][ \t]*)?[*\"'`]*"
)
_CAPTION = re.compile(r"[*\"'`]*[ \t]*(?:[-–—:(\[]|$)")
_PLAIN = re.compile(rf"[\s,;|>→⟶➔*()\[\]\"'`.–—{CAPTION_MARK}-]*")
# what parts two items of a line: the first's caption, a separator, the next one's marker
_SEPARATOR = re.compile(r"[,;|]|->|→|=>|\bthen\b|\band\b")
_POSITION_BRACKET = re.compile(
    rf"{REFERENCE.pattern}[*\"'`]*[ \t]*(?:[-–—:][ \t]*)?[\[(](?P<inside>[^\])\n]{{0,40}})[\])]"
)


Run = tuple[list[int], int, int, bool]  # order ([]: refused), start, end, understood?


def item_runs(block: str, statement: Any) -> list[Run]:
    """The lists of items of a block, each with where its lines start and end: one clip per
    item, items parted by a separator or a line, each perhaps after a marker (``1.``,
    ``1)``, ``second:``: then a position, and the clips are placed by it) and before a
    caption (free text, read as nothing). Claimed only when some item has a caption or a
    marker, and not when prose ends the block (the clips described, then an order stated).
    A list restated as presented (after "presented as", "shown") is none; one that starts
    mid-line after words a statement's head may not have is only an order offered (not
    understood). ``statement``: the pattern of a stated order's cue."""
    if any(POSITION_ONLY.fullmatch(m.group("inside")) for m in _POSITION_BRACKET.finditer(block)):
        return [([], 0, len(block), True)]  # "Video 3 (2nd)" not one of a full set: refused
    numbered = NUMBERED_REFERENCE.search(block) is not None
    runs: list[list[tuple[str, str | None]]] = [[]]
    spans: list[list[int]] = [[0, 0]]
    heard: list[tuple[bool, bool]] = [(False, True)]  # per run: shown?, understood?
    claimed = prose_last = ended = described = False
    offset, prose = 0, ""
    for line in block.split("\n"):
        line_start, offset = offset, offset + len(line) + 1
        refs = [m for m in REFERENCE.finditer(line) if m.group(1).isdecimal() or not numbered]
        got = _line_items(line, refs) if refs else None
        if got == "refused":
            return [([], line_start, line_start + len(line), True)]
        if got is None:  # a line of prose (or a clip named in it) ends a list
            if line.strip():
                runs.append([]), spans.append([line_start, line_start]), heard.append(heard[-1])
                prose = line
            prose_last = prose_last or bool(refs) or statement.search(line) is not None
            continue
        items, captioned, mid_line = got
        marked = items[0][1] is not None
        # a list starts mid-line after prose, and ends with its line; markers start another
        if mid_line or ended or (runs[-1] and (runs[-1][-1][1] is not None) != marked):
            runs.append([]), spans.append([line_start, line_start]), heard.append(heard[-1])
        if not runs[-1]:  # the words a list starts after: a statement's head, or "shown as"
            prefix = line[: refs[0].start()] if mid_line else prose
            understood = not mid_line or head_understood(prefix)
            heard[-1] = (PRESENTED.search(prefix) is not None, understood)
            spans[-1][0] = line_start
        ended, described = mid_line, captioned and (described or not runs[-1])
        described &= line.rstrip().endswith(".")  # "Video 1: The man lifts the car."
        claimed |= captioned or any(mark for _, mark in items)
        runs[-1] += items
        spans[-1][1] = line_start + len(line)
        prose_last, prose = False, ""
    found = [
        (_run_order(run) or [], start, end, understood)
        for run, (start, end), (shown, understood) in zip(runs, spans, heard, strict=True)
        if len(run) > 1 and not shown
    ]
    final = found[-1][0] if found else None
    if not claimed or prose_last or (described and final == sorted(final or [])):
        return []  # not items, or clips described as shown
    return found


def _line_items(line: str, refs: list[re.Match]) -> Any:
    """A line's items ([(clip, marker)], captioned?, starts mid-line?), None for prose, or
    "refused" for a captioned line whose items cannot be told apart."""
    lead = _LEAD.fullmatch(line, 0, refs[0].start())
    items = [(refs[0].group(1), lead and lead.group("mark"))]
    captioned = False
    for left, right in zip(refs, refs[1:], strict=False):
        cut = None  # the last separator between them (one pass: no backtracking)
        for cut in _SEPARATOR.finditer(line, left.end(), right.start()):  # noqa: B007
            pass
        next_lead = cut and _LEAD.fullmatch(line, cut.end(), right.start())
        kind = _caption_kind(line[left.end() : cut.start()]) if next_lead else "prose"
        if kind == "prose":
            return "refused" if _CAPTION.match(line, left.end()) else None
        captioned |= kind == "caption"
        items.append((right.group(1), next_lead.group("mark")))
    kind = _caption_kind(line[refs[-1].end() :])
    if kind == "prose":
        return None
    return items, captioned or kind == "caption", lead is None


def _caption_kind(body: str) -> str:
    if _PLAIN.fullmatch(body):
        return "plain"
    return "caption" if _CAPTION.match(body) else "prose"


def _run_order(run: list[tuple[str, str | None]]) -> list[int] | None:
    labels, marks = same_kind([clip for clip, _ in run]), [mark for _, mark in run]
    if labels is None or not any(marks) or not all(marks):
        return labels if labels is None or not any(marks) else None
    at = [position(mark, len(run)) for mark in marks]
    if sorted(at) != list(range(1, len(run) + 1)):
        return None
    order = [0] * len(run)
    for label, place in zip(labels, at, strict=True):
        order[place - 1] = label
    return order


# --- labels in a row --------------------------------------------------------------------------

# a dash separates only after a label or a space: "3-1-2", "3 - 1", never "-1"
_SEPARATORS = re.compile(r"(?:->|=>|→|⟶|➔|>|,|;|\||\s|(?<=[\w\s])[-–—](?=[\w\s]))+")
_BRACKETS = re.compile(rf"[\[\](){{}}\"'`*${CAPTION_MARK}]")  # and masked captions, $\boxed{{}}$
_FILLER = frozenset({"then", "and", "finally", "next", "first", "followed", "by"})
_SEQUENCE_MAX = 2000  # characters: longer text is never a plain sequence (nor split up)
_LINE_START = re.compile(r"^[\s\-*•>#]*(\d+|[a-z])(?![a-z0-9.])")


def from_sequence(block: str) -> list[int] | None:
    """Labels in a row and nothing else (``3, 1, 2``, ``[3 -> 1 -> 2]``, ``c a b``)."""
    if len(block) > _SEQUENCE_MAX and len(block.strip()) > _SEQUENCE_MAX:
        return None
    tokens = _SEPARATORS.split(_BRACKETS.sub(" ", block.replace("\\boxed", " ")))
    tokens = [t for t in tokens if t and t not in _FILLER]
    readable = all(t.isdecimal() or (len(t) == 1 and t.isascii() and t.isalpha()) for t in tokens)
    return same_kind(tokens) if readable else None


def from_lines(block: str) -> list[int] | None:
    """Lines that each start with a label and say what it shows (``2 - cut the oranges``)."""
    if NUMBERED_REFERENCE.search(block):  # "1) Video 3": the number is a marker (item_runs)
        return None
    starts = [_LINE_START.match(line) for line in block.splitlines() if line.strip()]
    return same_kind([m.group(1) for m in starts]) if len(starts) > 1 and all(starts) else None


# --- lists found anywhere ---------------------------------------------------------------------

_SENTENCE_START = re.compile(r".*(?:[.!?](?=\s)|\n)", re.DOTALL)


def reference_runs(text: str) -> list:
    """Every run of two or more clips named with only separators between them, as
    candidates: understood when only separators or a statement's head words stand before it
    in its sentence and its sentence ends (or gives a reason) after it; else a list in prose,
    which can only be a second offer."""
    from .order_commitment import Candidate

    matches = list(REFERENCE.finditer(text))
    if NUMBERED_REFERENCE.search(text):
        matches = [m for m in matches if m.group(1).isdecimal()]
    runs: list[list[re.Match]] = []
    for ref in matches:
        if runs and _listed(text, runs[-1][-1], ref, len(runs[-1]) == 1):
            gap = text[runs[-1][-1].end() : ref.start()]
            if not (_RELATION_BEFORE.search(gap[-40:]) or _RELATION_AFTER.match(gap[:40])):
                runs[-1].append(ref)
                continue
        runs.append([ref])
    found = []
    for run in runs:
        order = same_kind([m.group(1) for m in run])
        if len(run) < 2 or order is None:
            continue
        start, end = run[0].start(), run[-1].end()
        begin = max(0, start - 200)
        if sentence := _SENTENCE_START.match(text, begin, start):
            begin = sentence.end()
        lead = text[begin:start]
        if REFERENCE.search(lead):
            continue  # a clip named before it in its sentence: the rest of a sentence
        if PRESENTED.search(lead):
            continue  # the clips as presented: no answer
        plain = bool(PLAIN_LEAD.fullmatch(lead)) or head_understood(lead)
        plain = plain and not _RELATION_BEFORE.search(lead[-40:])
        plain = plain and bool(PLAIN_TAIL.match(text, end))
        plain = plain and not _RELATION_AFTER.match(text[end : end + 40])
        plain = plain and len(set(order)) == len(order)  # "Video 3, then 1, then 3 again"
        found.append(Candidate(start, end, tuple(order), plain))
    return found


_RUN_GAP = r"[ \t]*(?:,|->|→|=>|>|–|—|-|;|\bthen\b)[ \t]*(?:and[ \t]+|then[ \t]+)?"
_NUMBER_RUN = re.compile(rf"(?<![\w.])\d{{1,3}}(?:{_RUN_GAP}\d{{1,3}}(?![\w]))+")
_LETTER_RUN = re.compile(rf"(?<![\w'])[a-h](?:{_RUN_GAP}[a-h](?![\w']))+")


def offered_runs(text: str) -> list:
    """Labels in a row found in prose (``1, 3, 2``, ``c -> a -> b``): never an answer, but a
    second order offered after one (``Alternatively: 1, 3, 2``) is a candidate."""
    from .order_commitment import Candidate

    found = []
    for pattern in (_NUMBER_RUN, _LETTER_RUN):
        for run in pattern.finditer(text):
            order = same_kind(re.findall(r"\d+|[a-h]", run.group()))
            if order and len(order) > 1:
                found.append(Candidate(run.start(), run.end(), tuple(order), False))
    return found
