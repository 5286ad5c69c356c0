"""Where the per-video work runs: local processes by default, Ray on a cluster.

An executor only maps a function over tasks and yields its results as they finish
(``splice build`` maps `worker.process_video`, ``splice import-release`` its per-video
import); ordering, resumability and the report live in the caller, so every executor gives
the same output. The function must be a top-level one of ``(task, threads)`` with
picklable tasks and results: it is sent by reference to a spawned process or a Ray worker.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Protocol, TypeVar

from splice_build.cli import int_at_least
from splice_build.running.lifetime import die_with_parent
from splice_build.running.worker import thread_budget

EXECUTORS = ("local", "ray")

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    def run(self, fn: Callable[[T, int], R], tasks: Iterable[T]) -> Iterator[R]: ...


class LocalExecutor:
    """A process pool with a bounded number of tasks in flight (memory stays flat).

    Workers are spawned, not forked: a forked worker would carry the driver's memory
    (``datasets``, pyarrow, pandas: about 150 MB of RSS) into every process, while a
    spawned one imports only the function's module, and the parent's main module: spawn
    runs that file's top level again in every worker, so a script that imports
    ``datasets`` or pyarrow at its top before calling `run_build` or `run_import` gives each
    worker about 100 MB more (165 MB against the 61-65 MB of ``splice build`` and ``splice
    import-release`` workers, whose main is the small ``splice`` script); import inside
    the ``if __name__ == "__main__"`` block instead. Each worker gets ``cores // workers``
    threads, passed to the function. Workers die with the driver (`die_with_parent`): a
    killed build must not leave them cutting into a work folder that a rerun uses.
    """

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.threads = thread_budget(self.workers)

    def run(self, fn: Callable[[T, int], R], tasks: Iterable[T]) -> Iterator[R]:
        if self.workers == 1:
            for task in tasks:
                yield fn(task, self.threads)
            return
        pending = set()
        queue = iter(tasks)
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
        )
        try:
            for task in queue:
                with _sigint_blocked():  # a worker this submit spawns starts deaf to Ctrl-C
                    pending.add(pool.submit(fn, task, self.threads))
                if len(pending) >= 2 * self.workers:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    yield from (f.result() for f in done)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from (f.result() for f in done)
        except BaseException:  # Ctrl-C, or the caller stopped early: end the work now
            _stop_now(pool)
            raise
        pool.shutdown(wait=True)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread for the block. A worker is spawned inside ``submit``
    and inherits the mask: it must not take Ctrl-C even before its initializer runs (one
    still importing in ``spawn_main`` printed a traceback). A Ctrl-C meanwhile waits for
    the block's end here, so the driver still gets it."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _start_worker(parent: int) -> None:
    """A pool worker: dies with the driver, and leaves Ctrl-C to it (the terminal sends
    SIGINT to the whole process group: a worker raising it in its idle loop printed a
    traceback of its own)."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Drop the queued tasks and end the running ones at once, instead of waiting for each
    video's cut to finish: a cut is committed by a rename, so one ended halfway is only
    redone by the next build."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


def make_executor(
    name: str, workers: int | None = None, ray_address: str | None = None
) -> Executor:
    """The executor named by ``--executor``; Ray is imported only when asked for."""
    if name == "local":
        return LocalExecutor(workers)
    if name == "ray":
        from splice_build.running.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, workers=workers)
    raise ValueError(f"unknown executor {name!r}; expected one of {', '.join(EXECUTORS)}")


def add_workers_argument(parser: argparse.ArgumentParser, what: str = "worker processes") -> None:
    """``--workers``, one definition for every command whose work the executors run (build,
    import-release, validate, demo): at least 1, default all cores."""
    parser.add_argument(
        "--workers", type=int_at_least(1), default=None, help=f"{what} (default: all cores)"
    )


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and ``--ray-address``, one definition for every command that runs
    per-video work (``splice build``, ``splice import-release``)."""
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="where per-video work runs: local processes, or Ray tasks (the [ray] extra; "
        "default %(default)s)",
    )
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (ray only)")
