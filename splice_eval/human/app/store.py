"""Each annotator's answers file: a ``folder,order`` sheet that ``annotate ingest`` reads.

Saved whole on every submit, atomically (`splice_build.atomic`: a temporary file in the
same folder, fsynced, then renamed over the sheet), so a crash or a closed tab leaves the
last complete sheet. Writers of one annotator are serialised twice: a thread lock (Gradio
runs handlers in threads) and an ``flock`` on a lock file beside the sheet (two servers on
one answers folder), so two submits at once cannot lose each other's line. Different
annotators never share a file.
"""

from __future__ import annotations

import csv
import fcntl
import io
import threading
from contextlib import contextmanager
from pathlib import Path

from splice_build.atomic import atomic_path

from ..sheets import SHEET_HEADER, read_sheet


class AnswerStore:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def path(self, annotator: str) -> Path:
        return self.folder / f"{annotator}.csv"

    def load(self, annotator: str) -> dict[int, str]:
        """folder -> saved cell (``[2, 1]``, ``unk``, ``unk [2, 1]``); empty if none yet."""
        path = self.path(annotator)
        if not path.exists():
            return {}
        return {a.folder: a.raw for a in read_sheet(path)}

    def save(self, annotator: str, folder: int, cell: str) -> dict[int, str]:
        """Record one answer (replacing an earlier one of that folder); returns all."""
        with self._locked(annotator):
            answers = self.load(annotator)
            answers[folder] = cell
            self._write(self.path(annotator), answers)
            return answers

    def drain(self) -> None:
        """Return once no save of this store is under way (a server stopping waits here, so
        it never ends in the middle of a sheet's write)."""
        with self._guard:
            locks = list(self._locks.values())
        for lock in locks:
            with lock:
                pass

    @contextmanager
    def _locked(self, annotator: str):
        with self._guard:
            lock = self._locks.setdefault(annotator, threading.Lock())
        self.folder.mkdir(parents=True, exist_ok=True)
        with lock, (self.folder / f".{annotator}.lock").open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @staticmethod
    def _write(path: Path, answers: dict[int, str]) -> None:
        buf = io.StringIO(newline="")
        writer = csv.writer(buf)
        writer.writerow(SHEET_HEADER)
        for folder in sorted(answers):
            writer.writerow([folder, answers[folder]])
        with atomic_path(path, fsync=True) as tmp:
            tmp.write_text(buf.getvalue(), encoding="utf-8", newline="")
