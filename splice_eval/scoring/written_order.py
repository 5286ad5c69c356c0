"""``splice baseline written-order``: the clips in the order the source itself writes its
task's steps, read from the source's own files (the ones ``splice build --annotations``
read), never from the build's answers.

CrossTask's task cards (``tasks_primary.txt``) list each task's steps in the order wikiHow
writes them; HT-Step's ``taxonomy.csv`` numbers each variation's steps (``step_index``).
This is the non-COIN counterpart of ``taxonomy-prior`` (COIN's taxonomy): how much of the
text config a language prior solves with no look at the clips. A source that writes no
order (``steps``, YouTube-recipe sentences, Goal-Step) has no such baseline, and both
baselines say so in one line (`unavailable`).

Each adapter that has a written order exposes ``written_orders(path) -> {task: (steps in
order, ...)}``, one sequence per variant (HT-Step's variations). A video is ordered by the
variant holding most of its captions (the first on ties); a caption the variant lacks goes
after the known ones, and captions at the same position keep their label order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from splice_build.errors import UserError

NAME = "written-order"
Orders = Mapping[str, Sequence[Sequence[str]]]  # task -> each variant's steps, in order


def unavailable(name: str, source: str) -> UserError | None:
    """Why baseline ``name`` cannot answer a build of ``source`` (None: it can)."""
    from splice_build.sources import registry

    title = registry.card(source).title
    written = hasattr(registry.adapter(source), "written_orders")
    built = f"this build is --source {source} ({title})"
    if name == "taxonomy-prior" and source != "coin":
        hint = f"; try {NAME} --annotations PATH" if written else ""
        return UserError(
            f"taxonomy-prior: unavailable: {built}, and COIN's taxonomy orders COIN's "
            f"tasks only{hint}"
        )
    if name == NAME and source == "coin":
        return UserError(f"{NAME}: COIN's written order is its taxonomy; use taxonomy-prior")
    if name == NAME and not written:
        return UserError(f"{NAME}: unavailable: {built}, which writes no order of its steps")
    return None


def read_orders(source: str, annotations: Path | None) -> Orders:
    """Every task's written step order, from the source's files at ``annotations``."""
    from splice_build.sources import registry

    refused = unavailable(NAME, source)
    if refused is not None:
        raise refused
    if annotations is None:
        raise UserError(
            f"{NAME}: needs --annotations PATH, the {registry.card(source).title} files the "
            "build read (the written order is the source's, not the build's)"
        )
    registry.check_source(source, annotations)
    return registry.adapter(source).written_orders(annotations)


def written_order(orders: Orders, task: str, captions: Sequence[str]) -> list[int]:
    """Labels (1-based) sorted by their caption's place in the task's written order."""
    variants = orders.get(task, ())
    wanted = [c.strip() for c in captions]
    best: Sequence[str] = max(variants, key=lambda v: sum(c in v for c in wanted), default=())
    position = {label: i for i, label in enumerate(best)}
    keyed = [(position.get(c, len(best)), k) for k, c in enumerate(wanted, 1)]
    return [k for _, k in sorted(keyed)]
