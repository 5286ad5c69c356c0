"""Workers that die with the process that started them.

A killed build must not leave workers cutting into a work folder that a rerun uses; the
local pool and Ray's tasks both call `die_with_parent` first.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """End this worker as soon as the process ``parent`` is gone, even killed by SIGKILL.

    On Linux the kernel sends SIGKILL when the parent exits (``PR_SET_PDEATHSIG``); the
    parent may have died before that was set, hence the check after it. Elsewhere a thread
    polls the parent id (a dead parent's orphans are adopted by another process). Either
    way the worker stops mid-cut at worst, which is safe: a cut is committed by a rename,
    and uncommitted temporary folders are removed by the next build."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass  # no prctl: poll instead

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
