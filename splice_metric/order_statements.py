"""The reader of orders stated after a cue: "The correct order is: 3, 1, 2", "Final answer:
3-1-2", "it should be Video 3, Video 1, Video 2", "Order (latest to earliest): 2, 1, 3".

A statement is its head (the words of its clause up to the cue), then a plain list to the
end of its sentence or to a reason ("because ..."). The head must be understood
(``order_words.HEAD_WORDS``, a direction phrase read as one); a plain list after a head
that is not understood ("another plausible order would be ...") is an order offered: never
the answer, but a second candidate beside one. A statement
whose words after the cue are prose is no statement: the lists in it are found as runs."""

from __future__ import annotations

import bisect
import re

from .order_commitment import Candidate
from .order_lists import from_sequence
from .order_words import (
    PRESENTED,
    REFERENCE,
    REVERSED,
    SENTENCE_END,
    WORD,
    head_understood,
    is_permutation,
    word_alternatives,
)

_CUE_WORD = word_alternatives("order", "answer", "sequence", before=r"\w")
_MODAL = word_alternatives("should", "must", "would", "will", before=r"\w")
_IT_IS = word_alternatives("it's", "it is", "that's", before=WORD)  # "that's wrong: it's 3,1,2"
_CUE = (
    rf"(?:{_CUE_WORD})\b[^.:\n]{{0,40}}?(?:\bis\b|\bbe\b|:)"
    rf"|(?:{_MODAL})"
    r"[ \t]+(?:actually[ \t]+|rather[ \t]+)?be\b|:"
    rf"|(?:{_IT_IS})[ \t]+(?:actually[ \t]+)?"
)
_LABEL_FIRST = (
    rf"[\s\[({{\"'`*$]*(?:\\boxed\{{)?(?:first\W+)?"
    rf"(?:{REFERENCE.pattern}|\d+(?![a-z.])|[a-z]\s*[,>→])"
)
# a cue followed by a label: cues with none after them (a remark) are passed over in C
STATEMENT = re.compile(rf"(?:{_CUE})(?={_LABEL_FIRST})")
STATEMENT_MAX = 400  # characters: a stated order of 7 clips in words is far shorter
_LAST_LABEL = re.compile(r".*\d", re.DOTALL)
_CLAUSE = re.compile(r".*[,;(]", re.DOTALL)
_REASON = re.compile(r"\b(?:because|since|as|given|which|due|based)\b")


_SAME = re.compile(r",?[ \t]*\b(?:or|i\.e\.|that[ \t]+is)\b[ \t]*,?")


def _said(text: str) -> list[int] | None:
    """The plain list a statement says, the same order perhaps said twice in two label
    forms ("Video 3, Video 1, Video 2, or 3-1-2"); two different ones say no order."""
    orders = [from_sequence(REFERENCE.sub(r" \1 ", part)) for part in _SAME.split(text)]
    same = all(o is not None and o == orders[0] for o in orders)
    return orders[0] if same and is_permutation(orders[0]) else None  # not "3, 1, 3"


def statements(block: str) -> list[Candidate]:
    """Every order stated after a cue, as candidates (see the module docstring). Sentence
    ends are found once, and each statement's text read once, so that a looping answer of
    many cues costs linear time."""
    ends = [m.start() for m in SENTENCE_END.finditer(block)]
    read: dict[str, list[int] | None] = {}
    found = (_statement(block, cue, ends, read) for cue in STATEMENT.finditer(block))
    return [candidate for candidate in found if candidate is not None]


def _statement(block: str, cue: re.Match, ends: list[int], read: dict) -> Candidate | None:
    at = bisect.bisect_left(ends, cue.end())
    end = ends[at] if at < len(ends) else len(block)
    if end - cue.end() > STATEMENT_MAX:
        return None
    before = bisect.bisect_left(ends, cue.start())
    begin = max(ends[before - 1] + 1 if before else 0, cue.start() - 80)  # its sentence
    if label := _LAST_LABEL.match(block, begin, cue.end()):  # "shown as 1, 2; order: 3"
        begin = label.end()
    if PRESENTED.search(block, begin, cue.end()):
        return None  # the clips as presented: no answer
    clause = _CLAUSE.match(block, begin, cue.start())
    head = block[clause.end() if clause else begin : cue.end()]
    said = block[cue.end() : end]
    if reason := _REASON.search(said):
        said = said[: reason.start()]
    if said not in read:  # a looping answer's statements are read once
        read[said] = _said(said)
    order = read[said]
    if order and REVERSED.search(block, begin, cue.end()):
        order = order[::-1]
    if order is None or len(order) < 2:
        return None  # prose (an explanation naming clips): its lists are found as runs
    # after a head no reader understands ("another plausible order would be"), an order
    # offered: never the answer, but a second candidate beside one
    understood = head_understood(head)
    final = "final" in block[max(0, cue.start() - 12) : cue.end()]
    return Candidate(cue.start(), cue.end() + len(said), tuple(order), understood, final, cue.end())
