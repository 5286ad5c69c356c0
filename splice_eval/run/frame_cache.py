"""Sampled frames kept on disk, so a sweep of several models and probes decodes each clip once.

The cache holds a clip's frames as sampled, before any probe: probes are pure and cheap
(``probes.apply_probe``), so one decode serves every probe and every model. The key is the
clip's sha256 and the sampling settings (``sample_frames`` keyword arguments). Entries are
``.npz`` files written to a temporary name and renamed into place, so a concurrent run sees
a whole file or none; a file that does not read back whole (cut short, damaged: the zip's
CRCs catch it) is removed and decoded again. Past ``max_bytes`` the least recently used
entries (by modification time, touched on every hit) are removed. The folder holds nothing
else, so deleting it is always safe.

A cache is a help, never a condition: a folder that cannot be written (read-only, no
permission, full, an entry's path taken by a folder) is still read where it can be, the
frames are decoded afresh where it cannot, and the first refusal is said in one line
(``unwritable``); no row ever fails for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from splice_build.atomic import atomic_path
from splice_eval.run.sampling import Frames, clip_bytes, sample_frames

DEFAULT_MAX_BYTES = 2 * 1024**3
SUFFIX = ".frames.npz"


CACHE_ENV = "SPLICE_FRAME_CACHE"


def default_dir() -> Path:
    """``$SPLICE_FRAME_CACHE``, else ``$XDG_CACHE_HOME/splice/frames``, else
    ``~/.cache/splice/frames``."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "splice" / "frames"


@dataclass
class CacheStats:
    """What the cache did, counted (not timed): decodes are calls to ``sample_frames``."""

    hits: int = 0
    decodes: int = 0
    redone: int = 0  # entries found damaged and decoded again
    evicted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + 1)


def cache_key(data: bytes, frame_kwargs: Mapping[str, Any]) -> str:
    """The entry name of a clip's frames under these sampling settings."""
    settings = json.dumps(dict(frame_kwargs), sort_keys=True)
    clip = hashlib.sha256(data).hexdigest()
    return hashlib.sha256(f"{clip}\x1f{settings}".encode()).hexdigest()


class FrameCache:
    """``sample`` is ``sample_frames`` through the cache; safe across threads and processes."""

    def __init__(self, folder: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = Path(folder).expanduser()
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._total: int | None = None  # bytes in the folder as last counted, plus writes since
        self._lock = threading.Lock()
        self.unwritable = ""  # why the first write was refused ("" while none was)

    def path_of(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}{SUFFIX}"

    def sample(self, clip: Any, frame_kwargs: Mapping[str, Any]) -> Frames:
        data = clip_bytes(clip)
        path = self.path_of(cache_key(data, frame_kwargs))
        found = self.read_entry(path)
        if found is not None:
            self.stats.add("hits")
            return found
        self.stats.add("decodes")
        frames = sample_frames(data, **frame_kwargs)
        try:
            size = self._write(path, frames)
        except OSError as exc:  # read-only, no permission, full, a folder in the way
            self._refused(path, exc)
            return frames
        with self._lock:
            self._total = self._count() if self._total is None else self._total + size
            if self._total > self.max_bytes:
                self._evict()
        return frames

    def read_entry(self, path: Path) -> Frames | None:
        """An entry's frames, or None when it is absent or does not read back whole (then
        it is removed, to be decoded again)."""
        try:
            with np.load(path, allow_pickle=False) as npz:
                frames = Frames(npz["frames"], npz["times"])
        except FileNotFoundError:
            return None
        except Exception:  # cut short or damaged: ours to remove, and to decode again
            self.stats.add("redone")
            try:
                path.unlink(missing_ok=True)
            except OSError:  # read-only, or a folder in the entry's place: decoded anyway
                pass
            return None
        try:
            os.utime(path)  # most recently used
        except OSError:
            pass  # evicted meanwhile, or a read-only cache: the frames are in hand
        return frames

    def _refused(self, path: Path, exc: OSError) -> None:
        """The first refused write, said once: the run goes on decoding afresh."""
        with self._lock:
            if self.unwritable:
                return
            self.unwritable = exc.strerror or type(exc).__name__
        print(
            f"splice: frame cache {self.folder} cannot be written ({self.unwritable}: "
            f"{path.name}); frames are decoded afresh where it has none",
            file=sys.stderr,
        )

    def _write(self, path: Path, frames: Frames) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            with tmp.open("wb") as fh:
                np.savez(fh, frames=frames.frames, times=frames.times)
            size = tmp.stat().st_size
        return size

    def entries(self) -> list[Path]:
        return sorted(self.folder.glob(f"*/*{SUFFIX}"))

    def _sized(self) -> list[tuple[int, int, Path]]:
        sized = []
        for path in self.entries():
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            sized.append((st.st_mtime_ns, st.st_size, path))
        return sized

    def _count(self) -> int:
        return sum(size for _t, size, _p in self._sized())

    def _evict(self) -> None:
        """Least recently used first, until the folder fits ``max_bytes`` (counted afresh:
        other runs write here too)."""
        sized = self._sized()
        total = sum(size for _t, size, _p in sized)
        for _t, size, path in sorted(sized):
            if total <= self.max_bytes:
                break
            try:
                path.unlink(missing_ok=True)
            except OSError:
                continue  # a read-only cache keeps what it holds
            total -= size
            self.stats.add("evicted")
        self._total = total
