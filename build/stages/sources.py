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
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath

from splice_build.errors import os_error_words
from splice_build.records import SourceCandidates, SourceIndex, VideoEntry

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


def walk_once(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` following links (a user may link a recipe folder from another disk),
    each real folder entered once, so a link back up neither loops nor counts twice.
    Callers may prune ``dirs`` as with ``os.walk``."""
    seen: set[str] = set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        yield folder, dirs, names


def index_sources(root: Path) -> SourceIndex:
    """Walk ``root`` once (sub-folders included, symlinked ones too: a user may link a
    recipe folder from another disk) and index every source file by video id."""
    root = Path(root)
    found: dict[str, list[tuple[tuple, str]]] = {}
    partial: dict[str, list[str]] = {}
    unreadable: dict[str, list[str]] = {}
    misnamed: list[str] = []
    files = folders = 0
    for folder, dirs, names in walk_once(root):
        rel_folder = Path(folder).relative_to(root)
        misnamed.extend(
            _spelled(rel_folder / d) for d in dirs if not d.startswith(".") and not _is_utf8(d)
        )
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and _is_utf8(d))
        folders += 1
        for name in names:
            if name.startswith("."):
                continue
            files += 1
            rel = (rel_folder / name).as_posix()
            if not _is_utf8(name):
                misnamed.append(_spelled(rel))
            elif is_partial(name):
                bracket = _BRACKET_ID_PARTIAL.search(name)
                key = bracket.group(1) if bracket else name.split(".", 1)[0]
                partial.setdefault(key, []).append(rel)
            else:
                _add_candidate(Path(folder) / name, rel, len(rel_folder.parts), found, unreadable)
    return SourceIndex(
        root=root,
        by_id={vid: tuple(rel for _, rel in sorted(c)) for vid, c in found.items()},
        partial={vid: tuple(sorted(p)) for vid, p in partial.items()},
        files=files,
        folders=folders,
        unreadable={vid: tuple(sorted(u)) for vid, u in unreadable.items()},
        misnamed=tuple(sorted(misnamed)),
    )


def _add_candidate(
    path: Path,
    rel: str,
    depth: int,
    found: dict[str, list[tuple[tuple, str]]],
    unreadable: dict[str, list[str]],
) -> None:
    """File one source-named file under its video id, ranked, or as unreadable."""
    name = path.name
    video_id = video_id_of(name)
    if video_id is None:
        return
    why = unreadable_reason(path)
    if why:  # a dangling link is no candidate: the next file must get its turn
        unreadable.setdefault(video_id, []).append(f"{rel} ({why})")
        return
    ext = os.path.splitext(name)[1].lower()
    named_by_id = not _BRACKET_ID.search(os.path.splitext(name)[0])
    found.setdefault(video_id, []).append(((_RANK[ext], not named_by_id, depth, rel), rel))


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


def misnamed_warnings(index: SourceIndex) -> list[str]:
    """One line per file or folder skipped for a name that is not UTF-8 (for the report)."""
    return [
        f"source {name}: skipped, its name is not UTF-8; rename it (e.g. to <video id>.mp4) "
        "to use it"
        for name in index.misnamed
    ]


def unreadable_reason(path: Path) -> str:
    """Why a file named like a source cannot be one, in words ('' when it can be read).

    One ``stat`` per source file (its target's, through a link): a dangling link or a file
    without read permission is then left out like a missing file, instead of failing the
    work key's ``stat`` and hiding the good file beside it. Read permission is asked of the
    system only for files that are not plainly readable by everyone (root reads them all).
    """
    try:
        info = os.stat(path)
    except OSError as err:
        return os_error_words(err)
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if not info.st_mode & stat.S_IROTH and not os.access(path, os.R_OK):
        return "it cannot be read: no permission to read it"
    return ""


def candidates_for(index: SourceIndex, entry: VideoEntry) -> SourceCandidates:
    """An entry's candidates from the index, those in a folder named for its COIN
    ``recipe_type`` first (COIN's ``download_videos.py`` layout): a copy of the same id
    under another recipe's folder was put there for another entry, or by mistake."""
    candidates = index.lookup(entry.video_id)
    recipe = "" if entry.recipe_type is None else str(entry.recipe_type)
    ranked = sorted(candidates.paths, key=lambda rel: PurePosixPath(rel).parent.name != recipe)
    return replace(candidates, paths=tuple(ranked))


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
    if candidates.unreadable:
        reason += f"; ignored files that cannot be read: {', '.join(candidates.unreadable)}"
    if candidates.partial:
        reason += f"; ignored partial downloads: {', '.join(candidates.partial)}"
    return reason


def duplicate_warnings(index: SourceIndex, entries: list[VideoEntry]) -> list[str]:
    """One line per video with more than one source file (for the build report), in the
    order they are tried."""
    lines = []
    for entry in sorted(entries, key=lambda e: e.video_id):
        paths = candidates_for(index, entry).paths
        if len(paths) > 1:
            lines.append(
                f"video {entry.video_id} has {len(paths)} source files ({', '.join(paths)}): "
                "the first that opens is used"
            )
    return lines


__all__ = [
    "SOURCE_EXTENSIONS",
    "candidates_for",
    "duplicate_warnings",
    "index_sources",
    "is_partial",
    "not_found_reason",
    "misnamed_warnings",
    "unreadable_reason",
    "video_id_of",
    "walk_once",
]
