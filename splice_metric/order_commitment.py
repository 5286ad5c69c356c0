"""Commitment, decided once over every candidate order the readers found in an answer.

A candidate is an order stated somewhere in the answer, in any label form (numbers,
letters, ``Clip N``, captions, JSON, arrows, positions), with where it stands. Walking them
in the answer's order, the answer is the one order they all agree on; a different order
replaces it only after an explicit correction cue ("wait", "I made a mistake", "the correct
order is") between the two. Anything else (an "alternatively", an "or", a hedge) leaves two
candidates and no commitment: the answer is unparsed, never guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .order_words import word_alternatives

_W = r"\w"


@dataclass(frozen=True)
class Candidate:
    """An order found in an answer: ``order`` None when the text there names clips in a way
    no reader understands (it can be no answer, and is no agreement either)."""

    start: int  # characters into the answer (lower-cased, after the last ``</think>``)
    end: int
    order: tuple[int, ...] | None
    understood: bool = True  # False: a list found in prose, counted only as a second offer
    final: bool = False  # called final ("final answer:"): only a strong cue replaces it
    labels_at: int = -1  # where its labels start (after its cue); -1: at ``start``

    @property
    def head(self) -> int:
        return self.start if self.labels_at < 0 else self.labels_at


# a cue that takes back what came before: the next order replaces it
_STRONG_WORDS = ("wait", "mistake", "oops", "correction", "corrected", "revised")
_STRONG = re.compile(
    rf"(?:{word_alternatives(*_STRONG_WORDS, before=_W)})\b"
    r"|\b(?:correct|right|actual|true)\s+(?:chronological\s+|temporal\s+)?(?:order|answer|sequence)\b"
    r"|\b(?:that's|that\s+is|this\s+is|i\s+was|it's|it\s+is)\s+(?:wrong|incorrect|not\s+right)\b"
    r"|\bon\s+(?:second\s+thought|reflection|further\s+reflection)\b|\blet\s+me\s+(?:correct|fix)\b"
    r"|\bi\s+(?:was\s+wrong|misread|mixed)\b"
)
# a weaker one: it replaces an order not yet called final
_WEAK = re.compile(
    rf"(?:{word_alternatives('actually', 'hmm', 'final', 'finally', 'no', 'instead', before=_W)})\b"
    r"|\blooking\s+(?:again|closer|more\s+closely)\b|\bon\s+closer\b|\bre-?(?:check|consider|examin)"
)


def committed(candidates: list[Candidate], text: str) -> tuple[int, ...] | None:
    """The one order the candidates commit to (in the answer's order), or None."""
    current: Candidate | None = None
    for found in sorted(candidates, key=lambda c: c.start):
        if current is None:
            if found.understood:
                current = found
            continue
        if found.order is not None and len(found.order) < 2:
            continue
        if current.order is None and found.understood and found.order is not None:
            current = found  # a list no reader understood, then an order: no second order
            continue
        if found.order == current.order:
            current = Candidate(
                found.start, found.end, found.order, final=found.final or current.final
            )
            continue
        if (
            not found.understood
            and current.order
            and found.order
            and len(found.order) < len(current.order)
        ):
            continue  # two clips named in a remark, not a whole order offered
        if corrects(text[current.end : found.head], current.final):  # its own cue too
            current = found
            continue
        return None
    return current.order if current is not None else None


def corrects(between: str, final: bool) -> bool:
    """Whether the words between two different answers take the first one back: a strong
    cue always, a weak one when the first was not called final (shared with questions.py)."""
    return _STRONG.search(between) is not None or (not final and _WEAK.search(between) is not None)
