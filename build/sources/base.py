"""The records every source adapter shares: what a source is (`SourceCard`, named on the
build's card and covered by its ``build_id``), the options a build gives the rules
(`SourceOptions`), a video as a source file states it before the rules (`RawVideo`), and
what ingest learned from one source (`IngestResult`).

A damaged file is refused whole (`damaged`): one line naming the file, the entry and the
field; skips are only for well-formed entries that break a rule.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_build.records import Skip, VideoEntry


@dataclass(frozen=True)
class SourceCard:
    """What a build's card says of its source (docs/sources.md has the same table)."""

    name: str  # the --source name
    title: str  # as the source calls itself, e.g. "CrossTask"
    adapter_version: int  # bumped whenever the adapter would read a file differently
    license: str  # the Hub card's licence id ("other" when there is no single one)
    license_note: str  # the licence in words, including what is unclear or unverified
    citation: str
    videos: str  # where the source's videos come from, for the card's "Source videos"
    default_domain: str  # the `domain` of a source without domains

    def identity(self) -> dict[str, Any]:
        """The card's ``splice_build.source``: what ``build_id`` covers of a non-COIN source."""
        return {
            "name": self.name,
            "title": self.title,
            "adapter_version": self.adapter_version,
            "license": self.license,
            "license_note": self.license_note,
            "citation": self.citation,
        }


REPEATED_STEPS = ("merge", "keep")
LEVELS = ("step", "substep")


@dataclass(frozen=True)
class SourceOptions:
    """The rules' settings; None takes the source's default (`rules.defaults`)."""

    repeated_steps: str | None = None  # "merge" (every source but COIN) or "keep" (COIN)
    min_step_seconds: float | None = None  # 1.0 (every source but COIN: 0, as published)
    level: str = "step"  # Goal-Step: "step" or "substep"


@dataclass(frozen=True)
class RawStep:
    """One step as its source file states it, times in seconds."""

    step_id: int  # the source's own integer id, else `stable_step_id`
    label: str
    start: float
    end: float
    background: bool = False  # a source's non-step label (Breakfast's SIL): rule background-label
    dropped: str = ""  # a source rule's code dropping this step (Goal-Step: irrelevant-step)


@dataclass(frozen=True)
class RawVideo:
    """One video as its source file states it, before the shared rules."""

    video_id: str
    task: str
    domain: str
    duration: float | None  # None: the source states none (the last step's end is used)
    video_url: str
    steps: tuple[RawStep, ...]  # as listed in the file
    where: str = ""  # the entry in the file, for reasons ("annotations/113766__uAZw6L_R5g.csv")


@dataclass(frozen=True)
class IngestResult:
    """Everything ingest learned from one source's annotations."""

    path: Path
    sha256: str  # of the file's bytes (of a folder: of the files read, `files_sha256`)
    entries: list[VideoEntry]  # valid entries, sorted by video_id
    skips: list[Skip]  # one per rejected video id, sorted by video_id
    source: SourceCard | None = None  # None: COIN (`coin.SOURCE`)
    # steps the rules removed from videos that stayed, by rule code (background-label, ...)
    removed: dict[str, int] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the rules' settings applied


def damaged(path: str | Path, entry: str, field_name: str, what: str) -> UserError:
    """THE refusal of a damaged source file: one line naming the file, entry and field."""
    return UserError(
        f"{path}: entry {entry}: field {field_name}: {what}; the file is refused whole"
    )


# Times written in another unit: "0:05" (a clock), "1,5" (a decimal comma), "12f"...
_CLOCK = re.compile(r"^\s*\d+:\d")
# The latest time a source without durations may state, seconds: past it a time is taken
# for milliseconds or frames (Ego4D's longest recordings last a few hours).
MAX_SECONDS = 36_000.0


def seconds(value: Any, path: str | Path, entry: str, field_name: str) -> float:
    """A time in seconds as a source states it (a number, or a number in a CSV cell), else
    the file is damaged: text like ``0:05`` is a clock, not seconds."""
    if isinstance(value, str):
        text = value.strip()
        if _CLOCK.match(text):
            raise damaged(path, entry, field_name, f"{text!r} is a clock time; seconds expected")
        try:
            value = float(text)
        except ValueError:
            what = f"{text!r} is not a number of seconds" if text else "empty"
            raise damaged(path, entry, field_name, what) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise damaged(path, entry, field_name, f"{value!r} is not a number of seconds")
    if not math.isfinite(value) or value < 0:
        raise damaged(path, entry, field_name, f"{value!r} is not a time in seconds")
    return float(value)


def check_units(
    path: str | Path, entry: str, field_name: str, end: float, duration: float | None
) -> None:
    """A segment past its video's duration (or, without one, past `MAX_SECONDS`) is a file
    in another unit (milliseconds, frames): refused whole."""
    limit = MAX_SECONDS if duration is None else duration + SEGMENT_TOLERANCE
    if end > limit:
        said = f"the video's duration {duration:g} s" if duration is not None else "10 hours"
        raise damaged(
            path, entry, field_name,
            f"{end:g} is past {said}: times in another unit (milliseconds, frames)? seconds "
            "expected",
        )  # fmt: skip


SEGMENT_TOLERANCE = 1.0  # seconds a segment may pass `duration` (COIN marks whole seconds)
_STEP_ID_BITS = 31  # int32 column


def stable_step_id(task: str, label: str) -> int:
    """The step id of a source without ids: the first 31 bits of sha256(task, label), the
    same for the same caption of the same task in any file and any build."""
    digest = hashlib.sha256(f"{task}\n{label}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> (32 - _STEP_ID_BITS)


def files_sha256(files: list[Path], read: dict[Path, bytes] | None = None) -> str:
    """The digest of the files a source was read from, each by its path under their
    common folder (so the same release anywhere gives the same digest); ``read``: the bytes
    of those the adapter has read already (each file is read once)."""
    read = read or {}
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    named = sorted((Path(os.path.relpath(f, root)).as_posix(), f) for f in files)
    digest = hashlib.sha256()
    for name, f in named:
        data = read[f] if f in read else Path(f).read_bytes()
        digest.update(f"{name}\0".encode())
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


__all__ = [
    "LEVELS",
    "MAX_SECONDS",
    "REPEATED_STEPS",
    "IngestResult",
    "RawStep",
    "RawVideo",
    "SourceCard",
    "SourceOptions",
    "check_units",
    "damaged",
    "files_sha256",
    "seconds",
    "stable_step_id",
]
