"""A file written whole or not at all: into a temporary name beside it, renamed over it
only once complete, so that a reader, or a rerun after a kill, finds the previous file or
the new one, never half of one. The one helper for it (clips, records, shards' neighbours,
stand-ins, caches, answer sheets); moving folders (a cut's commit, the output's swap) is
not this job.

Imports nothing of the project: the annotation Space vendors it as it is."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: Path, *, fsync: bool = False) -> Iterator[Path]:
    """A temporary path beside ``path`` to write the file into: renamed to ``path`` when the
    block ends without an exception (its bytes flushed to disk first with ``fsync``, for a
    record that must outlive a power cut), removed when it raises.

    The name is hidden (a leading dot, so folder walks skip it) and unique to this writer
    (process and a random part: threads and processes never share one)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # a read-only folder: nothing was written there
            tmp.unlink(missing_ok=True)
        raise
