"""Ctrl-C as a terminal delivers it, whatever the test process inherited.

A process started in the background by a non-interactive shell (a CI script's ``&``, some
job runners) inherits SIGINT ignored, and a child started from it inherits that too:
Python then installs no KeyboardInterrupt handler, ``_thread.interrupt_main`` does nothing,
and a test of Ctrl-C sees the command run to its end (exit 0). A user's terminal never
ignores it, so the tests give their commands the terminal's disposition."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


def terminal_sigint() -> None:
    """``preexec_fn`` of a command a test interrupts: SIGINT at its default, so the child's
    Python installs its own handler, as under a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def python_sigint() -> Iterator[None]:
    """In this process: Python's own SIGINT handler for the block (``interrupt_main``
    raises KeyboardInterrupt only through it), the previous disposition after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
