"""The peak memory of a command, measured in a process of its own.

``peak_memory(argv)`` runs a small Python process whose only child is the command, and
reads that child's peak resident size (``RUSAGE_CHILDREN``'s ``ru_maxrss``) there: the
test process's own children (builds, servers) never count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

_MEASURE = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: kB
print(json.dumps({"code": done.returncode, "err": done.stderr, "peak": peak}))
"""


def peak_memory(argv: list[str], cwd: Path = REPO) -> tuple[int, str, int]:
    """``splice *argv``'s exit status, its stderr and its peak memory in bytes."""
    command = [sys.executable, "-m", "splice_build.cli", *argv]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
        check=True,
    )
    result = json.loads(done.stdout)
    return result["code"], result["err"], result["peak"]
