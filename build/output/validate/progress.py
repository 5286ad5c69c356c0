"""How a validation shows it is alive: a bar of clips with their rate (tqdm, as the build's
bars), or, without bars, nothing between the one-line statuses its caller prints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tqdm.auto import tqdm

# An executor's ``run``: maps a top-level ``fn(task, threads)`` over tasks.
Runner = Callable[[Callable[[Any, int], Any], Iterable[Any]], Iterator[Any]]


class ClipProgress:
    """Clips checked so far, how many of them were decoded, and clips per second."""

    def __init__(self, total: int | None, *, enabled: bool = True, desc: str = "validate"):
        self.bar = tqdm(total=total, unit="clip", disable=not enabled, desc=desc)
        self.start = time.monotonic()
        self.clips = 0
        self.decoded = 0

    def update(self, clips: int, decoded: int) -> None:
        self.clips += clips
        self.decoded += decoded
        elapsed = max(time.monotonic() - self.start, 1e-9)
        self.bar.set_postfix(
            clips_s=f"{self.clips / elapsed:.1f}", decoded=self.decoded, refresh=False
        )
        self.bar.update(clips)

    def close(self) -> None:
        self.bar.close()
