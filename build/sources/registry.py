"""NAME -> adapter: the ``--source`` names and the one way a build reads a source.

Every adapter module has ``SOURCE`` (its `base.SourceCard`), ``looks_like(path)`` (what the
files look like, in words, when they look like this source's; cheap: a file's head, a
folder's names) and ``load(path, options) -> base.IngestResult``. Before loading, the files
given are checked against the source named: a wrong ``--source`` is refused in one line
naming what the files look like.
"""

from __future__ import annotations

import gc
import importlib
from pathlib import Path
from types import ModuleType

from splice_build.errors import UserError
from splice_build.sources.base import IngestResult, SourceCard, SourceOptions

# name -> module, in the order `--help` and docs/sources.md list them; coin is the default
ADAPTERS: dict[str, str] = {
    "coin": "splice_build.sources.coin",
    "crosstask": "splice_build.sources.crosstask",
    "youcook2": "splice_build.sources.youcook2",
    "htstep": "splice_build.sources.htstep",
    "goalstep": "splice_build.sources.goalstep",
    "steps": "splice_build.sources.steps",
}
DEFAULT = "coin"


def adapter(name: str) -> ModuleType:
    if name not in ADAPTERS:
        raise UserError(f"--source {name!r}: not a source; one of {', '.join(ADAPTERS)}")
    return importlib.import_module(ADAPTERS[name])


def card(name: str) -> SourceCard:
    """The source's card (`base.SourceCard`) by ``--source`` name."""
    return adapter(name).SOURCE


def downloadable(name: str) -> None:
    """Refuse ``splice download`` of a source whose videos are local only (its adapter's
    ``NO_DOWNLOAD`` says why), in one line."""
    why = getattr(adapter(name), "NO_DOWNLOAD", "")
    if why:
        raise UserError(f"--source {name}: nothing to download: {why}")


def check_source(name: str, path: Path) -> None:
    """Refuse files that look like another source's than ``name``'s, naming what they look
    like (files that look like none go to the adapter, which names what is wrong)."""
    chosen = adapter(name)
    if chosen.looks_like(path):
        return
    for other in ADAPTERS:
        if other == name:
            continue
        looks = adapter(other).looks_like(path)
        if looks:
            raise UserError(
                f"--source {name}: {path} looks like {looks}, not {chosen.SOURCE.title}; "
                f"pass --source {other}"
            )


def load(name: str, path: str | Path, options: SourceOptions | None = None) -> IngestResult:
    """The source's annotations at ``path`` (a file or a release folder), read by its
    adapter, after `check_source`."""
    path = Path(path)
    check_source(name, path)
    # Reading makes hundreds of thousands of small acyclic objects (JSON values, records):
    # the cyclic collector's passes over them grow with what is already read, and made the
    # per-video cost at 20,000 entries up to twice that at 2,000 (bench/ingest.py). Nothing
    # read forms a cycle, so it is paused while reading and resumed after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return adapter(name).load(path, options)
    finally:
        if enabled:
            gc.enable()


__all__ = ["ADAPTERS", "DEFAULT", "adapter", "card", "check_source", "downloadable", "load"]
