"""How far a run is: rows done of the total, with an ETA, wherever stderr goes.

On a terminal, tqdm's bar. Off one (a log file, ``nohup``, CI), a bar's redraws are noise
or never reach the reader, so a line of its own at least every ``SPLICE_PROGRESS_SECONDS``
(30 by default), from a clock of its own: a local model on a CPU may take minutes over one
row, and the line still says the run is alive. Rows already in the file (a resumed run)
count as done but not toward the rate the ETA comes from.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

from tqdm import tqdm

EVERY_ENV = "SPLICE_PROGRESS_SECONDS"
EVERY = 30.0  # seconds between two lines off a terminal


def every_from_env() -> float:
    """``SPLICE_PROGRESS_SECONDS`` when it is a positive number, else 30."""
    try:
        every = float(os.environ.get(EVERY_ENV, EVERY))
    except ValueError:
        return EVERY
    return every if every > 0 else EVERY


def clock(seconds: float) -> str:
    """``H:MM:SS``."""
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def rows_total(rows: Any, limit: int | None) -> int | None:
    """The rows a run goes through, from the build's card (None: unknown)."""
    splits = getattr(getattr(rows, "info", None), "splits", None) or {}
    known = [s.num_examples for s in splits.values()]
    total = sum(known) if known and all(known) else None
    if limit is not None:
        return limit if total is None else min(total, limit)
    return total


class RowProgress:
    """``update`` once per row; ``close`` ends the bar's line (before any message after it)
    or stops the clock."""

    def __init__(
        self,
        total: int | None,
        *,
        desc: str = "rows answered",
        prefix: str = "splice run",
        stream: TextIO | None = None,
        every: float | None = None,
    ) -> None:
        self.total, self.desc, self.prefix = total, desc, prefix
        self.stream = stream or sys.stderr
        self.done = self.resumed = 0
        self.start = time.monotonic()
        self.lock = threading.Lock()
        self.bar: Any = None
        self.stopped = threading.Event()
        self.ticker: threading.Thread | None = None
        if getattr(self.stream, "isatty", lambda: False)():
            self.bar = tqdm(desc=desc, unit="row", total=total, file=self.stream)
        else:
            self.every = every if every is not None else every_from_env()
            self.ticker = threading.Thread(target=self._tick, name="splice-progress", daemon=True)
            self.ticker.start()

    def update(self, resumed: bool = False) -> None:
        with self.lock:
            self.done += 1
            self.resumed += resumed
        if self.bar is not None:
            self.bar.update()

    def line(self) -> str:
        """``splice run: 12/24 rows answered, 0:01:10 elapsed, ETA 0:01:10``."""
        with self.lock:
            done, timed = self.done, self.done - self.resumed
        elapsed = time.monotonic() - self.start
        total = "?" if self.total is None else str(self.total)
        eta = "unknown"
        if self.total is not None and timed:
            eta = clock(elapsed / timed * max(self.total - done, 0))
        return f"{self.prefix}: {done}/{total} {self.desc}, {clock(elapsed)} elapsed, ETA {eta}"

    def _tick(self) -> None:
        while not self.stopped.wait(self.every):
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        """Idempotent; off a terminal, a last line says where the run ended."""
        if self.bar is not None:
            self.bar.close()
        if self.ticker is not None and not self.stopped.is_set():
            self.stopped.set()
            self.ticker.join()
            print(self.line(), file=self.stream, flush=True)
        self.stopped.set()
