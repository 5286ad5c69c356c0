"""The one exception for a user's mistake (a bad option, a missing or malformed file).

Raised anywhere below a subcommand and turned by ``splice_build.cli.main`` into one line on
stderr, ``splice <command>: <message>``, and exit status 2, with no traceback unless
``--debug`` or ``SPLICE_DEBUG=1`` asks for one. The message must name the file (and line),
the video, the field or the option, because it is all the user sees.

It is a ``ValueError``, so library callers that catch bad input as ``ValueError`` keep
working. ``read_bytes`` / ``read_text`` are how user files are read: a missing file, a
folder, an unreadable or non-UTF-8 file becomes a ``UserError`` naming it (and the line),
and a UTF-8 byte order mark (what Excel and Notepad write) is accepted. ``require`` is how
an optional extra's module is imported: missing, it is a UserError naming the extra.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

USAGE_EXIT = 2


class UserError(ValueError):
    """A problem with what the user gave us, not a bug: reported as one line, exit 2."""


def read_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The bytes of the user's file ``path`` (``what`` it is, for the message)."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        raise UserError(f"{what} {path}: cannot read it ({exc.strerror or exc})") from None


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


def read_text(path: str | os.PathLike, what: str) -> str:
    """The text of the user's UTF-8 file ``path`` (BOM accepted)."""
    return decode_text(read_bytes(path, what), path, what)


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
