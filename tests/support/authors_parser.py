"""A clean-room reference of how the SPLICE authors' release reads an order answer: the
yardstick of tests/splice_metric/test_order_parser_reference.py, never product code.

Written from the rules of ``utils/evaluation.py`` in github.com/prokajevo/OoOMLLM (commit
e766de654794ba3452b0d141933004d340e88780), as read there and as its scripts call it; no
line of it is copied (this workplace does not commit code copied from fetched repositories,
so a verbatim vendored copy was not possible). The rules it implements:

- the answer block is the first well-formed ``<order>...</order>`` (any case), else the first
  text between two ``<order>`` tags (a missing slash), else between two ``</order>`` tags;
- an answer naming clips as ``Video N`` is read as the clips it names, each at its first
  mention, from the whole answer (``qwen2_vl.py`` reads the whole reply this way);
- otherwise the block's tokens (split at commas and white space, ``hh:mm`` times removed)
  that are labels of the row (``1`` .. ``k`` for the numeric label scripts) are the order.

The original is licensed BSD-3-Clause, copyright (c) 2025 Wilfred Okajevo; its licence,
with the notice and disclaimer it asks to keep, is beside this file
(``authors_parser.LICENSE``).
"""

from __future__ import annotations

import re

_WELL_FORMED = re.compile(r"<order>(.*?)</order>", re.IGNORECASE | re.DOTALL)
_NO_SLASH = re.compile(r"<order>(.*?)<order>", re.DOTALL)
_TWO_CLOSING = re.compile(r"</order>(.*?)</order>", re.DOTALL)
_VIDEO = re.compile(r"\bvideo\s?(\d+)\b", re.IGNORECASE)
_TIME = re.compile(r"\d{2}:\d{2}")


def order_block(answer: str) -> str | None:
    """The tagged block the authors' scripts take, stripped, or None."""
    for pattern in (_WELL_FORMED, _NO_SLASH, _TWO_CLOSING):
        if found := pattern.search(answer):
            return found.group(1).strip()
    return None


def authors_order(answer: str, num_clips: int) -> list[int] | None:
    """The order the authors' release reads from ``answer`` (None: nothing read)."""
    named = list(dict.fromkeys(int(n) for n in _VIDEO.findall(answer)))
    if named:
        return named
    block = order_block(answer)
    if block is None:
        return None
    labels = {str(k) for k in range(1, num_clips + 1)}
    tokens = [t for t in re.split(r"[,\s]+", _TIME.sub("", block)) if t in labels]
    return [int(t) for t in tokens] or None
