"""The release's layout read and grouped: which files are whose parts, and a video's parts
as its steps 1..n or not at all.

The release is loose clips ``splice_video_segments/<2-digit folder>/<youtube_id>_part_<k>.mp4``
where ``k`` is the clip's chronological position; there is no metadata file. The parts of a
video can sit in different folders. A video is taken only when its parts are exactly 1..n
and n is its COIN step count (part k is then step k); nothing is guessed otherwise.
"""

from __future__ import annotations

import errno
import re
import stat
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from splice_build.errors import UserError, os_error_words
from splice_build.records import SkipVideo
from splice_build.stages.sources import walk_once

SEGMENTS_DIR = "splice_video_segments"
PART_NAME = re.compile(r"^(?P<video_id>[A-Za-z0-9_-]+)_part_(?P<part>\d+)\.mp4$")
STAGE = "import"  # the report's stage of every video the import skips


@dataclass(frozen=True)
class ReleasePart:
    video_id: str
    part: int  # chronological position, 1-based, as the file name says
    path: Path  # absolute: workers (Ray's above all) may run in another folder
    rel: str  # path inside the release, for reports and the manifest


@dataclass(frozen=True)
class ReleaseScan:
    parts: dict[str, tuple[ReleasePart, ...]]  # video id -> its parts, sorted by (part, rel)
    ignored: tuple[str, ...]  # files under the layout that are not <id>_part_<k>.mp4
    # Entries that cannot be read (a link to a folder or file that is not there), each as
    # "<rel> (why)": the report says them, since a part under them is missing.
    unreadable: tuple[str, ...] = ()


def segments_root(source: Path) -> Path:
    """The ``splice_video_segments`` folder of a release folder (or the folder itself)."""
    if (source / SEGMENTS_DIR).is_dir():
        return source / SEGMENTS_DIR
    if source.name == SEGMENTS_DIR and source.is_dir():
        return source
    raise UserError(f"{source}: no {SEGMENTS_DIR}/ folder (the release's layout)")


def scan_release(source: Path) -> ReleaseScan:
    """Every file of every folder of the layout, grouped by YouTube id.

    Linked sub-folders are followed (a user may keep part of a download on another disk,
    as for ``splice build --videos``); each real folder is read once, so a link back into
    the release neither loops nor counts a part twice.
    """
    root = segments_root(Path(source))
    base = root.parent
    grouped: dict[str, list[ReleasePart]] = defaultdict(list)
    ignored: list[str] = []
    unreadable: list[str] = []
    for path in _files(root):
        rel = path.relative_to(base).as_posix()
        why = _unreadable(path)
        if why:
            unreadable.append(f"{rel} ({why})")
            continue
        m = PART_NAME.match(path.name)
        if m is None:
            ignored.append(rel)
            continue
        vid = m["video_id"]
        grouped[vid].append(ReleasePart(vid, int(m["part"]), path.absolute(), rel))
    parts = {
        vid: tuple(sorted(found, key=lambda p: (p.part, p.rel)))
        for vid, found in sorted(grouped.items())
    }
    return ReleaseScan(parts=parts, ignored=tuple(ignored), unreadable=tuple(unreadable))


def _files(root: Path) -> list[Path]:
    """The layout's files (and dangling links), hidden ones left out, links followed."""
    found = []
    for folder, dirs, names in walk_once(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [Path(folder) / n for n in names if not n.startswith(".")]
    return sorted(found)


def _unreadable(path: Path) -> str:
    """Why an entry the walk listed as a file is not one to read ('' when it is a file)."""
    try:
        info = path.stat()
    except OSError as err:
        words = os_error_words(err)
        if err.errno == errno.ENOENT and path.is_symlink():
            return "a link to a folder or file that does not exist"
        return words
    return "" if stat.S_ISREG(info.st_mode) else "not a regular file"


def chronological_parts(parts: tuple[ReleasePart, ...], num_steps: int) -> tuple[ReleasePart, ...]:
    """The parts as steps 1..n, or ``SkipVideo`` when they are not exactly 1..num_steps."""
    by_number: dict[int, list[ReleasePart]] = defaultdict(list)
    for p in parts:
        by_number[p.part].append(p)
    for number, same in sorted(by_number.items()):
        if len(same) > 1:
            raise SkipVideo(
                STAGE,
                f"extra part: part {number} appears {len(same)} times "
                f"({', '.join(p.rel for p in same)})",
            )
    if 0 in by_number:
        raise SkipVideo(STAGE, f"extra part: {by_number[0][0].rel} (parts count from 1)")
    n = max(by_number)
    missing = [k for k in range(1, n + 1) if k not in by_number]
    if missing:
        raise SkipVideo(
            STAGE,
            f"missing part {', '.join(map(str, missing))} of 1..{n} "
            f"(found {', '.join(map(str, sorted(by_number)))})",
        )
    if n != num_steps:
        raise SkipVideo(STAGE, f"step count differs: parts 1..{n} but COIN has {num_steps} steps")
    return tuple(by_number[k][0] for k in range(1, n + 1))
