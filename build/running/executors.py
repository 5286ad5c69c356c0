"""Where the per-video work runs: local processes by default, Ray on a cluster.

An executor only maps ``process_video`` over tasks and yields outcomes as they finish;
ordering, resumability and the report live in the pipeline, so every executor gives the
same output.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Protocol

from splice_build.running.lifetime import die_with_parent
from splice_build.running.worker import Outcome, VideoTask, process_video, thread_budget


class Executor(Protocol):
    def run(self, tasks: Iterable[VideoTask]) -> Iterator[Outcome]: ...


class LocalExecutor:
    """A process pool with a bounded number of tasks in flight (memory stays flat).

    Workers are spawned, not forked: a forked worker would carry the driver's memory
    (``datasets``, pyarrow, pandas: about 150 MB of RSS) into every process, while a
    spawned one imports only the cutter. Each worker gets ``cores // workers`` threads.
    Workers die with the driver (`die_with_parent`): a killed build must not leave them
    cutting into a work folder that a rerun uses.
    """

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.threads = thread_budget(self.workers)

    def run(self, tasks: Iterable[VideoTask]) -> Iterator[Outcome]:
        if self.workers == 1:
            for task in tasks:
                yield process_video(task, self.threads)
            return
        pending = set()
        queue = iter(tasks)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            for task in queue:
                pending.add(pool.submit(process_video, task, self.threads))
                if len(pending) >= 2 * self.workers:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    yield from (f.result() for f in done)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from (f.result() for f in done)


def make_executor(
    name: str, workers: int | None = None, ray_address: str | None = None
) -> Executor:
    """The executor named by ``--executor``; Ray is imported only when asked for."""
    if name == "local":
        return LocalExecutor(workers)
    if name == "ray":
        from splice_build.running.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, workers=workers)
    raise ValueError(f"unknown executor {name!r}; expected 'local' or 'ray'")
