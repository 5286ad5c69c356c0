"""Ctrl-C as a terminal delivers it, whatever the test process inherited.

A process started in the background by a non-interactive shell (a CI script's ``&``, some
job runners) inherits SIGINT ignored, and a child started from it inherits that too:
Python then installs no KeyboardInterrupt handler, ``_thread.interrupt_main`` does nothing,
and a test of Ctrl-C sees the command run to its end (exit 0). A user's terminal never
ignores it, so the tests give their commands the terminal's disposition."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path


def terminal_sigint() -> None:
    """``preexec_fn`` of a command a test interrupts: SIGINT at its default, so the child's
    Python installs its own handler, as under a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def python_sigint() -> Iterator[None]:
    """In this process: Python's own SIGINT handler for the block (``interrupt_main``
    raises KeyboardInterrupt only through it), the previous disposition after."""
    with fresh_disposition(signal.SIGINT):
        yield


@contextlib.contextmanager
def fresh_disposition(signum: int) -> Iterator[None]:
    """In this process: ``signum`` handled as a fresh ``python`` handles it (Python's own
    KeyboardInterrupt handler for SIGINT, the default for any other) for the block, the
    previous handler after. The test process may hold another: a library run earlier (Ray)
    leaves its own SIGTERM handler, which ends the process."""
    fresh = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
    previous = signal.signal(signum, fresh)
    try:
        yield
    finally:
        signal.signal(signum, previous)


def interrupt_when(
    cmd: list[str],
    ready: Callable[[], bool],
    cwd: Path | None = None,
    presses: int = 1,
    gap: float = 0.02,
    signum: int = signal.SIGINT,
) -> subprocess.CompletedProcess:
    """Run ``cmd`` as a terminal would, press Ctrl-C once ``ready()`` holds (within five
    minutes; it must still be running then), and return how it ended (stdout, stderr text).
    ``presses`` > 1: an impatient user's Ctrl-C again and again, ``gap`` seconds apart, for
    as long as the command runs. ``signum`` SIGTERM: a batch system's stop instead (Slurm,
    Kubernetes, ``kill``), sent to the command's own process."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=terminal_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, f"{cmd} ended before it could be interrupted"
        for press in range(presses):
            if press:
                time.sleep(gap)
            with contextlib.suppress(ProcessLookupError):  # the group may be gone by now
                if signum == signal.SIGINT:  # Ctrl-C: the terminal signals the whole group
                    os.killpg(proc.pid, signal.SIGINT)
                else:
                    os.kill(proc.pid, signum)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
