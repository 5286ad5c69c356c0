"""The readers of answers that give each clip its position instead of listing the clips:
``Video 1: 3``, ``Video 1 is 2nd``, ``Video 1 at position 2``, ``Video 1 takes place
second``, ``Video 1 (the second step)``, and a header naming the clips before their positions
(``Positions (Video 1, Video 2, Video 3): 2, 3, 1``). Such an answer is never a list in
mention order: it is read as the order it means, or left unparsed when its positions are not
one per clip."""

from __future__ import annotations

import re

from .order_words import CLIP_WORD, ORDINALS, REFERENCE, is_permutation, position, same_kind

_QUOTE = r"[\"'`*]*"
_POS = rf"\d+(?:st|nd|rd|th)?|{'|'.join(ORDINALS)}|last"
# "Video 3 first, Video 1 second": an ordinal right after the clip
_BARE = rf"[ \t]+(?:{'|'.join(ORDINALS)}|last|\d+(?:st|nd|rd|th))\b"
_VERB = (
    r"(?:is|was|comes|came|goes|went|happens|happened|occurs|occurred|takes[ \t]+place|took"
    r"[ \t]+place|belongs|falls|should[ \t]+be|would[ \t]+be|must[ \t]+be|will[ \t]+be|ranks)"
)
# "Video 1: 3", "Video 1 = 3", "Video 1 - third", "Video 1 is in position 3", '"Video 1": "3rd"',
# "Video 1 is 2nd", "Video 1 at position 2", "Video 1 takes place second", "Video 1 (the 2nd step)"
_PAIR = re.compile(
    rf"{CLIP_WORD}(\d+|[a-z])(?![a-z0-9]){_QUOTE}[)\]]?[ \t]*"
    rf"(?:[:=|]|(?P<loose>->|→|[-–—])|{_VERB}\b|(?=[(\[])|(?=(?:at|in)[ \t])|(?={_BARE}))[ \t]*"
    rf"(?:(?:in|at|the)[ \t]+){{0,2}}{_QUOTE}[(\[]?[ \t]*(?:(?:in|at|the)[ \t]+){{0,2}}"
    rf"(?P<word>(?:position|place|step|no\.?|#)[ \t]*)?"
    rf"(?P<pos>{_POS})(?!\w|\.\d)"
    r"(?:[ \t]+(?:position|place|step|one|clip))?"
    rf"{_QUOTE}[)\]]?(?=[ \t]*(?:[,;\n}}|]|\.(?:\s|$)|$|\band\b)|[ \t]+(?P<prose>[a-z]))",
)


def from_pairs(block: str) -> list[int] | None:
    """An order from a position given to each clip, when the block gives two or more: clip k
    at position p puts k at p (``Video 1: 3`` is clip 1 third). Positions that are not one
    per clip, 1..k, are refused ([]): the clips' mention order is not what they mean."""
    found = pairs_found(block)
    return found[0] if found else None


def pairs_found(block: str) -> tuple[list[int], int, int] | None:
    """``from_pairs``'s order with where the first pair starts and the last one ends."""
    matches = _pairs(block)
    if len(matches) < 2:
        return None
    order = _placed([m.group(1) for m in matches], [m.group("pos") for m in matches])
    return order, matches[0].start(), matches[-1].end()


def pair_sets(text: str) -> list[tuple[list[int], int, int, bool]]:
    """Each set of two or more pairs with only separators between them (one answer's), as
    ``pairs_found`` gives it (an answer and its correction are two sets), and whether it
    ends its clause: one followed by prose ("Video 1: 2, Video 2: 1 would also work") is
    only an order offered."""
    sets: list[list[re.Match]] = []
    for pair in _pairs(text, prose=True):
        if sets and _BETWEEN.fullmatch(text, sets[-1][-1].end(), pair.start()):
            sets[-1].append(pair)
        else:
            sets.append([pair])
    return [
        (
            _placed([m.group(1) for m in s], [m.group("pos") for m in s]),
            s[0].start(),
            s[-1].end(),
            not any(m.group("prose") for m in s),
        )
        for s in sets
        if len(s) > 1
    ]


_BETWEEN = re.compile(r"(?:[\s,;|{}\"'`*.]|\band\b)*")


def _pairs(block: str, prose: bool = False) -> list[re.Match]:
    """The pairs of a block ("Video 1 - 3" is as likely a sequence: no pair), those followed
    by prose only when ``prose``."""
    return [
        m
        for m in _PAIR.finditer(block)
        if not (m.group("loose") and m.group("pos")[0].isdigit() and not m.group("word"))
        and (prose or not m.group("prose"))
    ]


def _placed(clips_named: list[str], words: list[str]) -> list[int]:
    """Clips put at their positions, or [] (refused) when that is not one clip a place."""
    clips = same_kind(clips_named)
    if clips is None:  # clips named by numbers and letters mixed: positions of no one order
        return []
    order = [0] * len(clips)
    for clip, word in zip(clips, words, strict=True):
        at = position(word, len(clips))
        if not 1 <= at <= len(clips):
            return []
        order[at - 1] = clip  # a position given twice leaves another empty: refused below
    return order if is_permutation(order) else []


_REF = REFERENCE.pattern
# "Positions (Video 1, Video 2, Video 3): 2, 3, 1", "positions of video 1, video 2: 2, 1"
_HEADER = re.compile(
    r"(?:position|place|rank)s?\b[ \t]*(?:of|for)?[ \t]*[(\[]?[ \t]*"
    rf"(?P<clips>{_REF}(?:[ \t]*[,;]?[ \t]*(?:and[ \t]+)?{_REF}){{1,20}})"
    rf"[ \t]*[)\]]?[ \t]*(?:[:=]|\bare\b)[ \t]*[(\[]?[ \t]*"
    rf"(?P<positions>(?:{_POS})(?:[ \t]*[,;]?[ \t]*(?:and[ \t]+)?(?:{_POS})){{1,20}})"
)
_POSITION_WORD = re.compile(_POS)


def from_header(block: str) -> list[int] | None:
    """The order a header of clips followed by their positions means (the last such
    header), or [] when the positions are not one per clip; None without a header."""
    found = header_found(block)
    return found[0] if found else None


def header_found(block: str) -> tuple[list[int], int, int] | None:
    """``from_header``'s order with where its header starts and its positions end."""
    found = None
    for found in _HEADER.finditer(block):  # noqa: B007 (the last one is wanted)
        pass
    if found is None:
        return None
    clips = [m.group(1) for m in REFERENCE.finditer(found.group("clips"))]
    words = _POSITION_WORD.findall(found.group("positions"))
    order = _placed(clips, words) if len(clips) == len(words) else []
    return order, found.start(), found.end()
