"""The reader of order answers given as JSON: an object's ``order`` at any depth, or a list
that is the whole answer or a whole code fence. Each value is decoded at most once, from the
answer's end, so junk and deep nesting cost linear time and never raise."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from .order_words import CLIP_WORD, same_kind

_FENCE = re.compile(r"```[ \t]*(?:json|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_JSON_ITEM = re.compile(rf"\s*(?:{CLIP_WORD})?(\d+|[a-z])\s*")
_JSON_MAX_OBJECTS = 200  # objects tried per answer, from its end: bounds the cost of junk
_JSON_MAX_DEPTH = 3
_DECODER = json.JSONDecoder()
_NOT_JSON = (ValueError, RecursionError)  # deep nesting exhausts the decoder's recursion


def json_orders(
    block: str, read_text: Callable[[str], list[int] | None]
) -> list[tuple[int, int, list[int]]]:
    """Every order a JSON value of the block gives, as (start, end, order), in the order
    they appear; ``read_text`` reads an ``order`` given as a string."""
    if "{" not in block and "[" not in block:
        return []
    found: list[tuple[int, int, Any]] = []  # a bare list counts only as the whole answer or a fence
    wholes = [(0, len(block), block), *((*m.span(), m.group(1)) for m in _FENCE.finditer(block))]
    for start, end, whole in wholes:
        with contextlib.suppress(*_NOT_JSON):
            found.append((start, end, json.loads(whole)))
    end = -1
    for at in [m.start() for m in re.finditer(r"\{", block)][-_JSON_MAX_OBJECTS:]:
        if at >= end:  # not inside an object already decoded
            with contextlib.suppress(*_NOT_JSON):
                value, end = _DECODER.raw_decode(block, at)
                found.append((at, end, value))
    orders = [(start, end, _order_of_json(value, 0, read_text)) for start, end, value in found]
    return sorted((start, end, order) for start, end, order in orders if order)


def from_json(block: str, read_text: Callable[[str], list[int] | None]) -> list[int] | None:
    """The order of the last JSON value in the block that holds one."""
    orders = json_orders(block, read_text)
    return orders[-1][2] if orders else None


def _order_of_json(value: Any, depth: int, read_text: Callable) -> list[int] | None:
    if isinstance(value, list):
        return _json_labels(value)
    if not isinstance(value, dict) or depth > _JSON_MAX_DEPTH:
        return None
    for key, item in value.items():
        if isinstance(key, str) and key.strip().lower() == "order":
            if isinstance(item, str):  # read as a tag's content, without JSON again
                return read_text(item.lower())
            return _json_labels(item) if isinstance(item, list) else None
    nested = (
        _order_of_json(item, depth + 1, read_text)
        for item in value.values()
        if isinstance(item, dict)
    )
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
    return same_kind(tokens)
