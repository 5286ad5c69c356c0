"""Where the source videos are: one walk of the videos folder, wherever a downloader put them.

COIN's own ``download_videos.py`` saves ``<recipe_type>/<id>.mp4``, plain yt-dlp names a
file ``<title> [<id>].<ext>``, ``splice download`` writes ``<id>.<ext>`` (flat) or COIN's
layout, and users move folders around. So the build indexes the whole folder once, in the
driver, and hands each worker its video's candidates: one walk instead of one ``stat`` per
extension per video (11,000 videos x 13 extensions on a network file system), and the same
answer for every worker.

Partial downloads (``.part``, ``.ytdl``, ``.temp.<ext>``, unmerged ``.f<format>.<ext>``
pieces, ``.part-Frag<n>``) are never candidates, and hidden files and folders are not
entered (``splice download`` keeps its unfinished work in ``.splice-download/``).

A file or folder whose name is not UTF-8 (bytes Python can only carry as surrogates) is
not a candidate either: nothing downstream (the build report, the Parquet strings) can
hold its name, so it is skipped with a warning that spells the name's bytes out.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from splice_build.records import SourceCandidates, SourceIndex

# Extensions a downloader (yt-dlp, youtube-dl, browser tools) leaves for a finished video,
# in order of preference when several exist: containers with a full index first (exact,
# fast seeks), H.264 mp4 before VP9/AV1 webm (cheaper to decode), index-less MPEG last.
SOURCE_EXTENSIONS: tuple[str, ...] = (
    ".mp4",
    ".m4v",
    ".mkv",
    ".webm",
    ".mov",
    ".avi",
    ".flv",
    ".3gp",
    ".ogv",
    ".wmv",
    ".ts",
    ".mpg",
    ".mpeg",
)
_RANK = {ext: i for i, ext in enumerate(SOURCE_EXTENSIONS)}

# What yt-dlp and youtube-dl leave while (or after failing at) downloading: the file being
# written, its resume state, the pieces of a video+audio merge and the merger's output.
_PARTIAL = re.compile(
    r"\.(part|ytdl|temp)$|\.part-frag\d+$|\.temp\.[^.]+$|\.f[\w-]+\.[^.]+$", re.IGNORECASE
)
# yt-dlp's default output template is "%(title)s [%(id)s].%(ext)s".
_BRACKET_ID = re.compile(r"\[([^\[\]/]+)\]$")
_BRACKET_ID_PARTIAL = re.compile(r"\[([^\[\]/]+)\]\.")


def is_partial(name: str) -> bool:
    """True for a downloader's unfinished file, which must never be taken for a source."""
    return bool(_PARTIAL.search(name))


def video_id_of(name: str) -> str | None:
    """The video id a finished source file's name gives, or None if it is not one."""
    stem, ext = os.path.splitext(name)
    if ext.lower() not in _RANK or is_partial(name) or name.startswith("."):
        return None
    bracket = _BRACKET_ID.search(stem)
    return bracket.group(1) if bracket else stem


def index_sources(root: Path) -> SourceIndex:
    """Walk ``root`` once (sub-folders included, symlinked ones too: a user may link a
    recipe folder from another disk) and index every source file by video id."""
    root = Path(root)
    found: dict[str, list[tuple[tuple, str]]] = {}
    partial: dict[str, list[str]] = {}
    unreadable: list[str] = []
    files = folders = 0
    seen: set[str] = set()  # folders walked, resolved: a symlink loop is entered once
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        rel_folder = Path(folder).relative_to(root)
        unreadable.extend(
            _spelled(rel_folder / d) for d in dirs if not d.startswith(".") and not _is_utf8(d)
        )
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and _is_utf8(d))
        folders += 1
        depth = len(rel_folder.parts)
        for name in names:
            if name.startswith("."):
                continue
            files += 1
            rel = (rel_folder / name).as_posix()
            if not _is_utf8(name):
                unreadable.append(_spelled(rel))
                continue
            if is_partial(name):
                bracket = _BRACKET_ID_PARTIAL.search(name)
                key = bracket.group(1) if bracket else name.split(".", 1)[0]
                partial.setdefault(key, []).append(rel)
                continue
            video_id = video_id_of(name)
            if video_id is None:
                continue
            ext = os.path.splitext(name)[1].lower()
            named_by_id = not _BRACKET_ID.search(os.path.splitext(name)[0])
            order = (_RANK[ext], not named_by_id, depth, rel)
            found.setdefault(video_id, []).append((order, rel))
    return SourceIndex(
        root=root,
        by_id={vid: tuple(rel for _, rel in sorted(c)) for vid, c in found.items()},
        partial={vid: tuple(sorted(p)) for vid, p in partial.items()},
        files=files,
        folders=folders,
        unreadable=tuple(sorted(unreadable)),
    )


def _is_utf8(name: str) -> bool:
    """Whether a name from the file system is UTF-8 (else it carries surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _spelled(path: str | Path) -> str:
    """A file name that is not UTF-8, its stray bytes spelled ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def unreadable_warnings(index: SourceIndex) -> list[str]:
    """One line per file or folder skipped for a name that is not UTF-8 (for the report)."""
    return [
        f"source {name}: skipped, its name is not UTF-8; rename it (e.g. to <video id>.mp4) "
        "to use it"
        for name in index.unreadable
    ]


def not_found_reason(candidates: SourceCandidates) -> str:
    """Why a video has no source, saying where the index looked (no local paths: the reason
    goes into the published build report)."""
    vid = candidates.video_id
    subfolders = candidates.folders - 1
    where = "the videos folder" + (
        f" and its {subfolders} sub-folder{'s' if subfolders != 1 else ''}" if subfolders else ""
    )
    exts = ", ".join(e.lstrip(".") for e in SOURCE_EXTENSIONS)
    reason = (
        f"no source video {vid}.* in {where} ({candidates.files} files): looked for "
        f'{vid}.<ext> and "<title> [{vid}].<ext>" in any sub-folder, <ext> one of {exts}'
    )
    if candidates.partial:
        reason += f"; ignored partial downloads: {', '.join(candidates.partial)}"
    return reason


def duplicate_warnings(index: SourceIndex, video_ids: list[str]) -> list[str]:
    """One line per video with more than one source file (for the build report)."""
    return [
        f"video {vid} has {len(index.by_id[vid])} source files "
        f"({', '.join(index.by_id[vid])}): the first that opens is used"
        for vid in sorted(video_ids)
        if len(index.by_id.get(vid, ())) > 1
    ]


__all__ = [
    "SOURCE_EXTENSIONS",
    "duplicate_warnings",
    "index_sources",
    "is_partial",
    "not_found_reason",
    "unreadable_warnings",
    "video_id_of",
]
