"""What the runner gets from a local backend (``LocalModel``), and the batching both local
backends share: rows arrive one per job-loop thread, the model runs them a batch at a time.

Torch-free: the backends import this module, never the reverse (``load.open_local``
picks one).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from splice_build.remote.breaker import Breaker, EndpointDown
from splice_build.remote.redact import Redactor
from splice_eval.run.chat import CallResult
from splice_eval.run.jobs import FramesRequest
from splice_eval.run.local.families import Family

INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class LocalModel:
    """A loaded model, ready for the job loop: ``caller`` answers ``FramesRequest``s."""

    family: Family
    caller: Any
    batch_size: int
    where: str  # the device, for the run's first line
    metadata: dict[str, Any] = field(default_factory=dict)  # into the metadata line


class BatchCaller:
    """The job loop's caller for a model in this process: each call waits for its row's
    answer while one model thread runs the rows in batches of up to ``batch_size`` (those
    that arrived within ``gather`` seconds of the first). An interrupt of the run stops the
    breaker; the backend's generation checks it between tokens, and the rows in hand end
    with ``EndpointDown`` (not written: a rerun asks them)."""

    def __init__(
        self,
        run_batch: Callable[[Sequence[FramesRequest]], list[CallResult]],
        batch_size: int,
        breaker: Breaker | None = None,
        gather: float = 0.05,
    ) -> None:
        self.run_batch = run_batch
        self.batch_size = batch_size
        self.gather = gather
        self.breaker = breaker or Breaker()
        self.redactor = Redactor()
        self._queue: queue.Queue[tuple[FramesRequest, Future[CallResult]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> CallResult:
        if not isinstance(request, FramesRequest):
            raise TypeError(f"a local model takes a FramesRequest, not {type(request).__name__}")
        self.breaker.check()
        done: Future[CallResult] = Future()
        self._queue.put((request, done))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="splice-model", daemon=True)
                self._thread.start()
        return done.result()

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.batch_size:
                try:
                    batch.append(self._queue.get(timeout=self.gather))
                except queue.Empty:
                    break
            try:
                if self.breaker.stopped.is_set():
                    raise EndpointDown(self.breaker.reason or INTERRUPTED)
                results = self.run_batch([request for request, _ in batch])
                if self.breaker.stopped.is_set():  # cut short by an interrupt: no answers
                    raise EndpointDown(self.breaker.reason or INTERRUPTED)
            except BaseException as exc:  # every row of the batch gets it (jobs: a row error)
                for _, done in batch:
                    done.set_exception(exc)
                continue
            for (_, done), result in zip(batch, results, strict=True):
                done.set_result(result)
