"""The job loop of ``splice run``: rows become requests, at most ``concurrency`` in flight.

Each row is one ``RowJob`` whose messages are built in a worker thread (frame sampling is
slow); answers are parsed by the metric's ``parse_order`` (the only parser) on the whole
answer, stored capped (``cap_raw_output``) and appended to the prediction file as they
arrive (``resume``). Nothing a request does escapes a worker except a stop of the whole
run: an ``EndpointDown`` from the client or breaker, or an interrupt.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import splice_dataset as schema
import splice_formats
import splice_metric
from splice_build.errors import Terminated, UserError
from splice_build.remote.breaker import Breaker, EndpointDown
from splice_build.remote.redact import Redactor
from splice_eval.predictions import Prediction, cap_raw_output, metadata_line, write_predictions
from splice_eval.run import probes, prompts
from splice_eval.run.chat import CallResult
from splice_eval.run.frame_cache import FrameCache
from splice_eval.run.resume import append_line, is_answered, load_previous
from splice_eval.run.sampling import Frames, FrameSpec
from splice_metric.questions import read_answer

log = logging.getLogger("splice.run")

# How often the job loop looks for a signal while it waits for answers (seconds).
SIGNAL_POLL = 0.1

# A caller takes what a job's ``build_messages`` made: OpenAI chat messages for an endpoint,
# a ``FramesRequest`` for a local model (``splice_eval.run.local``).
Caller = Callable[[Any], CallResult]


@dataclass(frozen=True)
class FramesRequest:
    """One row for a model run in this process: the prompt and, per clip, the frames that
    were sampled and probed for it (None for the text config). The local backends render
    it with their model's own placeholders (``prompts.interleaved_text``)."""

    prompt: prompts.Prompt
    frames: tuple[Frames, ...] | None


@dataclass(frozen=True)
class RowJob:
    """One row to ask about; ``messages`` is built in the worker (frame sampling is slow)."""

    video_id: str  # for a question format, the question's id (splice_formats)
    num_clips: int
    build_messages: Callable[[], Any]  # chat messages, or a ``FramesRequest``
    # the whole answer -> the order, or for a question ``[option]`` (None: unparsed)
    parse: Callable[[str | None], list[int] | None] = splice_metric.parse_order


@dataclass
class RunStats:
    asked: int = 0
    skipped: int = 0
    errors: int = 0
    unparsed: int = 0
    attempts: int = 0
    errors_by_video: dict[str, str] = field(default_factory=dict)
    stopped: str | None = None  # why the run stopped early (the breaker's reason)


def run_jobs(
    jobs: Iterable[RowJob],
    caller: Caller,
    *,
    out: Path,
    config: str,
    model: str,
    concurrency: int = 4,
    progress: Callable[[Prediction, bool], None] | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[list[Prediction], RunStats]:
    """Ask every job not yet answered in ``out``; returns the file's final predictions.

    Answers are appended to ``out`` as they complete, one whole line per write (so a crash
    or a kill loses only requests in flight, and a partial last line is dropped on
    resume); at the end the file is rewritten with its metadata line and one line per
    video, in job order. Nothing a request does escapes a worker except a stop of the
    whole run (``EndpointDown``: a refusing or dead endpoint) or an interrupt; then the
    attempts in flight are aborted, every answer already in is written and the file is
    compacted the same way. An interrupt is raised again; an endpoint stop returns with
    its reason in ``stats.stopped`` (the rows not asked are simply absent: a rerun asks
    them). In the main thread Ctrl-C and SIGTERM reach the loop through ``_signals_deferred``;
    SIGTERM is raised as ``errors.Terminated`` (the dispatcher exits 143 for it).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    metadata = metadata or {"producer": "splice run", "model": model, "config": config}
    out.parent.mkdir(parents=True, exist_ok=True)
    loop = _JobLoop(caller, config, model, load_previous(out, config, model, metadata), progress)
    fresh = not out.exists() or out.stat().st_size == 0
    with (
        out.open("ab", buffering=0) as fh,  # one write() per line: no line is split
        ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="splice-run") as pool,
    ):
        if fresh:
            append_line(fh, metadata_line(metadata))
        with _signals_deferred(loop):
            loop.run(jobs, pool, fh, concurrency)
    ordered = loop.ordered()
    write_predictions(out, ordered, metadata)
    if loop.stop is not None and not isinstance(loop.stop, EndpointDown):
        raise loop.stop
    return ordered, loop.stats


@contextlib.contextmanager
def _signals_deferred(loop: _JobLoop) -> Iterator[None]:
    """Ctrl-C and SIGTERM as a note the loop reads between its steps, not an exception
    raised wherever the main thread happens to be. Raised between taking a finished
    request and storing it, Ctrl-C lost that answer; raised inside a lock's ``__exit__``
    (a future's, the executor's), it would leave the lock held and the run hung. Taken
    over: SIGINT while Python's own handler is installed (a notebook kernel's own is left
    alone), and SIGTERM unless it is ignored (whoever sends it wants the run to end, and
    the answers in hand written; a library's handler, such as Ray's, would end the
    process without them). The previous handlers come back after. While the loop reads
    its next row (which may wait on the network) a signal is raised at once, as before.
    Outside the main thread (where Python runs no signal handler) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
    previous: dict[int, Any] = {}

    def note(signum: int, frame: Any) -> None:
        if loop.reading_rows:  # a stalled Hub stream: nothing is in hand, stop at once
            raise raised[signum]()
        loop.signalled = raised[signum]

    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, note)
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, note)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _JobLoop:
    """One run's state: the answers so far (the file's and this run's), the counts, and
    what stopped it. Workers only call ``work``; everything else runs in the caller's
    thread, so nothing here needs a lock."""

    def __init__(
        self,
        caller: Caller,
        config: str,
        model: str,
        previous: dict[str, Prediction],
        progress: Callable[[Prediction, bool], None] | None,
    ) -> None:
        self.caller, self.config, self.model, self.progress = caller, config, model, progress
        self.results = previous
        self.done = {v for v, p in previous.items() if is_answered(p)}
        self.stats = RunStats()
        self.order_of_ids: list[str] = []
        self.stop: BaseException | None = None
        self.signalled: type[KeyboardInterrupt] | None = None  # set by _signals_deferred
        self.reading_rows = False  # while the next job is read (_signals_deferred raises then)
        self.breaker: Breaker | None = getattr(caller, "breaker", None)
        self.redactor: Redactor = getattr(caller, "redactor", None) or Redactor()
        self.pending: set[Future[Prediction]] = set()

    def run(
        self, jobs: Iterable[RowJob], pool: ThreadPoolExecutor, fh: Any, concurrency: int
    ) -> None:
        try:
            for job in self.read(jobs):
                self.raise_signalled()
                if self.stop is not None:
                    break
                self.order_of_ids.append(job.video_id)
                if job.video_id in self.done:
                    self.stats.skipped += 1
                    if self.progress is not None:  # resumed: counted, not timed
                        self.progress(self.results[job.video_id], True)
                    continue
                self.pending.add(pool.submit(self.work, job))
                self.drain(fh, 2 * concurrency - 1)  # bounded: never build every request up front
            self.drain(fh, 0)
            self.raise_signalled()
        except BaseException as exc:  # an interrupt (Ctrl-C, SIGTERM): keep what is in
            self.stop = exc
            if self.breaker is not None:
                self.breaker.stop("interrupted")
            for fut in self.pending:
                fut.cancel()
            self.drain(fh, 0)

    def read(self, jobs: Iterable[RowJob]) -> Iterator[RowJob]:
        """The jobs, each read with ``reading_rows`` set."""
        rows = iter(jobs)
        while True:
            self.reading_rows = True
            try:
                job = next(rows, None)
            finally:
                self.reading_rows = False
            if job is None:
                return
            yield job

    def ordered(self) -> list[Prediction]:
        """Rows of this run in job order, then rows an earlier run asked that this one did not."""
        ordered = [self.results[v] for v in self.order_of_ids if v in self.results]
        asked_now = set(self.order_of_ids)
        return ordered + [p for v, p in self.results.items() if v not in asked_now]

    def work(self, job: RowJob) -> Prediction:
        try:
            return self.answer(job)
        except EndpointDown:
            raise
        except Exception as exc:  # a bug here must not cost the run, nor this row's place
            log.debug("row %s failed", job.video_id, exc_info=True)
            error = self.redactor.text(f"internal error: {type(exc).__name__}: {exc}")
            return Prediction(job.video_id, self.config, self.model, None, None, {"error": error})

    def answer(self, job: RowJob) -> Prediction:
        result = self.call(job)
        parsed = job.parse(result.raw_output)  # the whole answer
        raw, cut = cap_raw_output(result.raw_output)
        extra: dict[str, Any] = {"usage": result.usage, "attempts": result.attempts}
        if result.sent is not None:
            extra["sent"] = result.sent
        if cut:
            extra["raw_output_cut"] = cut
        if result.error:
            extra["error"] = self.redactor.text(result.error)
        return Prediction(job.video_id, self.config, self.model, raw, parsed, extra)

    def call(self, job: RowJob) -> CallResult:
        try:
            messages = job.build_messages()
        except Exception as exc:  # a bad clip is this row's error, not the run's
            return CallResult(None, None, 0, f"could not build the request: {exc}")
        try:
            return self.caller(messages)
        except EndpointDown:
            raise
        except Exception as exc:  # a bug or a reply nobody foresaw: still this row's
            log.debug("request for %s failed", job.video_id, exc_info=True)
            return CallResult(None, None, 1, f"request failed: {type(exc).__name__}: {exc}")

    def raise_signalled(self) -> None:
        """Raise the signal noted since the last look. A second one, noted while the run
        is stopping, is raised from its final drain as it was before the loop took signals
        over: the answers already appended stay in the file, not compacted (a rerun reads
        them)."""
        if self.signalled is not None:
            signalled, self.signalled = self.signalled, None
            raise signalled()

    def drain(self, fh: Any, block_until: int) -> None:
        while len(self.pending) > block_until:
            finished, _ = wait(self.pending, SIGNAL_POLL, return_when=FIRST_COMPLETED)
            for fut in finished:
                self.collect(fh, fut)
            self.raise_signalled()

    def collect(self, fh: Any, fut: Future[Prediction]) -> None:
        """Store one finished request. It leaves ``pending`` only once its answer is in
        ``results``: an interrupt may land on any line here, and the interrupt's final
        drain must still find it (``results`` is what the file is rewritten from)."""
        try:
            pred = fut.result()
        except CancelledError:
            self.pending.discard(fut)
            return
        except EndpointDown as exc:
            if self.stop is None:
                self.stop = exc
                self.stats.stopped = str(exc)
                if self.breaker is not None:
                    self.breaker.stop(str(exc))
            self.pending.discard(fut)
            return
        if self.results.get(pred.video_id) is pred:  # stored before an interrupt landed
            self.pending.discard(fut)
            return
        self.results[pred.video_id] = pred
        self.pending.discard(fut)
        append_line(fh, pred.to_json())
        self.stats.asked += 1
        self.stats.attempts += int(pred.extra.get("attempts") or 0)
        if pred.extra.get("error"):
            self.stats.errors += 1
            self.stats.errors_by_video[pred.video_id] = str(pred.extra["error"])
        elif pred.order is None:
            self.stats.unparsed += 1
        if self.progress is not None:
            self.progress(pred, False)


# --- rows -> jobs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSettings:
    """Everything the command line decides about how rows become requests."""

    config: str
    # "video": one video item per clip; "images": sampled frames as base64 images;
    # "frames": sampled frames as arrays in a ``FramesRequest`` (a local model)
    clips_as: str = "images"
    frames: FrameSpec = FrameSpec()
    limit: int | None = None
    probe: str = probes.NONE  # what the model is shown of the sampled frames (``probes``)
    probe_seed: int = probes.DEFAULT_SEED
    frame_cache: FrameCache | None = None  # sampled frames kept on disk (``--frame-cache``)
    format: str = splice_formats.ORDER  # how the rows are asked (``--format``)


def iter_jobs(
    rows: Iterable[dict[str, Any]], settings: RunSettings, references: dict[str, Any]
) -> Iterator[RowJob]:
    """One job per row; fills ``references`` (video id -> answer order; for a question
    format, question id -> the metric's question reference) for scoring.

    The answer column stays here: only ``build_prompt`` (which reads model-facing columns)
    sees the row on the way to the model.
    """
    for index, row in enumerate(rows):
        if settings.limit is not None and index >= settings.limit:
            return
        if settings.format != splice_formats.ORDER:
            yield _question_job(row, settings, references)
            continue
        video_id = str(row[schema.VIDEO_ID])
        answer = row.get(schema.ANSWER) or {}
        if answer.get("order") is not None:
            references[video_id] = list(answer["order"])
        model_row = {k: row[k] for k in schema.MODEL_FACING[settings.config] if k in row}
        yield RowJob(video_id, int(row[schema.NUM_CLIPS]), _message_builder(model_row, settings))


def _question_job(row: dict[str, Any], settings: RunSettings, references: dict[str, Any]) -> RowJob:
    """A question row's job: its answer kept here, its reply read as an option number."""
    qid = str(row[schema.QUESTION_ID])
    labels = [int(x) for x in row[schema.LABELS]]
    answer = row[schema.ANSWER]
    references[qid] = {**answer, "labels": labels}
    model_row = {k: v for k, v in row.items() if k != schema.ANSWER}

    def parse(text: str | None) -> list[int] | None:
        option = read_answer(text, settings.format, int(answer["num_options"]), labels)
        return None if option is None else [option]

    return RowJob(qid, len(labels), _message_builder(model_row, settings), parse)


def _message_builder(row: dict[str, Any], settings: RunSettings) -> Callable[[], Any]:
    def build() -> Any:
        prompt = prompts.build_question_prompt(row, settings.config, settings.format)
        if settings.clips_as == "frames" and settings.config == "text":
            return FramesRequest(prompt, None)
        if settings.clips_as == "video" or settings.config == "text":
            return prompts.to_chat_messages(prompt, clips_as=settings.clips_as)
        cache = settings.frame_cache
        frames = probes.probed_frames(
            prompt,
            settings.frames.kwargs(),
            settings.probe,
            settings.probe_seed,
            sample=cache.sample if cache is not None else None,
        )
        if settings.clips_as == "frames":
            return FramesRequest(prompt, tuple(frames))
        return prompts.to_chat_messages(prompt, clips_as="images", frames=frames)

    return build


def load_rows(
    data: str, config: str, format: str = splice_formats.ORDER
) -> Iterable[dict[str, Any]]:
    """Rows of a built folder or Hub id (as ``format`` questions), streamed, clips undecoded
    (the runner only needs their bytes: it sends them as they are or samples frames with
    PyAV)."""
    try:
        return schema.load(config, source=data, streaming=True, decode=False, format=format)
    except FileNotFoundError as exc:  # a local folder that is not there (or not a build)
        raise UserError(f"--data {data}: {exc}") from None
