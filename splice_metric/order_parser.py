"""``parse_order``: the project's one parser of order answers, a sibling of ``splice_metric.py``.

Standard library only, imported relatively by the metric script (evaluate copies a script's
``from .name import`` modules beside it, and the Space ships every ``*.py``).

Two promises beyond reading the usual forms (see ``parse_order``):

- an answer is read as the order the model meant or left unparsed, never read as another
  order: a position given to each clip (``Video 1: 3``, ``"Video 1": "third"``) is inverted
  into an order or refused, relational prose (``Video 1 comes after Video 2``) is refused, and
  a correction (``... wait, it should be 1, 2, 3``) wins over the order it corrects;
- it never raises and runs in time linear in the answer's length: every regular expression
  is bounded per match start, a stated order is looked at only up to ``_STATEMENT_MAX``
  characters, JSON is decoded from at most ``_JSON_MAX_OBJECTS`` starts and nesting that
  exhausts the decoder's recursion is treated as no JSON. A model's answer can be anything
  (a 200 kB loop, a thousand ``[``), and one answer must never stop a whole evaluation.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["parse_order", "word_alternatives"]

_TAG = re.compile(r"<\s*/?\s*order\s*>")
# a clip's name, not inside a word; each name's own look-behind comes after it, so the scan
# starts at the names' letters (a look-behind first would be tried at every character)
_CLIP_NAMES = ("random_part", "video", "clip", "part", "segment")


def word_alternatives(*words: str, before: str = "a-z0-9") -> str:
    """A pattern for any of ``words`` not preceded by a character of ``before``, each word's
    look-behind after it (so a scan starts at the words' letters; shared with questions.py)."""
    return "|".join(rf"{word}(?<![{before}].{{{len(word)}}})" for word in words)


_CLIP_NAME = word_alternatives(*_CLIP_NAMES)
_CLIP_WORD = rf"(?:{_CLIP_NAME})[\s_#:.-]*"
_REFERENCE = re.compile(rf"{_CLIP_WORD}(\d+|[a-z])(?![a-z0-9])")
# a dash separates only after a label or a space: "3-1-2", "3 - 1", never "-1"
_SEPARATORS = re.compile(r"(?:->|=>|→|⟶|➔|>|,|;|\||\s|(?<=[\w\s])[-–—](?=[\w\s]))+")
_BRACKETS = re.compile(r"[\[\](){}\"'`*]")
_FILLER = frozenset({"then", "and", "finally", "next", "first"})
# a plain sequence of labels is short: longer text is never one (and is not split up)
_SEQUENCE_MAX = 2000
_LINE_START = re.compile(r"^[\s\-*•>#]*(\d+|[a-z])(?![a-z0-9.])")


class _Refused:
    """The verdict of a reading that recognised the answer's form but found no order in it
    (positions that are not a permutation): the answer is unparsed, no other reading tried."""


_REFUSED = _Refused()
_Reading = list[int] | _Refused | None


def parse_order(text: str | None) -> list[int] | None:
    """Read a model's answer as a list of clip labels, or None when it cannot be read.

    The answer is the last non-empty ``<order>...</order>`` block. Tags pair up left to
    right, whatever their kind, so the malformed blocks the official SPLICE scripts accept
    count too (``<order>...<order>``, ``</order>...</order>``); an unclosed last block runs
    to the end of the text. Inside it, JSON wins (below), then a position given to each clip
    (``Video 1: 3, Video 2: 1, Video 3: 2`` or ``Video 1: third, ...``: clip 2 first, read as
    ``[2, 3, 1]``; two or more such pairs that are not one position per clip leave the answer
    unparsed), then explicit references (``Video 3``, ``Clip 3``, ``random_part_3``,
    ``Video c``; not when they are related in prose: ``Video 1 comes after Video 2``), then a
    plain sequence of numbers or letters (``3, 1, 2``, ``[3 -> 1 -> 2]``, ``c, a, b`` with
    a = 1), then lines that start with a label (``Video 2 - [label]``, ``2 - cut the
    oranges``). Letters count only when there are two or more and they are among the first k
    letters of a k-label answer (a lone ``A`` is a choice, not an order). Text without tags
    must be JSON, position pairs, such a sequence or list on its own, state its order last
    (``The correct order is: Video 3, Video 1, Video 2.``, ``Final answer: 3-1-2``; a later
    ``... it should be 1, 2, 3`` corrects it), or name each clip once.

    JSON answers, bare or in a code fence: an object anywhere in the text whose
    ``order`` (at any depth) is a list of labels (``[2, 3, 1]``, ``["Video 2", ...]``)
    or a string read as above; or a list of labels that is the whole answer or the whole
    of a code fence. The last such value counts.

    Never raises, and takes time linear in the length of ``text``.

    >>> parse_order("Sure! <order>Video 3, Video 1, Video 2</order>")
    [3, 1, 2]
    >>> parse_order("<order>c, a, d, b</order>")
    [3, 1, 4, 2]
    >>> parse_order("<order>1, 2</order> on reflection: <order>2 -> 1</order>")
    [2, 1]
    >>> parse_order("<order>Video 2, Video 3, Video 1<order>")
    [2, 3, 1]
    >>> parse_order('```json {"order": ["Video 2", "Video 1"]} ```')
    [2, 1]
    >>> parse_order("Video 1: 3\\nVideo 2: 1\\nVideo 3: 2")
    [2, 3, 1]
    >>> parse_order("I cannot tell.") is None
    True
    """
    if not isinstance(text, str):
        return None
    text = text.lower()  # every pattern is lower case: case-sensitive scans are far faster
    parts = _TAG.split(text)
    if len(parts) == 1:
        return _parse_block(text, tagged=False)
    # tags pair up left to right: blocks are every second part (the last one maybe unclosed)
    block = next((b for b in reversed(parts[1::2]) if b.strip()), None)
    return None if block is None else _parse_block(block, tagged=True)


def _parse_block(block: str, *, tagged: bool, json_too: bool = True) -> list[int] | None:
    attempts: list[Callable[[str], _Reading]]
    if tagged:
        attempts = [_from_pairs, _from_references, _from_sequence, _from_lines]
    else:  # untagged text is read more warily (see parse_order)
        attempts = [_from_pairs, _from_sequence, _from_lines, _final_statement, _from_mentions]
    for attempt in [_from_json, *attempts] if json_too else attempts:
        got = attempt(block)
        if isinstance(got, _Refused):
            return None
        if got:
            return got
    return None


# --- a position per clip ----------------------------------------------------------------------

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_QUOTE = r"[\"'`*]*"
# "Video 1: 3", "Video 1 = 3", "Video 1 - third", "Video 1 is in position 3", '"Video 1": "3rd"'
_PAIR = re.compile(
    rf"{_CLIP_WORD}(\d+|[a-z])(?![a-z0-9]){_QUOTE}[)\]]?[ \t]*"
    rf"(?:(?P<tight>[:=|])|(?P<loose>->|→|[-–—]|\b(?:is|comes|goes|happens)\b))[ \t]*"
    rf"(?:(?:in|at|the)[ \t]+){{0,2}}{_QUOTE}[(\[]?(?P<word>(?:position|place|step|no\.?|#)[ \t]*)?"
    rf"(?P<pos>\d+(?:st|nd|rd|th)?|{'|'.join(_ORDINALS)}|last)(?!\w|\.\d)"
    r"(?:[ \t]+(?:position|place))?"
    rf"{_QUOTE}[)\]]?(?=[ \t]*(?:[,;\n}}|]|\.(?:\s|$)|$|\band\b))",
)


def _from_pairs(block: str) -> _Reading:
    """An order from a position given to each clip, when the block gives two or more: clip k
    at position p puts k at p (``Video 1: 3`` is clip 1 third). Positions that are not one
    per clip, 1..k, are refused: the clips' mention order is not what such an answer means."""
    pairs: list[tuple[str, str]] = []
    for m in _PAIR.finditer(block):
        position = m.group("pos").lower()
        if m.group("loose") and position[0].isdigit() and not m.group("word"):
            continue  # "Video 1 - 3" is as likely a sequence as a position: not a pair
        pairs.append((m.group(1), position))
    if len(pairs) < 2:
        return None
    clips = _same_kind([clip for clip, _ in pairs])
    if clips is None or len(set(clips)) != len(clips):
        return _REFUSED
    count = len(clips)
    order = [0] * count
    for clip, (_, position) in zip(clips, pairs, strict=True):
        at = _position(position, count)
        if at is None or not 1 <= at <= count or order[at - 1]:
            return _REFUSED
        order[at - 1] = clip
    return order if sorted(order) == list(range(1, count + 1)) else _REFUSED


def _position(word: str, count: int) -> int | None:
    if word == "last":
        return count
    if word in _ORDINALS:
        return _ORDINALS.index(word) + 1
    digits = word.rstrip("stndrh")
    return int(digits) if digits.isdecimal() else None


# --- a stated order ---------------------------------------------------------------------------

_CUE_WORD = word_alternatives("order", "answer", "sequence", before=r"\w")
_MODAL = word_alternatives("should", "must", "would", "will", before=r"\w")
_CUE = (
    rf"(?:{_CUE_WORD})\b[^.:\n]{{0,40}}?(?:\bis\b|\bbe\b|:)"
    rf"|(?:{_MODAL})"
    r"[ \t]+(?:actually[ \t]+|rather[ \t]+)?be\b|:"
)
_LABEL_FIRST = rf"[\s\[({{\"'`*]*(?:first\W+)?(?:{_REFERENCE.pattern}|\d+(?![a-z.])|[a-z]\s*[,>→])"
# a cue followed by a label: cues with none after them (a remark) are passed over in C
_STATEMENT = re.compile(rf"(?:{_CUE})(?={_LABEL_FIRST})")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_STATEMENT_MAX = 400  # characters: a stated order of 7 clips in words is far shorter


def _final_statement(block: str) -> list[int] | None:
    """The last order stated after a cue ("the order is", "answer:", ":", "it should be") to
    the end of its sentence (not starting with a label: a remark), if a permutation no
    "final" one denies. Sentence ends are found once, and a looping answer's repeated
    statements are read once, so many cues cost linear time."""
    ends = [m.start() for m in _SENTENCE_END.finditer(block)]
    read: dict[str, list[int] | None] = {}
    stated = []  # (called final?, the order read)
    for cue in _STATEMENT.finditer(block):
        at = bisect.bisect_left(ends, cue.end())
        end = ends[at] if at < len(ends) else len(block)
        if end - cue.end() > _STATEMENT_MAX:
            continue
        text = block[cue.end() : end]
        if text not in read:
            read[text] = _from_sequence(_REFERENCE.sub(r" \1 ", text))
        final = "final" in block[max(0, cue.start() - 12) : cue.end()]
        stated.append((final, read[text]))
    order = stated[-1][1] if stated else None
    settled = order and len(order) > 1 and all(got == order for final, got in stated if final)
    return order if settled and sorted(order) == list(range(1, len(order) + 1)) else None


# --- JSON -------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*(?:json|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_JSON_ITEM = re.compile(rf"\s*(?:{_CLIP_WORD})?(\d+|[a-z])\s*")
_JSON_MAX_OBJECTS = 200  # objects tried per answer, from its end: bounds the cost of junk
_JSON_MAX_DEPTH = 3
_DECODER = json.JSONDecoder()
# nesting past the decoder's recursion limit raises RecursionError, not ValueError
_NOT_JSON = (ValueError, RecursionError)


def _from_json(block: str) -> list[int] | None:
    """The order of the last JSON value in the block that holds one (see parse_order)."""
    if "{" not in block and "[" not in block:
        return None
    found: list[Any] = []  # a bare list counts only as the whole answer or a whole fence
    for whole in [block, *(m.group(1) for m in _FENCE.finditer(block))]:
        with contextlib.suppress(*_NOT_JSON):
            found.append(json.loads(whole))
    starts = [m.start() for m in re.finditer(r"\{", block)][-_JSON_MAX_OBJECTS:]
    end = -1
    for at in starts:
        if at >= end:  # not inside an object already decoded
            with contextlib.suppress(*_NOT_JSON):
                value, end = _DECODER.raw_decode(block, at)
                found.append(value)
    return next(filter(None, (_order_of_json(value, 0) for value in reversed(found))), None)


def _order_of_json(value: Any, depth: int) -> list[int] | None:
    if isinstance(value, list):
        return _json_labels(value)
    if not isinstance(value, dict) or depth > _JSON_MAX_DEPTH:
        return None
    for key, item in value.items():
        if isinstance(key, str) and key.strip().lower() == "order":
            if isinstance(item, str):  # read as a tag's content, without JSON again
                return _parse_block(item, tagged=True, json_too=False)
            return _json_labels(item) if isinstance(item, list) else None
    nested = (_order_of_json(item, depth + 1) for item in value.values() if isinstance(item, dict))
    return next(filter(None, nested), None)


def _json_labels(items: list[Any]) -> list[int] | None:
    """Labels of a list of non-negative ints or clip names ("Video 2", "2", "b"), else None."""
    tokens = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            tokens.append(str(item))
        elif isinstance(item, str) and (m := _JSON_ITEM.fullmatch(item)):
            tokens.append(m.group(1))
        else:
            return None
    return _same_kind(tokens)


# --- labels in a row --------------------------------------------------------------------------


def _same_kind(tokens: list[str]) -> list[int] | None:
    """Labels when the tokens are all numbers, or two or more letters among the first
    len(tokens) letters (so an echoed placeholder "Video X, Video Y" is not read as 24, 25,
    and a lone "A", a multiple-choice answer, is not an order)."""
    if tokens and all(t.isdigit() for t in tokens):
        return [int(t) for t in tokens]
    labels = [ord(t.lower()) - ord("a") + 1 for t in tokens if t.isalpha()]
    return labels if len(tokens) > 1 and len(labels) == len(tokens) >= max(labels) else None


# "Video 1 comes after Video 2": references related in prose, not listed in order
_RELATION_BEFORE = re.compile(
    r"\b(?:after|before|follows?|followed|precedes?|preceded|preceding|following)\W*$",
)
_RELATION_AFTER = re.compile(
    r"^\W*(?:(?:is|comes|came|happens|happened|occurs|goes)\W+)?"
    r"(?:last|later|earlier|after|before|follows?|precedes?)\b",
)


def _references(block: str) -> list[re.Match[str]]:
    """The clip references of a block: the numbered ones when there are any (so "clips" or
    "part a" in prose is no clip "s" or "a" beside "Video 2")."""
    matches = list(_REFERENCE.finditer(block))
    numbered = [m for m in matches if m.group(1).isdigit()]
    return numbered or matches


def _from_references(block: str, each_once: bool = False) -> _Reading:
    matches = _references(block)
    for left, right in zip(matches, matches[1:], strict=False):
        gap = block[left.end() : right.start()]
        if _RELATION_BEFORE.search(gap[-40:]) or _RELATION_AFTER.match(gap[:40]):
            return _REFUSED
    order = _same_kind([m.group(1) for m in matches])
    return None if each_once and order and len(set(order)) < len(order) else order


# what may stand between two clips of a list: "Video 2 -> Video 1", "**Video 2**, then
# Video 1", and the next item's marker of a numbered list or table ("\n2. Video 1", "Second:
# Video 1", "| 2 | Video 1")
_LIST_MARK = (
    rf"(?:(?:step|position|place)[ \t]*)?(?:\d+(?:st|nd|rd|th)?|{'|'.join(_ORDINALS)})"
    r"[ \t]*[.):|]"
)
_LIST_GAP = re.compile(
    rf"(?:[\s,;|>→⟶➔*()\[\]\"'`–—-]|\b(?:then|and|next|finally)\b|(?<![\w.]){_LIST_MARK})*"
)


def _from_mentions(block: str) -> _Reading:
    """Untagged text that names each clip once, as one list (``Video 2 -> Video 1``,
    ``I'd say Video 2, then Video 1.``): prose that names each clip once while describing
    them (``Video 1 shows ..., Video 2 shows ...``) is not an order."""
    matches = _references(block)
    for left, right in zip(matches, matches[1:], strict=False):
        if not _LIST_GAP.fullmatch(block, left.end(), right.start()):
            return None
    return _from_references(block, each_once=True)


def _from_sequence(block: str) -> list[int] | None:
    if len(block) > _SEQUENCE_MAX and len(block.strip()) > _SEQUENCE_MAX:
        return None
    tokens = _SEPARATORS.split(_BRACKETS.sub(" ", block))
    tokens = [t for t in tokens if t and t.lower() not in _FILLER]
    readable = all(t.isdecimal() or (len(t) == 1 and t.isascii() and t.isalpha()) for t in tokens)
    return _same_kind(tokens) if readable else None


def _from_lines(block: str) -> list[int] | None:
    starts = [_LINE_START.match(line) for line in block.splitlines() if line.strip()]
    return _same_kind([m.group(1) for m in starts]) if len(starts) > 1 and all(starts) else None
