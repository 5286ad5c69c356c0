"""An annotation package folder read as the tasks the app shows.

Read from the folders ``annotate export`` wrote (``<annotator>/<modality>/<folder>/
random_part_k.mp4``), never from ``key.json``: the app knows folder and part numbers only,
which is all an annotator may know. ``PACKAGE`` is either the export's folder (one
sub-folder per annotator) or a single annotator's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from splice_build.errors import UserError

from .layout import MODALITY_DIRS, PART_RE, SHEET_NAME, part_name


@dataclass(frozen=True)
class Task:
    """One ordering task as the annotator sees it."""

    folder: int  # the export's folder number (unique across the export)
    config: str  # "video" or "video_text"
    clips: tuple[Path, ...]  # clips[k - 1] is random_part_k.mp4


@dataclass(frozen=True)
class Package:
    root: Path
    tasks: dict[str, tuple[Task, ...]]  # annotator -> tasks in folder order

    @property
    def clip_dirs(self) -> list[Path]:
        """The only folders the server may serve files from: the clips' own."""
        return sorted({c.parent for ts in self.tasks.values() for t in ts for c in t.clips})

    def folder_of(self, annotator: str) -> Path:
        """The annotator's own folder: the root itself for a one-annotator package."""
        return self.root if (self.root / SHEET_NAME).is_file() else self.root / annotator

    @property
    def max_parts(self) -> int:
        return max(len(t.clips) for ts in self.tasks.values() for t in ts)


def read_package(root: str | Path) -> Package:
    """Every annotator's tasks under ``root``; a malformed folder names itself."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such annotation package folder")
    if (root / SHEET_NAME).is_file():
        folders = {root.name: root}
    else:
        folders = {p.name: p for p in sorted(root.iterdir()) if (p / SHEET_NAME).is_file()}
    if not folders:
        raise UserError(
            f"{root}: not an annotation package (no {SHEET_NAME} in it or its sub-folders); "
            "make one with splice annotate export"
        )
    tasks = {name: _annotator_tasks(path) for name, path in folders.items()}
    for name, ts in tasks.items():
        if not ts:
            raise UserError(f"{folders[name]}: annotator {name} has no clip folders")
    return Package(root, tasks)


def _annotator_tasks(pkg: Path) -> tuple[Task, ...]:
    out: list[Task] = []
    for config, dirname in MODALITY_DIRS.items():
        base = pkg / dirname
        if not base.is_dir():
            continue
        for folder in base.iterdir():
            if folder.is_dir() and folder.name.isdigit():
                out.append(Task(int(folder.name), config, _clips(folder)))
    return tuple(sorted(out, key=lambda t: t.folder))


def _clips(folder: Path) -> tuple[Path, ...]:
    numbers = sorted(int(m.group(1)) for p in folder.iterdir() if (m := PART_RE.fullmatch(p.name)))
    if len(numbers) < 2 or numbers != list(range(1, len(numbers) + 1)):
        raise UserError(
            f"{folder}: expected {part_name(1)} .. random_part_N.mp4 (N >= 2), found parts "
            f"{numbers}"
        )
    return tuple(folder / part_name(k) for k in numbers)
