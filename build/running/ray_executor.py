"""The per-video work as Ray tasks, for builds (and imports) larger than one machine.

Each task runs the executor's function on one video (for a build: probe and cut it into
the shared work folder) and returns only its small result, exactly as a local worker does,
so the driver's ordering, resumability and report are unchanged and the output is
identical to the local executor's. Sources, the work folder and the output must be on
storage every node sees under the same path (NFS, a cluster file system, or an object
store mounted with a FUSE driver): the work folder's atomic rename and PyAV's seeking need
a POSIX file system, so bare fsspec URLs are not accepted.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

from splice_build.errors import UserError, require
from splice_build.running.lifetime import die_with_parent

T = TypeVar("T")
R = TypeVar("R")


class RayExecutor:
    def __init__(self, address: str | None = None, workers: int | None = None):
        ray = require("ray", "ray", "--executor ray")
        self._ray = ray
        if not ray.is_initialized():
            if address:
                check_reachable(address)
            # Ray's C++ core logs to the driver's stderr; after Ctrl-C, workers that took the
            # terminal's SIGINT make it print "Failed to push error to driver" below the
            # build's one interrupted line. Task failures reach us as Python exceptions, so
            # only its fatal lines are kept (unless the user chose a level).
            os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
            try:
                ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            except ConnectionError as exc:  # it answered, but is not a Ray cluster we can join
                raise UserError(f"--ray-address {address}: {exc}") from None
            atexit.register(_shutdown_past_ctrl_c, ray)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        # Enough tasks in flight to keep every CPU busy, few enough that outcomes stream.
        self.in_flight = max(1, 2 * (workers or cpus))
        self._remote = ray.remote(num_cpus=1, max_retries=2)(_in_worker)

    def run(self, fn: Callable[[T, int], R], tasks: Iterable[T]) -> Iterator[R]:
        ray = self._ray
        pending = []
        for task in tasks:
            pending.append(self._remote.remote(fn, task))
            if len(pending) >= self.in_flight:
                done, pending = ray.wait(pending, num_returns=1)
                yield from ray.get(done)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield from ray.get(done)


def _shutdown_past_ctrl_c(ray: Any) -> None:
    """At exit, before Ray's own handler (``atexit`` runs the last registered first): the
    connection this driver opened ended with Ctrl-C ignored. Ray's shutdown waits seconds
    for the processes it started, after the command's last line; a Ctrl-C there (a second
    one, after an interrupted build) printed Ray's traceback. Ray's waits are bounded, so
    ignoring it costs those seconds at most."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ray.shutdown()


# Seconds to wait for the cluster's port to accept a connection. Ray itself retries an
# unreachable address for about 20 s, printing gcs_client warnings, then raises.
CONNECT_TIMEOUT = 5.0


def check_reachable(address: str) -> None:
    """Refuse a ``--ray-address`` whose port accepts no connection, in one line and at most
    `CONNECT_TIMEOUT` seconds. ``auto`` / ``local`` (Ray finds or starts the cluster) are
    left to Ray."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number
        host = port = None
    if not host or not port:
        raise UserError(f"--ray-address {address}: expected HOST:PORT (e.g. 10.0.0.1:6379)")
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise UserError(
            f"--ray-address {address}: no Ray cluster answers there ({why}); start one with "
            "`ray start --head` on that machine, or fix the address"
        ) from None


def _in_worker(fn: Callable[[T, int], R], task: T) -> R:
    """``fn`` in a Ray worker that dies with its raylet: Ray ends a dead driver's workers
    itself, but only once it notices, and a local instance's raylet dies with the driver at
    once (Ray fate-shares it), so its workers stop cutting at once too. One thread: a task
    holds one CPU (``num_cpus=1``)."""
    die_with_parent(os.getppid())
    return fn(task, 1)
