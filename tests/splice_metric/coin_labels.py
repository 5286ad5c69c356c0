"""COIN's real step labels, as the build bundles them (``splice_build``'s default
annotation file): the vocabulary the parser's tests draw captions from, never made-up words."""

from __future__ import annotations

import json
from functools import cache

from splice_build.stages.ingest import BUNDLED_ANNOTATIONS


@cache
def videos() -> tuple[tuple[str, ...], ...]:
    """Each video's step labels in order (videos of 2..7 steps, the benchmark's range)."""
    database = json.loads(BUNDLED_ANNOTATIONS.read_text(encoding="utf-8"))["database"]
    steps = [tuple(a["label"] for a in v["annotation"]) for _, v in sorted(database.items())]
    return tuple(s for s in steps if 2 <= len(s) <= 7)


@cache
def labels() -> tuple[str, ...]:
    """Every distinct step label, sorted (739 in the bundled file)."""
    database = json.loads(BUNDLED_ANNOTATIONS.read_text(encoding="utf-8"))["database"]
    return tuple(sorted({a["label"] for v in database.values() for a in v["annotation"]}))
