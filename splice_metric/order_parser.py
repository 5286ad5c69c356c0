"""``parse_order``, the project's one reader of order answers: standard library only, beside
``splice_metric.py``, which imports it and its sibling readers relatively (evaluate copies
the siblings a script imports, and the Space ships every ``*.py``).

The readers, one form each: ``order_json`` (JSON), ``order_positions`` (a position per
clip, a header of clips and positions), ``order_lists`` (plain lists, items, labels in a
row), ``order_statements`` (an order stated after a cue); ``order_words`` holds what they
share (clip names, positions, captions, the words a statement's head may have);
``order_commitment`` decides, once, which order the answer commits to."""

from __future__ import annotations

import re

from .order_commitment import Candidate, committed
from .order_json import json_orders
from .order_lists import (
    from_lines,
    from_references,
    from_sequence,
    item_runs,
    offered_runs,
    reference_runs,
)
from .order_positions import from_header, from_pairs, header_found, pair_sets
from .order_statements import STATEMENT, statements
from .order_words import mask_captions, word_alternatives

__all__ = ["parse_order", "word_alternatives"]

_TAG = re.compile(r"<\s*/?\s*order\s*>")
_THINK = re.compile(r"<\s*(/?)\s*think(?:ing)?\s*>")
_CLAIMED = "\x01"  # what a claimed span becomes for the readers after: no label, no separator


def parse_order(text: str | None) -> list[int] | None:
    """Read a model's answer as a list of clip labels, or None when it cannot be read.

    Only what follows the last ``</think>`` counts, lower-cased, with each bracketed
    caption after a clip (``Video 2 - [fry or grill]``) masked: no word in a caption ever
    changes how the answer is read. Then every reader finds the orders stated in its form:
    ``<order>`` blocks (tags pair up left to right whatever their kind, as the official
    SPLICE scripts accept, and an unclosed last block runs to the end), JSON (an object's
    ``order`` at any depth, or a list that is the whole answer or a whole code fence), a
    header of clips then positions, a position per clip (``Video 1: 3``, ``Video 1 is 2nd``,
    ``Video 1 (the second step)``), items (``1. Video 3 - jack up``: markers are positions,
    captions nothing), orders stated after a cue (``The correct order is: 3, 1, 2``; a
    direction such as "latest to earliest" is read), and plain lists (``Video 3, Video 1,
    Video 2``, ``3 -> 1 -> 2``, ``c, a, b``: only separators between and around the labels).
    Words a reader does not understand make its text no order; a list in mention order is
    read only where it is plain. Letters count only when two or more are among the first k
    letters of a k-label answer (a lone ``A`` is a choice, not an order).

    Commitment is decided once over every candidate (``order_commitment``): with tags, the
    reasoning before the first block is no candidate; the answer is the one order every
    candidate agrees on, replaced only after an explicit correction cue ("wait", "I made a
    mistake", "the correct order is"). Two different candidates without one (an
    "alternatively", an "or", a hedge after the tags), positions not one per clip, or
    relational prose leave the answer unparsed: it is read as the order the model meant or
    not at all. The parser never raises and takes time linear in the length of ``text``.

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
    >>> parse_order("Video 2 - [fry or grill], Video 3 - [rinse: Video 1], Video 1 - [spray]")
    [2, 3, 1]
    >>> parse_order("1) Video 3\\n2) Video 1")
    [3, 1]
    >>> parse_order("<order>1, 2</order> Wait, I made a mistake. The correct order is 2, 1.")
    [2, 1]
    >>> parse_order("The order is 1, 2. Alternatively, 2, 1.") is None
    True
    >>> parse_order("Video 1 is 2nd, Video 2 is 3rd, Video 3 is 1st")
    [3, 1, 2]
    >>> parse_order("Order (latest to earliest): 2, 1, 3")
    [3, 1, 2]
    """
    if not isinstance(text, str):
        return None
    text = _after_thinking(text.lower())  # lower case: case-sensitive scans are far faster
    if text is None:
        return None
    text = mask_captions(text)
    blocks = _blocks(text)
    if not blocks:
        whole = _whole(text)
        if whole is not None:
            return whole or None
    found = [Candidate(start, end, _block_order(text[start:end])) for start, end in blocks]
    rest = text
    if blocks:  # reasoning before the asked answer is no candidate; blocks are read apart
        spans = [(0, blocks[0][0]), *blocks]
        rest = _claim(text, spans)
    order = committed(found + _candidates(rest), text)
    return list(order) if order else None


def _after_thinking(text: str) -> str | None:
    """The answer after the last ``</think>``: a draft in a thinking block is no answer, and
    an unclosed one (no answer after it) leaves nothing to read."""
    last = next(reversed(list(_THINK.finditer(text))), None)
    return text if last is None else text[last.end() :] if last.group(1) else None


def _blocks(text: str) -> list[tuple[int, int]]:
    """Where the non-empty ``<order>`` blocks' contents are: tags paired left to right, an
    unpaired last one open to the end."""
    tags = list(_TAG.finditer(text))
    spans = [(tags[i].end(), tags[i + 1].start()) for i in range(0, len(tags) - 1, 2)]
    if len(tags) % 2:
        spans.append((tags[-1].end(), len(text)))
    return [(start, end) for start, end in spans if text[start:end].strip()]


def _claim(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the spans blanked (line breaks kept), for the readers after."""
    chars = list(text)
    for start, end in spans:
        for at in range(start, end):
            if chars[at] != "\n":
                chars[at] = _CLAIMED
    return "".join(chars)


def _whole(text: str) -> list[int] | None:
    """An untagged answer that is nothing but labels in a row or label-led lines."""
    for reader in (from_sequence, from_lines):
        order = reader(text)
        if order is not None:
            return order
    return None


def _block_order(block: str) -> tuple[int, ...] | None:
    """The order an ``<order>`` block (or a JSON ``order`` string) states, or None when no
    reader understands it: a block is read whole, by the first reader of its form."""
    order = _read_block(block, json=True)
    return tuple(order) if order and len(order) > 1 else None


def _read_block(block: str, json: bool = False) -> list[int] | None:
    if json and (orders := json_orders(block, _read_block)):
        return orders[-1][2]
    for reader in (from_header, from_pairs):
        order = reader(block)
        if order is not None:
            return order
    if runs := item_runs(block, STATEMENT):  # one list in a block, or none read
        orders = {tuple(order) for order, *_ in runs}
        return list(orders.pop()) if len(orders) == 1 else []
    for reader in (from_references, from_sequence, from_lines):
        order = reader(block)
        if order is not None:
            return order
    order = committed(statements(block), block)
    return list(order) if order else None


def _candidates(text: str) -> list[Candidate]:
    """Every order stated outside the blocks, each reader in turn claiming its spans so that
    the readers after do not read them again."""
    found: list[Candidate] = []
    found += [Candidate(s, e, tuple(o)) for s, e, o in json_orders(text, _read_block) if len(o) > 1]
    text = _claim(text, [(c.start, c.end) for c in found])
    for reader in (_header, pair_sets, _items):
        more = [
            Candidate(s, e, tuple(o) or None, understood) for o, s, e, understood in reader(text)
        ]
        found += more
        text = _claim(text, [(c.start, c.end) for c in more])  # once per reader: linear
    for reader in (statements, reference_runs, offered_runs):
        more = reader(text)
        found += more
        text = _claim(text, [(c.start, c.end) for c in more])
    return found


def _items(text: str) -> list[tuple[list[int], int, int, bool]]:
    return item_runs(text, STATEMENT)


def _header(text: str) -> list[tuple[list[int], int, int, bool]]:
    found = header_found(text)
    return [(*found, True)] if found else []
