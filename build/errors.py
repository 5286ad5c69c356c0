"""The one exception for a user's mistake (a bad option, a missing or malformed file).

Raised anywhere below a subcommand and turned by ``splice_build.cli.main`` into one line on
stderr, ``splice <command>: <message>``, and exit status 2, with no traceback unless
``--debug`` or ``SPLICE_DEBUG=1`` asks for one. The message must name the file (and line),
the video, the field or the option, because it is all the user sees.

It is a ``ValueError``, so library callers that catch bad input as ``ValueError`` keep
working. ``read_bytes`` / ``read_text`` are how user files are read: a missing file, a
folder, an unreadable or non-UTF-8 file becomes a ``UserError`` naming it (and the line),
and a UTF-8 byte order mark (what Excel and Notepad write) is accepted. ``disk_error`` is
how the machine's refusals to write (a full or read-only disk, no permission) become one.
Every user file is read up to a size bound (``READ_LIMIT`` unless the reader states its
own, ``open_user_file`` for readers that stream), said in the refusal, so no file makes a
command hold more than that in memory.
``require`` is how an optional extra's module is imported: missing, it is a UserError
naming the extra.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

USAGE_EXIT = 2
INTERRUPTED_EXIT = 130  # the shell's code for a run ended by Ctrl-C (128 + SIGINT)
TERMINATED_EXIT = 143  # the shell's code for a run ended by SIGTERM (128 + SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM (what Slurm, Kubernetes and ``kill`` send before they kill), handled as
    Ctrl-C is: every handler of an interrupt keeps what is done and says how to resume; the
    dispatcher ends with `TERMINATED_EXIT` instead of 130."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raised as `Terminated` in the main thread for the block (the dispatcher's
    whole command), unless it is ignored (whoever ignored it meant it); the previous
    handler after. Python's default lets SIGTERM kill the process where it stands (exit
    -15, a run's answers in hand and a build's cleanup lost)."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:  # unless a handler of the stop ignores further ones (to the process's end)
        if signal.getsignal(signal.SIGTERM) is _raise_terminated:
            signal.signal(signal.SIGTERM, previous)


def stop_words(interrupt: BaseException) -> str:
    """How a command says it was stopped: ``terminated (SIGTERM)`` or ``interrupted``."""
    return "terminated (SIGTERM)" if isinstance(interrupt, Terminated) else "interrupted"


def stop_exit(interrupt: BaseException) -> int:
    """The exit status of a command stopped by ``interrupt``: 143 for SIGTERM, 130 for
    Ctrl-C, as a shell reports a process each signal ended."""
    return TERMINATED_EXIT if isinstance(interrupt, Terminated) else INTERRUPTED_EXIT


def ignore_further_interrupts() -> None:
    """The first thing a handler of Ctrl-C (or SIGTERM) does: every later Ctrl-C or SIGTERM
    (a user pressing Ctrl-C again while the first is handled, a batch system repeating its
    stop) is ignored until the process ends. A second one landing in the handler's own
    message, a cleanup or the interpreter's shutdown (joining threads, atexit) printed a
    traceback; the first one's line is all there is to say. Only the main thread may set a
    handler (Python runs handlers there alone)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


# The machine's refusals to write that a user can act on: what happened, what to do.
_DISK_REFUSALS = {
    errno.ENOSPC: ("no space left on its disk", "free some space or choose another disk"),
    errno.EDQUOT: ("the disk quota is used up", "free some space or choose another disk"),
    errno.EROFS: ("the disk is read-only", "choose a folder on a disk you can write to"),
    errno.EACCES: ("no permission to write there", "choose a folder you may write to"),
    errno.EPERM: ("no permission to write there", "choose a folder you may write to"),
}


# The most a user file read whole is (annotation files, curation files, sheets, keys): COIN's
# whole annotation file is under 10 MB.
READ_LIMIT = 64 * 1024 * 1024


def size_words(size: int) -> str:
    """A byte count as a refusal says it (``64 MB``)."""
    return f"{size / 1024 / 1024:.3g} MB" if size >= 1024 * 1024 else f"{size} bytes"


class UserError(ValueError):
    """A problem with what the user gave us, not a bug: reported as one line, exit 2."""


def disk_error(where: str, exc: OSError, outcome: str) -> Exception:
    """The `UserError` to raise for ``exc`` when the machine refused to write (``where``: the
    option and folder, ``outcome``: what became of the user's files); ``exc`` itself for
    any other failure, which is a bug to show in full."""
    refusal = _DISK_REFUSALS.get(exc.errno)
    if refusal is None:
        return exc
    what, todo = refusal
    return UserError(f"{where}: {what} ({exc.strerror or exc}); {todo}; {outcome}")


def refused_write(exc: OSError) -> UserError | None:
    """The machine's refusal to write anywhere a command writes (``--out`` on a read-only
    disk, a full one, a folder without permission) as one line naming the folder and why;
    None for any other error, which is a bug to show in full. The dispatcher's net under
    every command, so an output folder needs no check of its own in each; a file where a
    folder must go (or the reverse) is said as `output_path` says it."""
    misplaced = _misplaced(exc)
    if misplaced is not None:
        return misplaced
    if exc.errno not in _DISK_REFUSALS or not exc.filename:
        return None
    path = Path(os.fsdecode(exc.filename))
    if exc.errno in (errno.EACCES, errno.EPERM) and path.exists():
        if not os.access(path, os.R_OK):
            return UserError(f"{path}: no permission to read it ({exc.strerror or exc})")
    # the folder the write went into: a file's, or the one a new folder would go in
    folder = path.parent if str(path.parent) not in ("", ".") else Path.cwd()
    error = disk_error(f"cannot write in {folder}", exc, "the command stopped there")
    return error if isinstance(error, UserError) else None


def _file_in_the_way(path: Path) -> Path | None:
    """The first component of ``path`` (from the root, ``path`` itself last) that exists and
    is not a folder, while more of the path must go under it; None when there is none."""
    parts = [*reversed(path.parents), path]
    for component in parts[:-1]:
        if os.path.lexists(component) and not component.is_dir():
            return component
    return None


def output_path(path: str | os.PathLike, option: str, folder: bool = False) -> Path:
    """``path``, where a command will write a file (``folder``: a folder), checked before
    any work: a path through a regular file (a file where a folder must go), or a folder
    where a file must go (a file where a folder must go), is a UserError naming ``option``,
    the path and what is in the way. The dispatcher's net (`refused_write`) says the same
    of what a command did not check."""
    path = Path(path)
    blocker = _file_in_the_way(path)
    if blocker is not None:
        raise UserError(f"{option} {path}: {blocker} is a file, where a folder must go")
    if folder and os.path.lexists(path) and not path.is_dir():
        raise UserError(f"{option} {path}: {path} is a file, where a folder must go")
    if not folder and path.is_dir():
        raise UserError(f"{option} {path}: {path} is a folder, where a file must go")
    return path


def _misplaced(exc: OSError) -> UserError | None:
    """A write that failed for a file where a folder must go, or a folder where a file must
    go (a file opened or renamed onto a folder: named by its target, never the temporary
    file an atomic write renames), as one line; None for any other error."""
    if exc.errno == errno.EISDIR and (exc.filename2 or exc.filename):
        target = Path(os.fsdecode(exc.filename2 or exc.filename))
        return UserError(f"{target} is a folder, where a file must go")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST) and exc.filename:
        path = Path(os.fsdecode(exc.filename))
        blocker = _file_in_the_way(path)
        if blocker is None and os.path.lexists(path) and not path.is_dir():
            blocker = path  # mkdir of a folder where a file is
        if blocker is not None:
            return UserError(f"{path}: {blocker} is a file, where a folder must go")
    return None


def as_user_error(exc: ValueError | OSError) -> UserError:
    """What a command that reads and writes user files says of an error: a refusal to write
    as `refused_write` words it, any other as its own text."""
    refused = refused_write(exc) if isinstance(exc, OSError) else None
    return refused or UserError(str(exc))


def open_user_file(path: str | os.PathLike, what: str, limit: int = READ_LIMIT) -> BinaryIO:
    """The user's file ``path`` (``what`` it is, for the message) open for reading in binary,
    once it is known to hold at most ``limit`` bytes (refused naming the bound)."""
    path = Path(path)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        raise UserError(f"{what} {path}: cannot read it ({exc.strerror or exc})") from None
    size = os.fstat(fh.fileno()).st_size
    if size > limit:
        fh.close()
        raise UserError(
            f"{what} {path}: {size_words(size)}, over the {size_words(limit)} a {what} may be"
        )
    return fh


def read_bytes(path: str | os.PathLike, what: str, limit: int = READ_LIMIT) -> bytes:
    """The bytes of the user's file ``path`` (``what`` it is, for the message), at most
    ``limit`` of them (a file that grows while read is cut there, and refused)."""
    with open_user_file(path, what, limit) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise UserError(f"{what} {path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise UserError(f"{what} {path}: over the {size_words(limit)} a {what} may be")
    return data


def decode_text(data: bytes, path: str | os.PathLike, what: str) -> str:
    """UTF-8 text (a leading byte order mark dropped), or a UserError naming the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(
            f"{path} line {line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save the {what} "
            "as UTF-8"
        ) from None


def read_text(path: str | os.PathLike, what: str, limit: int = READ_LIMIT) -> str:
    """The text of the user's UTF-8 file ``path`` (BOM accepted), at most ``limit`` bytes."""
    return decode_text(read_bytes(path, what, limit), path, what)


# What a file system error on a file means for the user, for messages that go into reports
# (an errno text such as "[Errno 1] Operation not permitted" tells nobody what to check).
_OS_ERROR_WORDS = {
    errno.ELOOP: "it is a link that leads back to itself",
    errno.EACCES: "it cannot be read: no permission to read it",
    errno.EPERM: "it cannot be read: no permission to read it",
    errno.EISDIR: "it is a folder, not a file",
    errno.EIO: "it cannot be read: the disk reports a read error",
}


def os_error_words(err: OSError) -> str:
    """A file system error on one file in words ("it is a link to a file that does not
    exist"), to follow the file's name in a message."""
    if err.errno == errno.ENOENT:
        if err.filename is not None and os.path.islink(err.filename):
            return "it is a link to a file that does not exist"
        return "it is no longer there"
    return _OS_ERROR_WORDS.get(err.errno, "it cannot be read")


def require(module: str, extra: str, needed_by: str) -> ModuleType:
    """``module``, imported; if it is not installed, a UserError naming the pip extra that
    brings it (``needed_by``: the command or option that needs it, for the message). The
    one place an optional dependency's absence is reported, so every command says it alike.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name != module.split(".")[0] and exc.name != module:
            raise  # the module is there, but something it imports is broken: a real bug
        package = module.split(".")[0].replace("_", "-")
        raise UserError(
            f"{needed_by} needs {package}, which is not installed: pip install "
            f"'splice-benchmark[{extra}]' (or pip install -e '.[{extra}]' in a clone)"
        ) from None
