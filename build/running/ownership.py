"""What a build may touch: it refuses folders it does not own, locks the ones it uses, and
replaces a previous output only with a finished one.

- An output folder is a previous build's when it holds a ``build_report.json`` (every build
  writes one) and nothing a build does not write: ``README.md``, the two reports (and an
  import's ``release_manifest.json``), one folder of Parquet shards per written config
  (``video_text/``, ``video/``, ``text/``, ``text_pairwise/``, ``text_choice/``),
  ``webdataset/`` of tar shards. A file someone put there
  (predictions, notes) makes it not the build's to replace; only a desktop's litter
  (``.DS_Store``...) is let pass. An empty folder holds nothing to lose and is used too.
- A work folder is the build's when it holds ``WORK_MARKER`` (written when the build first
  uses the folder) or only what `splice demo` puts there (its build's own work folder
  ``cuts/``, marked, and its rendered ``stand-in-sources/``, which a build never touches):
  the README's build right after the demo uses the demo's ``splice-data-work``. Anything
  else is refused. A work folder the build made and left without a cut (a build
  of no video) is removed again.
- No folder the build writes into may be, or hold, the sources, the annotation file, the
  curation file or the current folder, and none may lie inside the sources (where the
  cuts would be found as sources) or inside the other.
- A build holds an exclusive lock on its output (a ``.<name>.lock`` file beside it, removed
  at the end) and on its work folder (the marker) for its whole life, so a second build of
  either is refused instead of mixing files with the first.
- The output is written into a new hidden folder beside it and swapped in at the end: a
  build that fails, is interrupted or is killed leaves the previous output as it was. The
  swap is one atomic exchange of the two folders where the system has it (Linux's
  ``renameat2(RENAME_EXCHANGE)``), else two renames; before it, a record beside the output
  (``.<name>.swap.json``) names the finished folder and the one the old output moves to.
  The next build on the output, first thing under the lock, completes a swap a kill left
  half done (no output: the finished build, else the previous one, is put in place), and
  only then removes what killed builds left beside it. So at every instant a complete
  build is at the output or is the one the next run restores, and no cleanup deletes the
  only complete copy.
- Test hooks, read from the environment so that a real ``splice build`` process can be
  killed at an exact instant of the swap (tests/build/running/test_ownership_swap.py):
  ``SPLICE_TEST_KILL_AT=<point>`` (the ``KILL_*`` names below) makes the build SIGKILL
  itself there; ``SPLICE_TEST_SWAP=renames`` makes it swap by two renames even where the
  exchange exists.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import secrets
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from splice_build.atomic import atomic_path
from splice_build.errors import UserError, disk_error, output_path
from splice_build.output.release_manifest import MANIFEST
from splice_build.running.report import REPORT_JSON, REPORT_TXT
from splice_dataset import WEBDATASET_DIR, WRITTEN_CONFIGS, shard_dir

CARD = "README.md"
# What a build writes into its output: top-level files, and folders with their file suffix.
OUTPUT_FILES = frozenset({CARD, REPORT_JSON, REPORT_TXT, MANIFEST})  # MANIFEST: imports
OUTPUT_FOLDERS = {
    **{shard_dir(config): ".parquet" for config in WRITTEN_CONFIGS},
    WEBDATASET_DIR: ".tar",
}
# Files a desktop drops into any folder it shows; replacing them loses nothing.
OS_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
WORK_MARKER = "splice-work.json"
WORK_CUTS = "videos"  # `WorkDir.videos`
# What `splice demo` writes into its work folder: its build's work folder, and its sources.
DEMO_CUTS, DEMO_SOURCES = "cuts", "stand-in-sources"
# Hidden folders beside the output: a build being written, and a replaced one being removed.
STAGING_TAG, REPLACED_TAG = "incomplete", "replaced"
SWAP_RECORD_SUFFIX = "swap.json"  # `.<name>.swap.json`: which folder holds the finished build

KILL_AT_ENV, SWAP_ENV = "SPLICE_TEST_KILL_AT", "SPLICE_TEST_SWAP"  # test hooks (see above)
SWAP_EXCHANGE, SWAP_RENAMES = "exchange", "renames"
KILL_STAGED = "swap-staged"  # the finished build in its staging folder, no record yet
KILL_MARKED = "swap-marked"  # the swap record written, nothing moved
KILL_MOVED_ASIDE = "swap-moved-aside"  # two renames only: the old output aside, none at out
KILL_SWAPPED = "swap-swapped"  # the new build at out, the old one not yet removed


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
        if not _demo_entry(entry):
            return f"not a SPLICE work folder (it holds {entry.name}, which no build wrote)"
    return None


def _demo_entry(entry: Path) -> bool:
    """Whether ``entry`` of a work folder is what `splice demo` put there."""
    if entry.is_symlink() or not entry.is_dir():
        return False
    return entry.name == DEMO_SOURCES or (
        entry.name == DEMO_CUTS and (entry / WORK_MARKER).is_file()
    )


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
    with lock_folder(out, "--out", "splice build"):
        recover_output(out)
        created = not work.exists()
        marker = work / WORK_MARKER
        try:
            work.mkdir(parents=True, exist_ok=True)
            if not marker.exists():
                marker.write_text(json.dumps({"splice": "work folder of splice build"}) + "\n")
        except OSError as exc:
            raise disk_error(f"--work {work}", exc, "nothing was changed") from None
        with _flock(marker, f"--work {work.name}", remove=False):
            try:
                yield
            finally:
                if created:
                    _remove_unused_work(work)


def _remove_unused_work(work: Path) -> None:
    """Remove a work folder this build made if it holds no cut (a build of no video): the
    marker and an empty ``videos/``, nothing else."""
    cuts = work / WORK_CUTS
    if not work.is_dir() or any(p.name != WORK_MARKER and p != cuts for p in work.iterdir()):
        return
    if cuts.is_dir() and any(cuts.iterdir()):
        return
    if cuts.is_dir():
        cuts.rmdir()
    (work / WORK_MARKER).unlink(missing_ok=True)
    work.rmdir()


@contextlib.contextmanager
def lock_folder(
    folder: Path, option: str, holder: str = "", kind: str = "folder"
) -> Iterator[None]:
    """One splice command at a time writing into ``folder`` (a build's output, a download's
    folder, a run's prediction file: ``kind``): a lock file ``.<name>.lock`` beside it,
    removed when released, that names its ``holder`` (the command) and process, so a second
    command is refused naming the first. A path that cannot be one (through a regular
    file, or a folder where a file must go) is refused first (`errors.output_path`)."""
    output_path(folder, option, folder=kind == "folder")
    folder = _resolved(folder)
    lock = folder.parent / f".{folder.name}.lock"
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(lock, os.O_RDWR | os.O_CREAT, 0o644))
    except OSError as exc:
        where = f"{option} {folder}: cannot write beside it in {folder.parent}"
        raise disk_error(where, exc, "nothing was changed") from None
    with _flock(lock, f"{option} {folder.name}", remove=True, holder=holder, kind=kind):
        yield


# How much of a lock file's holder line a refusal reads (the file is ours, but anything
# may have been put there).
_HOLDER_MAX = 512


@contextlib.contextmanager
def _flock(
    path: Path, what: str, *, remove: bool, holder: str = "", kind: str = "folder"
) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, refused at once if another process holds it.

    A lock file that is ``remove``d when released may be unlinked by its last holder between
    our open and our lock; then the lock is taken again on the file now at ``path``. Such a
    file (ours alone) is written with who holds it, which a refusal names."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            first = _holder_of(fd) if remove else ""
            os.close(fd)
            held = (
                f"{first} holds {path.name}"
                if first
                else (f"another build or download holds {path.name}")
            )
            raise UserError(
                f"{what}: another splice command is using this {kind} ({held}); wait for it "
                f"to finish or choose another {kind}"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    if remove:
        since = time.strftime("%H:%M:%S UTC", time.gmtime())
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{holder or 'splice'} (pid {os.getpid()}, since {since})\n".encode(), 0)
    try:
        yield
    finally:
        if remove:
            path.unlink(missing_ok=True)
        os.close(fd)


def _holder_of(fd: int) -> str:
    """The holder line a lock file's holder wrote, printable characters only."""
    try:
        text = os.pread(fd, _HOLDER_MAX, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return "".join(c for c in text.splitlines()[0] if c.isprintable()) if text else ""


# --- staging and swap --------------------------------------------------------------------


def recover_output(out: Path) -> None:
    """Complete a swap a killed build left half done, then remove what killed builds left
    beside ``out`` (recognised by name and by holding only what a build writes). Call with
    the output lock, before anything reads ``out``.

    With no ``out``, the folder the swap record names as finished is put in place, else
    the one it names as the previous output, else (a swap by a build before the record)
    the newest replaced one: each only if it is a complete build."""
    out = _resolved(out)
    record = _swap_record(out)
    if not out.exists():
        for candidate in [*_recorded(record, out), *_leftovers(out, REPLACED_TAG)]:
            if _complete_build(candidate):
                os.replace(candidate, out)
                break
    record.unlink(missing_ok=True)
    for tag in (STAGING_TAG, REPLACED_TAG):
        for stale in _leftovers(out, tag):
            shutil.rmtree(stale)


def new_staging(out: Path) -> Path:
    """A new, empty hidden folder beside ``out`` to write the build into (same file system,
    so the final swap is a rename), made with the user's umask like any folder they make
    (the output is this folder once swapped in)."""
    out = _resolved(out)
    while True:
        staging = _hidden(out, STAGING_TAG)
        try:
            staging.mkdir()
        except FileExistsError:
            continue
        return staging


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
    _checkpoint(KILL_STAGED)
    _write_record(out, staging, None)
    _checkpoint(KILL_MARKED)
    old = None
    if out.exists() and os.environ.get(SWAP_ENV) != SWAP_RENAMES and _exchange(staging, out):
        old = staging  # the previous output, now under the staging folder's name
    else:
        if out.exists():
            old = _hidden(out, REPLACED_TAG)
            _write_record(out, staging, old)
            os.replace(out, old)
            _checkpoint(KILL_MOVED_ASIDE)
        try:
            os.replace(staging, out)
        except OSError:
            if old is not None:
                os.replace(old, out)
            raise
    _checkpoint(KILL_SWAPPED)
    _swap_record(out).unlink()
    if old is not None:
        shutil.rmtree(old)


def exchange_supported(folder: Path) -> bool:
    """Whether two folders in ``folder`` can be exchanged atomically (tried on two new,
    empty folders, removed again)."""
    a, b = _hidden(Path(folder) / "x", "exchange-a"), _hidden(Path(folder) / "x", "exchange-b")
    a.mkdir()
    b.mkdir()
    try:
        return _exchange(a, b)
    finally:
        a.rmdir()
        b.rmdir()


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}


def _exchange(a: Path, b: Path) -> bool:
    """Exchange two folders in one step; False where the system or file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def _hidden(out: Path, tag: str) -> Path:
    """A new name for a hidden folder beside ``out`` (not made)."""
    return out.parent / f".{out.name}.{tag}-{secrets.token_hex(4)}"


def _swap_record(out: Path) -> Path:
    return out.parent / f".{out.name}.{SWAP_RECORD_SUFFIX}"


def _write_record(out: Path, finished: Path, replaced: Path | None) -> None:
    """The swap record, written whole (renamed into place, flushed) before a folder moves."""
    data = {"finished": finished.name, "replaced": replaced.name if replaced else None}
    with atomic_path(_swap_record(out), fsync=True) as tmp:
        tmp.write_text(json.dumps(data) + "\n", "utf-8")


def _recorded(record: Path, out: Path) -> list[Path]:
    """The folders a swap record names, finished first; only names of our hidden folders."""
    try:
        data = json.loads(record.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    names = [data.get("finished"), data.get("replaced")] if isinstance(data, dict) else []
    prefixes = tuple(f".{out.name}.{tag}-" for tag in (STAGING_TAG, REPLACED_TAG))
    return [
        out.parent / name
        for name in names
        if isinstance(name, str) and name.startswith(prefixes) and "/" not in name
    ]


def _leftovers(out: Path, tag: str) -> list[Path]:
    """Hidden folders of ``tag`` beside ``out`` that hold only what a build writes, newest
    first."""
    found = [
        p
        for p in out.parent.iterdir()
        if p.name.startswith(f".{out.name}.{tag}-")
        and p.is_dir()
        and not p.is_symlink()
        and _foreign_entry(p) is None
    ]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def _complete_build(folder: Path) -> bool:
    return (
        folder.is_dir()
        and not folder.is_symlink()
        and (folder / REPORT_JSON).is_file()
        and foreign_output(folder) is None
    )


def _checkpoint(point: str) -> None:
    """The kill test hook (module docstring): a real SIGKILL at ``point`` when asked."""
    if os.environ.get(KILL_AT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _resolved(path: Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def _within(inner: Path, outer: Path) -> bool:
    """Whether ``inner`` is ``outer`` or lies inside it (both resolved)."""
    return inner == outer or outer in inner.parents
