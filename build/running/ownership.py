"""What a build may touch: it refuses folders it does not own, locks the ones it uses, and
replaces a previous output only with a finished one.

- An output folder is a previous build's when it holds a ``build_report.json`` (every build
  writes one) and nothing a build does not write: ``README.md``, the two reports (and an
  import's ``release_manifest.json``), one folder of Parquet shards per config
  (``video_text/``, ``video/``, ``text/``), ``webdataset/`` of tar shards. A file someone put there
  (predictions, notes) makes it not the build's to replace; only a desktop's litter
  (``.DS_Store``...) is let pass. An empty folder holds nothing to lose and is used too.
- A work folder is the build's when it holds ``WORK_MARKER`` (written when the build first
  uses the folder) or, as left by builds before the marker, only ``videos/`` of committed
  cuts and temporary cut folders. Anything else is refused.
- No folder the build writes into may be, or hold, the sources, the annotation file, the
  curation file or the current folder, and none may lie inside the sources (where the
  cuts would be found as sources) or inside the other.
- A build holds an exclusive lock on its output (a ``.<name>.lock`` file beside it, removed
  at the end) and on its work folder (the marker) for its whole life, so a second build of
  either is refused instead of mixing files with the first.
- The output is written into a new hidden folder beside it and swapped in at the end: a
  build that fails, is interrupted or is killed leaves the previous output as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from splice_build.errors import UserError
from splice_build.output.release_manifest import MANIFEST
from splice_build.running.report import REPORT_JSON, REPORT_TXT
from splice_build.running.workdir import CUT_RECORD
from splice_dataset import CONFIGS, WEBDATASET_DIR, shard_dir

CARD = "README.md"
# What a build writes into its output: top-level files, and folders with their file suffix.
OUTPUT_FILES = frozenset({CARD, REPORT_JSON, REPORT_TXT, MANIFEST})  # MANIFEST: imports
# ("data": the shared clip shards of builds made before each config had its own folder,
# so that such a build is still recognised and may be replaced.)
OUTPUT_FOLDERS = {
    **{shard_dir(config): ".parquet" for config in CONFIGS},
    "data": ".parquet",
    WEBDATASET_DIR: ".tar",
}
# Files a desktop drops into any folder it shows; replacing them loses nothing.
OS_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
WORK_MARKER = "splice-work.json"
WORK_CUTS = "videos"  # `WorkDir.videos`
TEMP_CUT_PREFIX = ".tmp-"  # `WorkDir.new_temp_dir`
# Hidden folders beside the output: a build being written, and a replaced one being removed.
STAGING_TAG, REPLACED_TAG = "incomplete", "replaced"


def check_folders(
    *,
    out: Path,
    work: Path,
    videos: Path,
    annotations: Path,
    curation: Path | None,
) -> None:
    """Refuse, before anything is written, every output or work folder the build would harm."""
    out_r, work_r = _resolved(out), _resolved(work)
    guarded = [
        (_resolved(videos), f"the video folder (--videos {videos})"),
        (_resolved(annotations), f"the annotation file (--annotations {annotations})"),
        (_resolved(Path.cwd()), "the current folder"),
    ]
    if curation is not None:
        guarded.append((_resolved(curation), f"the curation file (--curation {curation})"))
    for option, given, folder in (("--out", out, out_r), ("--work", work, work_r)):
        _check_target(option, given, folder, guarded, videos)
    if _within(work_r, out_r) or _within(out_r, work_r):
        raise UserError(f"--work {work} and --out {out} overlap; choose separate folders")
    why = foreign_output(out_r)
    if why:
        raise UserError(f"--out {out}: {why}; nothing was changed, choose another folder")
    why = foreign_work(work_r)
    if why:
        raise UserError(f"--work {work}: {why}; nothing was changed, choose another folder")


def _check_target(
    option: str, given: Path, folder: Path, guarded: list[tuple[Path, str]], videos: Path
) -> None:
    """One folder the build writes (``folder``: ``given`` resolved) against the inputs in
    ``guarded``, the video folder first."""
    if Path(given).is_symlink():
        raise UserError(f"{option} {given} is a symbolic link; give the folder it points to")
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{option} {given} is a file, not a folder")
    for path, what in guarded:
        if _within(path, folder):
            raise UserError(f"{option} {given} is or holds {what}; choose another folder")
    if _within(folder, guarded[0][0]):
        raise UserError(
            f"{option} {given} lies inside the video folder (--videos {videos}); "
            "choose a folder outside it"
        )


def foreign_output(folder: Path) -> str | None:
    """Why ``folder`` is not a previous build's output (None: it is, or it is empty or
    absent, so the build may replace it)."""
    if not folder.exists() or not any(folder.iterdir()):
        return None
    try:
        report = json.loads((folder / REPORT_JSON).read_text("utf-8"))
    except (OSError, ValueError):
        return f"not a SPLICE build (no readable {REPORT_JSON})"
    if not isinstance(report, dict) or not {"settings", "counts", "videos"} <= set(report):
        return f"not a SPLICE build (its {REPORT_JSON} is not a build report)"
    return _foreign_entry(folder)


def foreign_work(folder: Path) -> str | None:
    """Why ``folder`` is not a work folder of a build (None: it is, or it is empty or absent)."""
    if not folder.exists() or not any(folder.iterdir()) or (folder / WORK_MARKER).is_file():
        return None
    for entry in sorted(folder.iterdir()):
        if entry.name != WORK_CUTS or not entry.is_dir():
            return f"not a SPLICE work folder (it holds {entry.name}, which no build wrote)"
    for entry in sorted((folder / WORK_CUTS).iterdir()):
        ours = entry.name.startswith(TEMP_CUT_PREFIX) or (entry / CUT_RECORD).is_file()
        if not entry.is_dir() or entry.is_symlink() or not ours:
            return f"not a SPLICE work folder (it holds {WORK_CUTS}/{entry.name})"
    return None


def _foreign_entry(folder: Path) -> str | None:
    """The first thing in an output-like folder that no build writes, if any."""
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            return f"holds the link {entry.name}, which no SPLICE build wrote"
        if entry.is_file() and entry.name in OUTPUT_FILES | OS_LITTER:
            continue
        suffix = OUTPUT_FOLDERS.get(entry.name)
        if suffix is None or not entry.is_dir():
            return f"holds {entry.name}, which no SPLICE build wrote"
        for inner in sorted(entry.iterdir()):
            if inner.is_file() and inner.name in OS_LITTER:
                continue
            if inner.is_symlink() or not inner.is_file() or inner.suffix != suffix:
                return f"holds {entry.name}/{inner.name}, which no SPLICE build wrote"
    return None


# --- locks -------------------------------------------------------------------------------


@contextlib.contextmanager
def locked(out: Path, work: Path) -> Iterator[None]:
    """Hold the output's and the work folder's locks, or refuse: another build uses them."""
    out, work = _resolved(out), _resolved(work)
    with lock_folder(out, "--out"):
        work.mkdir(parents=True, exist_ok=True)
        marker = work / WORK_MARKER
        if not marker.exists():
            marker.write_text(json.dumps({"splice": "work folder of splice build"}) + "\n")
        with _flock(marker, f"--work {work.name}", remove=False):
            yield


@contextlib.contextmanager
def lock_folder(folder: Path, option: str) -> Iterator[None]:
    """One splice command at a time writing into ``folder`` (a build's output, a download's
    folder): a lock file ``.<name>.lock`` beside it, removed when released."""
    folder = _resolved(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _flock(folder.parent / f".{folder.name}.lock", f"{option} {folder.name}", remove=True):
        yield


@contextlib.contextmanager
def _flock(path: Path, what: str, *, remove: bool) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, refused at once if another process holds it.

    A lock file that is ``remove``d when released may be unlinked by its last holder between
    our open and our lock; then the lock is taken again on the file now at ``path``."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(
                f"{what}: another splice command is using this folder (another build or "
                f"download holds {path.name}); wait for it to finish or choose another folder"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        if remove:
            path.unlink(missing_ok=True)
        os.close(fd)


# --- staging and swap --------------------------------------------------------------------


def new_staging(out: Path) -> Path:
    """A new, empty hidden folder beside ``out`` to write the build into (same file system,
    so the final swap is a rename). Leftovers of killed builds are removed first: they are
    recognised by name and by holding only what a build writes. Call with the output lock."""
    out = _resolved(out)
    for tag in (STAGING_TAG, REPLACED_TAG):
        for stale in out.parent.glob(f".{out.name}.{tag}-*"):
            if stale.is_dir() and not stale.is_symlink() and _foreign_entry(stale) is None:
                shutil.rmtree(stale)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.{STAGING_TAG}-", dir=out.parent))


def replace_output(staging: Path, out: Path) -> None:
    """Put the finished build in place of the previous one (checked again: someone may have
    put a file into it since the build started). Call with the output lock."""
    out = _resolved(out)
    why = foreign_output(out)
    if why:
        raise UserError(
            f"--out {out.name}: {why} (since the build started); the new build is left in "
            f"{staging.name} beside it until this build ends, then discarded"
        )
    replaced = None
    if out.exists():
        replaced = Path(tempfile.mkdtemp(prefix=f".{out.name}.{REPLACED_TAG}-", dir=out.parent))
        os.replace(out, replaced)
    os.replace(staging, out)
    if replaced is not None:
        shutil.rmtree(replaced)


def _resolved(path: Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def _within(inner: Path, outer: Path) -> bool:
    """Whether ``inner`` is ``outer`` or lies inside it (both resolved)."""
    return inner == outer or outer in inner.parents
