"""The page's form (a position per part, an "unknown" box) to and from a sheet cell.

Positions are what the annotator types: position 1 for the part that happened first. A
cell is the sheet's part order, first to last. Anything that is not a full permutation of
1..n is refused with a sentence for the page, and nothing is saved.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..sheets import format_cell, parse_cell


class FormError(ValueError):
    """A submission the page refuses; the message is shown to the annotator."""


def cell_from_form(positions: Sequence[float | int | None], unk: bool) -> str:
    """``positions[k - 1]`` is the position typed for part k (None when left empty)."""
    n = len(positions)
    if unk and all(p is None for p in positions):
        return format_cell(True, None)
    missing = [k for k, p in enumerate(positions, 1) if p is None]
    if missing:
        raise FormError(
            f"Give every part a position from 1 to {n} (missing: part "
            f"{', '.join(map(str, missing))}), or tick unknown with no positions."
        )
    numbers = [int(p) for p in positions if p is not None]
    if any(p != int(p) for p in positions if p is not None) or sorted(numbers) != list(
        range(1, n + 1)
    ):
        raise FormError(
            f"Positions must be 1 to {n}, each used once; got {', '.join(map(str, numbers))}."
        )
    order = tuple(k for _, k in sorted(zip(numbers, range(1, n + 1), strict=True)))
    return format_cell(unk, order)


def form_from_cell(cell: str | None, n: int) -> tuple[list[int | None], bool]:
    """A saved cell back as the form showed it, so a returning annotator sees their answer."""
    if not cell:
        return [None] * n, False
    unk, order = parse_cell(cell)
    if order is None:
        return [None] * n, unk
    positions: list[int | None] = [None] * n
    for position, part in enumerate(order, 1):
        positions[part - 1] = position
    return positions, unk
