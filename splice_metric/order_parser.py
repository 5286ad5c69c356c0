"""``parse_order``, the project's one reader of order answers: standard library only, beside
``splice_metric.py``, which imports it relatively (evaluate copies such siblings beside the
script, and the Space ships every ``*.py``)."""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import re
from typing import Any

__all__ = ["parse_order", "word_alternatives"]


def word_alternatives(*words: str, before: str = "a-z0-9") -> str:
    """A pattern for any of ``words`` not preceded by a character of ``before``, each word's
    look-behind after it, so that a scan starts at the words' letters and not at every
    character (shared with questions.py)."""
    return "|".join(rf"{word}(?<![{before}].{{{len(word)}}})" for word in words)


_WORD = r"\w"
_TAG = re.compile(r"<\s*/?\s*order\s*>")
_CLIP_WORD = (
    rf"(?:{word_alternatives('random_part', 'video', 'clip', 'part', 'segment')})[\s_#:.-]*"
)
_REFERENCE = re.compile(rf"{_CLIP_WORD}(\d+|[a-z])(?![a-z0-9])")
_NUMBERED_REFERENCE = re.compile(rf"{_CLIP_WORD}\d")
_LABEL_MAX = 18  # digits: a longer number is no clip label (and int() refuses 4,300)


def parse_order(text: str | None) -> list[int] | None:
    """Read a model's answer as a list of clip labels, or None when it cannot be read.

    The answer is the last non-empty ``<order>...</order>`` block; tags pair up left to
    right whatever their kind (so the malformed blocks the official SPLICE scripts accept
    count too), and an unclosed last block runs to the end. It is read, in this order, as
    JSON (an object's ``order`` at any depth, or a list that is the whole answer or a whole
    code fence; the last one counts), as a position given to each clip (``Video 1: 3``,
    ``Video 1: third``, inverted into the order it means), as explicit references (``Video
    3``, ``Clip 3``, ``random_part_3``, ``Video c``), as a plain sequence (``3, 1, 2``,
    ``[3 -> 1 -> 2]``, ``c, a, b`` with a = 1), or as lines that start with a label. Text
    without tags is read more warily: JSON, positions, a sequence or such lines on its own,
    an order stated last (``The correct order is: ...``, ``Final answer: 3-1-2``), or each
    clip named once in one list. Letters count only when two or more are among the first k
    letters of a k-label answer (a lone ``A`` is a choice, not an order). Captions of listed
    clips are read as nothing, list markers (``1)``, ``second:``) as positions; only what
    follows the last ``</think>`` counts (see the metric card for the whole set of rules).

    Two promises. An answer is read as the order the model meant or left unparsed, never as
    another order: positions that are not one per clip, relational prose, two different
    final answers or a second candidate are unparsed, and the last committed answer wins
    (after the tags too), the clips restated as presented are no answer. And it
    never raises and takes time linear in the length of ``text``: every pattern is bounded
    per match start, and a model's answer can be anything (a 200 kB loop, a thousand ``[``).

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
    >>> parse_order("The order is 1, 2, 3. Wait, it should be 2, 1, 3.")
    [2, 1, 3]
    >>> parse_order("Video 1 comes after Video 2.") is None
    True
    >>> parse_order("I cannot tell.") is None
    True
    >>> parse_order("Video 2 - [clean 3 tubs], Video 3 - [rinse: Video 1], Video 1 - [spray]")
    [2, 3, 1]
    >>> parse_order("1) Video 3\\n2) Video 1")
    [3, 1]
    >>> parse_order("<order>1, 2</order> Wait, I made a mistake. The correct order is 2, 1.")
    [2, 1]
    >>> parse_order("The order is 1, 2. Alternatively, 2, 1.") is None
    True
    """
    if not isinstance(text, str):
        return None
    text = _after_thinking(text.lower())  # lower case: case-sensitive scans are far faster
    if text is None:
        return None
    parts = _TAG.split(text)
    blocks = [block for block in parts[1::2] if block.strip()]  # between paired tags
    if len(parts) == 1:
        order = _read(text, _UNTAGGED)
        return None if order and _offers_another(text, order) else order
    tail = parts[-1] if len(parts) % 2 else ""  # after the last closing tag
    order = _final_statement(tail) or (_read(blocks[-1], _TAGGED) if blocks else None)
    return None if order and _offers_another(tail, order) else order  # a correction after the tags


_THINK = re.compile(r"<\s*(/?)\s*think(?:ing)?\s*>")


def _after_thinking(text: str) -> str | None:
    """The answer after the last ``</think>``: a draft in a thinking block is no answer, and
    an unclosed one (no answer after it) leaves nothing to read."""
    last = next(reversed(list(_THINK.finditer(text))), None)
    return text if last is None else text[last.end() :] if last.group(1) else None


# "... Alternatively, Video 2, Video 1, Video 3": a second candidate leaves the answer open
_ALTERNATIVE = re.compile(
    rf"(?:{word_alternatives('alternatively', 'alternative', 'or', before=_WORD)})"
    rf"\b[^.\n]{{0,60}}?(?={_CLIP_WORD}(?:\d+|[a-z])\b|\d+[ \t]*(?:,|->|→|>|-)[ \t]*\d)"
)


def _offers_another(text: str, order: list[int]) -> bool:
    """Whether a different order is offered after the last stated one (or the start): the
    labels of the sentence after "alternatively" or "or" (one clip alone is no order)."""
    start = 0
    for cue in _STATEMENT.finditer(text):
        start = cue.start()
    for offer in _ALTERNATIVE.finditer(text, start):
        end = _SENTENCE_END.search(text, offer.end(), offer.end() + _STATEMENT_MAX)
        said = _REFERENCE.sub(r" \1 ", text[offer.end() : end.start() if end else None][:400])
        labels = [int(x) for x in re.findall(r"\b\d{1,3}\b", said)]
        if len(labels) > 1 and labels != order:
            return True
    return False


def _read(block: str, readers: tuple) -> list[int] | None:
    """The first reader's order. A reader returns None when the block is not in its form,
    and [] when it is but holds no order: then the answer is unparsed, no other tried."""
    for reader in readers:
        order = reader(block)
        if order is not None:
            return order or None
    return None


def _same_kind(tokens: list[str]) -> list[int] | None:
    """Labels when the tokens are all numbers, or two or more letters among the first
    len(tokens) letters (so an echoed placeholder "Video X, Video Y" is not read as 24, 25,
    and a lone "A", a multiple-choice answer, is not an order)."""
    if tokens and all(t.isdecimal() and len(t) <= _LABEL_MAX for t in tokens):
        return [int(t) for t in tokens]
    labels = [ord(t) - ord("a") + 1 for t in tokens if t.isalpha()]
    return labels if len(tokens) > 1 and len(labels) == len(tokens) >= max(labels) else None


# --- a position per clip ----------------------------------------------------------------------

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_QUOTE = r"[\"'`*]*"
# "Video 1: 3", "Video 1 = 3", "Video 1 - third", "Video 1 is in position 3", '"Video 1": "3rd"'
_PAIR = re.compile(
    rf"{_CLIP_WORD}(\d+|[a-z])(?![a-z0-9]){_QUOTE}[)\]]?[ \t]*"
    rf"(?:[:=|]|(?P<loose>->|→|[-–—]|\b(?:is|comes|goes|happens)\b)|(?=\())[ \t]*"
    rf"(?:(?:in|at|the)[ \t]+){{0,2}}{_QUOTE}[(\[]?(?P<word>(?:position|place|step|no\.?|#)[ \t]*)?"
    rf"(?P<pos>\d+(?:st|nd|rd|th)?|{'|'.join(_ORDINALS)}|last)(?!\w|\.\d)"
    r"(?:[ \t]+(?:position|place))?"
    rf"{_QUOTE}[)\]]?(?=[ \t]*(?:[,;\n}}|]|\.(?:\s|$)|$|\band\b))",
)


def _from_pairs(block: str) -> list[int] | None:
    """An order from a position given to each clip, when the block gives two or more: clip k
    at position p puts k at p (``Video 1: 3`` is clip 1 third). Positions that are not one
    per clip, 1..k, are refused: the clips' mention order is not what such an answer means."""
    block = _blank_captions(block, keep_positions=True) or ""  # "[cut at 3:30]" is no pair
    pairs = [
        (m.group(1), m.group("pos"))
        for m in _PAIR.finditer(block)  # "Video 1 - 3" is as likely a sequence: no pair
        if not (m.group("loose") and m.group("pos")[0].isdigit() and not m.group("word"))
    ]
    if len(pairs) < 2:
        return None
    clips = _same_kind([clip for clip, _ in pairs])
    if clips is None:  # clips named by numbers and letters mixed: positions of no one order
        return []
    order = [0] * len(clips)
    for clip, (_, word) in zip(clips, pairs, strict=True):
        at = _position(word, len(clips))
        if not 1 <= at <= len(clips):
            return []
        order[at - 1] = clip  # a position given twice leaves another empty: refused below
    return order if sorted(order) == list(range(1, len(order) + 1)) else []


def _position(word: str, count: int) -> int:
    if word in _ORDINALS:
        return _ORDINALS.index(word) + 1
    digits = word.rstrip("stndrh")
    return count if word == "last" else int(digits) if len(digits) <= _LABEL_MAX else 0


# --- JSON -------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*(?:json|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_JSON_ITEM = re.compile(rf"\s*(?:{_CLIP_WORD})?(\d+|[a-z])\s*")
_JSON_MAX_OBJECTS = 200  # objects tried per answer, from its end: bounds the cost of junk
_JSON_MAX_DEPTH = 3
_DECODER = json.JSONDecoder()
_NOT_JSON = (ValueError, RecursionError)  # deep nesting exhausts the decoder's recursion


def _from_json(block: str) -> list[int] | None:
    """The order of the last JSON value in the block that holds one (see parse_order)."""
    if "{" not in block and "[" not in block:
        return None
    found: list[Any] = []  # a bare list counts only as the whole answer or a whole fence
    for whole in [block, *(m.group(1) for m in _FENCE.finditer(block))]:
        with contextlib.suppress(*_NOT_JSON):
            found.append(json.loads(whole))
    end = -1
    for at in [m.start() for m in re.finditer(r"\{", block)][-_JSON_MAX_OBJECTS:]:
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
                return _read(item.lower(), _TAGGED[1:])
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


# --- clips named in a row ---------------------------------------------------------------------

# "Video 1 comes after Video 2": references related in prose, not listed in order
_RELATION_BEFORE = re.compile(
    r"\b(?:after|before|follows?|followed|precedes?|preceded|preceding|following)\W*$",
)
_RELATION_AFTER = re.compile(
    r"^\W*(?:(?:is|comes|came|happens|happened|occurs|goes)\W+)?"
    r"(?:last|later|earlier|after|before|follows?|precedes?)\b",
)
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


def _from_references(block: str, listed: bool = False) -> list[int] | None:
    """The clips a block names, in order: the numbered ones when there are any (so "clips" or
    "part a" in prose is no clip "s" or "a" beside "Video 2"). Clips related in prose are
    refused. ``listed``: untagged text, which must name each clip once, as one list (prose
    that names each clip while describing it, "Video 1 shows ...", is no order)."""
    matches = list(_REFERENCE.finditer(block))
    matches = [m for m in matches if m.group(1).isdecimal()] or matches
    for left, right in zip(matches, matches[1:], strict=False):
        gap = block[left.end() : right.start()]
        if _RELATION_BEFORE.search(gap[-40:]) or _RELATION_AFTER.match(gap[:40]):
            return []
        if listed and not _LIST_GAP.fullmatch(block, left.end(), right.start()):
            return None
    order = _same_kind([m.group(1) for m in matches])
    if not listed or not order:
        return order  # else one list, of each clip once, not the order shown ("shown as: ...")
    shown = _PRESENTED.search(block, max(0, matches[0].start() - 80), matches[0].start())
    return None if shown or len(set(order)) < len(order) else order


# --- items, one clip each, perhaps captioned ---------------------------------------------------

# "1. Video 2 - [clean bathtub]", "second: Video 1", "Video 3 (rinse the pot)": an item is a
# clip named after an optional marker, then nothing, or a caption after "-", ":" or a bracket
_MARK_WORDS = "|".join(_ORDINALS)
_LEAD = re.compile(
    r"[ \t]*(?:(?:and|then|next|finally)\b[ \t]*)?(?:[-*•#>]+[ \t]*)?"
    rf"(?:\(?(?:(?:step|position|place)[ \t]*)?(?P<mark>\d{{1,3}}|{_MARK_WORDS})(?:st|nd|rd|th)?"
    r"[ \t]*[.):–—-][ \t]*)?[*\"'`]*"
)
_CAPTION = re.compile(r"[*\"'`]*[ \t]*(?:[-–—:(\[]|$)")
_PLAIN = re.compile(r"[\s,;|>→⟶➔*()\[\]\"'`.–—-]*")
# what parts two items of a line: the first's caption, a separator, the next one's marker
_SEPARATOR = re.compile(r"[,;|]|->|→|=>|\bthen\b|\band\b")
_POSITION_ONLY = re.compile(
    rf"\s*(?:(?:position|place|step)\s*)?(?:\d+(?:st|nd|rd|th)?|{_MARK_WORDS}|last)\s*"
)


def _blank_captions(block: str, keep_positions: bool = False) -> str | None:
    """The block with each bracketed caption after a clip ("Video 2 - [cut 3, Video 4]")
    blanked, so that nothing in it is read (each bracket scanned once); a position ("Video 3
    (2nd)") is kept for _from_pairs, and after it (not one of a full set) leaves None."""
    out, pos = [], 0
    for ref in _CAPTIONED.finditer(block):
        if ref.start() < pos:  # inside a caption already blanked
            continue
        opened = ref.end() - 1
        depth, end = 0, len(block)
        for at in range(opened, len(block)):
            depth += (block[at] in "[(") - (block[at] in ")]")
            if depth == 0 or block[at] == "\n":
                end = at
                break
        if _POSITION_ONLY.fullmatch(block, opened + 1, end):
            if not keep_positions:
                return None
            out.append(block[pos:end])
        else:
            out += [block[pos : opened + 1], "~" * (end - opened - 1)]  # read as caption text
        pos = end
    return "".join(out) + block[pos:]


_CAPTIONED = re.compile(
    rf"{_CLIP_WORD}(?:\d+|[a-z])(?![a-z0-9])[*\"'`]*[ \t]*(?:[-–—:][ \t]*)?[\[(]"
)


def _from_items(block: str) -> list[int] | None:
    """The order of a list of items: one clip per item, items parted by a separator or a
    line, each perhaps after a marker (``1.``, ``1)``, ``second:``: then a position, and the
    clips are placed by it) and before a caption (free text, read as nothing). Claimed only
    when some item has a caption or a marker; a list restated as presented (1..k) before
    another counts as no answer, and two different lists leave the answer unparsed."""
    text = _blank_captions(block)
    if text is None:
        return []
    numbered = _NUMBERED_REFERENCE.search(text) is not None
    runs: list[list[tuple[str, str | None]]] = [[]]
    claimed = prose_last = ended = described = False
    for line in text.splitlines():
        refs = [m for m in _REFERENCE.finditer(line) if m.group(1).isdecimal() or not numbered]
        got = _line_items(line, refs) if refs else None
        if got == "refused":
            return []
        if got is None:  # a line of prose (or a clip named in it) ends a list
            runs.append([]) if line.strip() else None
            prose_last = prose_last or bool(refs) or _STATEMENT.search(line) is not None
            continue
        items, captioned, mid_line = got
        marked = items[0][1] is not None
        # a list starts mid-line after prose, and ends with its line; markers start another
        if mid_line or ended or (runs[-1] and (runs[-1][-1][1] is not None) != marked):
            runs.append([])
        ended, described = mid_line, captioned and (described or not runs[-1])
        described &= line.rstrip().endswith(".")  # "Video 1: The man lifts the car."
        claimed |= captioned or any(mark for _, mark in items)
        runs[-1] += items
        prose_last = False
    orders = [_run_order(run) for run in runs if len(run) > 1] if claimed else []
    if not orders:
        return None
    final = orders[-1]
    shown = all(o is not None and (o == final or o == sorted(o)) for o in orders[:-1])
    if prose_last or (described and final == sorted(final)):  # clips described as shown
        return None
    return final if shown and final is not None else []


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
    labels, marks = _same_kind([clip for clip, _ in run]), [mark for _, mark in run]
    if labels is None or not any(marks) or not all(marks):
        return labels if labels is None or not any(marks) else None
    at = [_position(mark, len(run)) for mark in marks]
    if sorted(at) != list(range(1, len(run) + 1)):
        return None
    order = [0] * len(run)
    for label, place in zip(labels, at, strict=True):
        order[place - 1] = label
    return order


# --- labels in a row --------------------------------------------------------------------------

# a dash separates only after a label or a space: "3-1-2", "3 - 1", never "-1"
_SEPARATORS = re.compile(r"(?:->|=>|→|⟶|➔|>|,|;|\||\s|(?<=[\w\s])[-–—](?=[\w\s]))+")
_BRACKETS = re.compile(r"[\[\](){}\"'`*]")
_FILLER = frozenset({"then", "and", "finally", "next", "first"})
_SEQUENCE_MAX = 2000  # characters: longer text is never a plain sequence (nor split up)
_LINE_START = re.compile(r"^[\s\-*•>#]*(\d+|[a-z])(?![a-z0-9.])")


def _from_sequence(block: str) -> list[int] | None:
    if len(block) > _SEQUENCE_MAX and len(block.strip()) > _SEQUENCE_MAX:
        return None
    tokens = _SEPARATORS.split(_BRACKETS.sub(" ", block))
    tokens = [t for t in tokens if t and t not in _FILLER]
    readable = all(t.isdecimal() or (len(t) == 1 and t.isascii() and t.isalpha()) for t in tokens)
    return _same_kind(tokens) if readable else None


def _from_lines(block: str) -> list[int] | None:
    if _NUMBERED_REFERENCE.search(block):  # "1) Video 3": the number is a marker (_from_items)
        return None
    starts = [_LINE_START.match(line) for line in block.splitlines() if line.strip()]
    return _same_kind([m.group(1) for m in starts]) if len(starts) > 1 and all(starts) else None


# --- an order stated last ---------------------------------------------------------------------

_CUE_WORD = word_alternatives("order", "answer", "sequence", before=r"\w")
_MODAL = word_alternatives("should", "must", "would", "will", before=r"\w")
_IT_IS = word_alternatives("it's", "it is", "that's", before=_WORD)  # "that's wrong: it's 3,1,2"
_CUE = (
    rf"(?:{_CUE_WORD})\b[^.:\n]{{0,40}}?(?:\bis\b|\bbe\b|:)"
    rf"|(?:{_MODAL})"
    r"[ \t]+(?:actually[ \t]+|rather[ \t]+)?be\b|:"
    rf"|(?:{_IT_IS})[ \t]+(?:actually[ \t]+)?"
)
# "the clips are presented as: Video 1, Video 2, Video 3": the order shown, not an answer
_SHOWN_WORDS = ("presented", "shown", "given", "provided", "input", "shuffled", "appear")
_PRESENTED = re.compile(rf"(?:{word_alternatives(*_SHOWN_WORDS, before=_WORD)})\b")
_LAST_LABEL = re.compile(r".*\d", re.DOTALL)
_LABEL_FIRST = rf"[\s\[({{\"'`*]*(?:first\W+)?(?:{_REFERENCE.pattern}|\d+(?![a-z.])|[a-z]\s*[,>→])"
# a cue followed by a label: cues with none after them (a remark) are passed over in C
_STATEMENT = re.compile(rf"(?:{_CUE})(?={_LABEL_FIRST})")
_STATEMENT_MAX = 400  # characters: a stated order of 7 clips in words is far shorter
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _final_statement(block: str) -> list[int] | None:
    """The last order stated after a cue ("the order is", "answer:", ":", "it should be") to
    the end of its sentence, if a permutation that no statement called final denies.
    Sentence ends are found once, so that many cues cost linear time."""
    ends = [m.start() for m in _SENTENCE_END.finditer(block)]
    stated, read = [], {}  # (called final?, the order read); orders read, by text
    for cue in _STATEMENT.finditer(block):
        at = bisect.bisect_left(ends, cue.end())
        end = ends[at] if at < len(ends) else len(block)
        begin = max(ends[at - 1] if at else 0, cue.start() - 80)  # its sentence's words
        if label := _LAST_LABEL.match(block, begin, cue.end()):  # "shown as 1, 2; order: 3"
            begin = label.end()
        if end - cue.end() <= _STATEMENT_MAX and not _PRESENTED.search(block, begin, cue.end()):
            text = block[cue.end() : end]
            if text not in read:  # a looping answer's statements are read once
                read[text] = _from_sequence(_REFERENCE.sub(r" \1 ", text))
            stated.append(("final" in block[max(0, cue.start() - 12) : cue.end()], read[text]))
    order = stated[-1][1] if stated else None
    settled = order and len(order) > 1 and all(got == order for final, got in stated if final)
    return order if settled and sorted(order) == list(range(1, len(order) + 1)) else None


_TAGGED = (_from_json, _from_pairs, _from_items, _from_references, _from_sequence, _from_lines)
_LISTED = functools.partial(_from_references, listed=True)  # each clip named once, as one list
_ON_ITS_OWN = (_from_json, _from_pairs, _from_sequence, _from_lines)
_UNTAGGED = (*_ON_ITS_OWN, _from_items, _final_statement, _LISTED)  # a caption may hold "x: 1"
