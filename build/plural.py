"""Counts as words: "1 video", "2 videos". What the commands print about a build is read by
people building one video as often as thousands."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, the noun plural unless ``n`` is 1 (``plural``: an irregular one)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
