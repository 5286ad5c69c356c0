"""``splice run``: put SPLICE to a model served behind an OpenAI-compatible chat endpoint.

vLLM, SGLang, TGI and the commercial APIs all speak the OpenAI chat API, so one runner
covers served open models and closed ones alike. For each row it sends the paper's prompt
with the clips (as video items, or as frames sampled the paper's way and sent as base64
images), both built by ``splice_dataset`` so the runner and a user's own script ask the
same question. Answers are parsed by the metric's ``parse_order`` (the only parser) and
written as a prediction file (``splice_eval.predictions``) that ``splice score`` reads.

Long runs against rate-limited, flaky or hostile endpoints are the norm, so the runner
- keeps at most ``--concurrency`` requests in flight;
- ends every attempt by ``--timeout`` seconds of wall-clock time and reads at most
  ``--max-answer-bytes`` of it, whatever the server does (``http_post``: drips, stalls
  and huge bodies included);
- retries 429, 408, 409 and 5xx answers, timeouts, dropped connections and bodies that are
  not JSON (cut off) with exponential backoff, honouring the server's ``Retry-After``;
  other 4xx answers and replies that are not chat completions are row errors; 401/403/404
  (wrong key, model or URL) stop the run at once since every row would fail;
- stops the run with one message when the endpoint is gone (``breaker``: consecutive
  connection failures, or no reply at all for ``--max-silence`` seconds);
- appends each answer to the output file as it arrives, one whole line per write, after
  a metadata line saying how the answers are produced; when started again on the same
  file it skips rows already answered (rows that ended in an error are tried again) and
  refuses to mix in answers produced with other settings;
- on SIGTERM or Ctrl-C, aborts what is in flight and writes what is in before exiting;
- ends by scoring everything in the file with the metric.

The API key is read from the environment (``OPENAI_API_KEY`` or ``--api-key-env NAME``);
it and every credential header are replaced by ``***`` (``redact``) in all that is
printed, logged or stored, including what a server echoes back.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import logging
import os
import signal
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

import splice_dataset as schema
import splice_metric
from splice_build.cli import float_in, int_at_least
from splice_build.errors import UserError
from splice_eval import http_post
from splice_eval.breaker import (
    DEFAULT_MAX_FAILURES,
    DEFAULT_MAX_SILENCE,
    Breaker,
    EndpointDown,
)
from splice_eval.predictions import (
    Prediction,
    cap_raw_output,
    iter_predictions,
    metadata_conflict,
    metadata_line,
    project_version,
    read_metadata,
    write_predictions,
)
from splice_eval.redact import RedactingFilter, Redactor, public_url, url_secrets

log = logging.getLogger("splice.run")

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, SGLang) accept any key: without one no Authorization header is sent.
NO_KEY_PLACEHOLDER = "EMPTY"
# A chat completion of a few thousand tokens is a few kB; past this the server is broken.
DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024
INTERRUPTED_EXIT = 130  # the shell's code for a run ended by a signal
RETRY_STATUSES = frozenset({408, 409, 429})  # plus every 5xx
FATAL_STATUSES = frozenset({401, 403, 404})


# --- frames ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameSpec:
    """How frames are sampled from a clip: the paper's two settings (Appendix A.2)."""

    fps: float | None = 1.0
    num_frames: int | None = None
    # Explicit, so that a prediction file's metadata says what the frames were.
    max_side: int | None = schema.PAPER_MAX_SIDE

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``splice_dataset.sample_frames``."""
        out: dict[str, Any] = {}
        if self.num_frames is not None:
            out["num_frames"] = self.num_frames
        else:
            out["fps"] = self.fps
        if self.max_side is not None:
            out["max_side"] = self.max_side
        return out


def parse_frames(text: str) -> FrameSpec:
    """``fps=1,max_side=448`` or ``num_frames=16[,max_side=448]`` -> FrameSpec."""
    values: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in ("fps", "num_frames", "max_side"):
            raise argparse.ArgumentTypeError(
                f"--frames: bad item {part!r}; expected fps=F, num_frames=N and/or max_side=S"
            )
        values[name.strip()] = value.strip()
    if "fps" in values and "num_frames" in values:
        raise argparse.ArgumentTypeError("--frames: give fps= or num_frames=, not both")
    try:
        fps = float(values["fps"]) if "fps" in values else None
        num_frames = int(values["num_frames"]) if "num_frames" in values else None
        max_side = int(values["max_side"]) if "max_side" in values else schema.PAPER_MAX_SIDE
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--frames {text!r}: {exc}") from None
    if fps is not None and not fps > 0:
        raise argparse.ArgumentTypeError(f"--frames: fps must be > 0, got {fps}")
    if num_frames is not None and num_frames < 1:
        raise argparse.ArgumentTypeError(f"--frames: num_frames must be >= 1, got {num_frames}")
    if max_side is not None and max_side < 16:
        raise argparse.ArgumentTypeError(f"--frames: max_side must be >= 16, got {max_side}")
    if fps is None and num_frames is None:
        fps = 1.0
    return FrameSpec(fps=fps, num_frames=num_frames, max_side=max_side)


# --- one chat call with retries ------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt k (1-based) waits ``base * 2**(k-1)``, capped.

    A server's ``Retry-After`` replaces the computed wait (capped by ``max_retry_after``,
    so a broken header cannot stall a run for hours). Tests pass a tiny ``base``.
    """

    max_retries: int = 5
    base: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 300.0

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        return min(self.cap, self.base * 2 ** (retry_number - 1))


@dataclass(frozen=True)
class CallResult:
    """What one row's request produced, after all its attempts."""

    raw_output: str | None
    usage: dict[str, Any] | None
    attempts: int
    error: str | None = None
    waits: tuple[float, ...] = ()  # backoff waits between attempts, in seconds


class EndpointError(EndpointDown):
    """The endpoint refuses every request (bad key, model or URL): stop the run."""


@dataclass(frozen=True)
class _Outcome:
    """One attempt: an answer, or an error and whether another attempt may fare better."""

    raw_output: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    transient: bool = False
    retry_after: float | None = None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds the server asks us to wait (``Retry-After``: seconds or an HTTP date;
    ``retry-after-ms`` as OpenAI sends), or None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatCaller:
    """Sends one chat request to ``{endpoint}/chat/completions`` and retries it.

    Each attempt ends by ``timeout`` seconds of wall-clock time and reads at most
    ``max_bytes`` (``http_post``), whatever the server does. Every way a reply can be wrong
    (an error status, a cut-off or non-JSON body, a body that is not a chat completion, no
    choices, no text, not UTF-8, too large) becomes the row's error, retried when another
    attempt may fare better; only a refusal of every request (401/403/404) and an open
    circuit breaker (``breaker``) stop the run. Every error text goes through the
    redactor first, since servers echo requests back.
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        policy: RetryPolicy,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        max_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        generation: dict[str, Any] | None = None,
        breaker: Breaker | None = None,
        redactor: Redactor | None = None,
        sleep: Callable[[float], None] | None = None,
    ):
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.model = model
        self.policy = policy
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.generation = dict(generation or {})
        self.breaker = breaker or Breaker()
        self.redactor = redactor or Redactor()
        self.sleep = sleep
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "splice-run",
        }
        if api_key and api_key != NO_KEY_PLACEHOLDER:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.redactor.add(api_key)
        self.redactor.add_headers(self.headers)
        for secret in url_secrets(endpoint):
            self.redactor.add(secret)

    def __call__(self, messages: list[dict[str, Any]]) -> CallResult:
        body = json.dumps(
            {"model": self.model, "messages": messages, **self.generation}, ensure_ascii=False
        ).encode("utf-8")
        waits: list[float] = []
        attempt = 0
        while True:
            attempt += 1
            outcome = self._attempt(body)
            if outcome.error is None:
                return CallResult(outcome.raw_output, outcome.usage, attempt, None, tuple(waits))
            if not outcome.transient or attempt > self.policy.max_retries:
                return CallResult(None, outcome.usage, attempt, outcome.error, tuple(waits))
            wait_s = self.policy.delay(attempt, outcome.retry_after)
            log.debug("attempt %d failed (%s); retrying in %.2fs", attempt, outcome.error, wait_s)
            waits.append(wait_s)
            if self.sleep is not None:
                self.sleep(wait_s)
            else:
                self.breaker.stopped.wait(wait_s)  # a stopping run wakes the sleepers
            self.breaker.check()

    def _attempt(self, body: bytes) -> _Outcome:
        handle = self.breaker.start()
        try:
            reply = http_post.post(
                self.url,
                body,
                self.headers,
                timeout=self.timeout,
                max_bytes=self.max_bytes,
                attempt=handle,
            )
        except http_post.HttpFailure as failure:
            error = self.redactor.text(str(failure))
            if failure.kind == http_post.OVERSIZE:  # the server is there, answering too much
                self.breaker.heard()
                return _Outcome(error=error, transient=False)
            self.breaker.failed(failure.kind == http_post.CONNECT, error)
            self.breaker.check()
            return _Outcome(error=error, transient=True)
        finally:
            self.breaker.end(handle)
        self.breaker.heard()
        return self._read_reply(reply)

    def _read_reply(self, reply: http_post.HttpReply) -> _Outcome:
        if reply.status != 200:
            message = self._server_message(reply.body)
            if reply.status in FATAL_STATUSES:
                reason = (
                    f"endpoint answered HTTP {reply.status} ({message}); "
                    "check --endpoint, --model and the API key variable"
                )
                self.breaker.stop(reason)
                raise EndpointError(reason)
            transient = reply.status in RETRY_STATUSES or reply.status >= 500
            return _Outcome(
                error=f"HTTP {reply.status}: {message}",
                transient=transient,
                retry_after=retry_after_seconds(reply.headers) if transient else None,
            )
        try:
            text = reply.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _Outcome(error=f"answer body is not UTF-8 ({exc.reason} at byte {exc.start})")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:  # most often a body cut off in transit
            return _Outcome(
                error=f"answer body is not valid JSON ({exc.msg} at character {exc.pos} of "
                f"{len(text)}): {self._snippet(text)}",
                transient=True,
            )
        return self._completion(data)

    def _completion(self, data: Any) -> _Outcome:
        """The text of a chat completion, or what is wrong with its shape."""
        if not isinstance(data, dict):
            return _Outcome(error=f"answer is JSON {type(data).__name__}, not a chat completion")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        usage = self.redactor.value(usage) if usage else None
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            why = "has no choices" if not choices else "has 'choices' that is not a list"
            if isinstance(data.get("error"), (dict, str)):
                why += f" (error: {self._server_message(json.dumps(data['error']).encode())})"
            return _Outcome(usage=usage, error=f"answer {why}")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            return _Outcome(usage=usage, error="answer's first choice has no message object")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            texts = [p.get("text") for p in content if isinstance(p, dict)]
            content = "".join(t for t in texts if isinstance(t, str)) if any(texts) else None
        if content is None:
            return _Outcome(usage=usage, error="answer's message has no content")
        if not isinstance(content, str):
            return _Outcome(usage=usage, error=f"answer's content is {type(content).__name__}")
        return _Outcome(raw_output=self.redactor.text(_valid_text(content)), usage=usage)

    def _server_message(self, body: bytes) -> str:
        """The server's own words for an error, redacted first, then shortened."""
        text = body.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            inner = data.get("error")
            found = data.get("message") or (
                inner.get("message") if isinstance(inner, dict) else inner
            )
            if found:
                text = found if isinstance(found, str) else json.dumps(found)
        return self._snippet(text) or "no message"

    def _snippet(self, text: str, limit: int = 300) -> str:
        text = " ".join(self.redactor.text(_valid_text(text)).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _valid_text(text: str) -> str:
    """``text`` without lone surrogates (JSON's ``"\\ud83d"``, an emoji cut in half by
    max_tokens), which no UTF-8 file can hold: each becomes ``?``."""
    return text.encode("utf-8", errors="replace").decode("utf-8")


# --- resumable prediction file ---------------------------------------------------------------


def load_previous(
    path: Path, config: str, model: str, metadata: dict[str, Any] | None = None
) -> dict[str, Prediction]:
    """The last line per video already in ``path`` (answers and errors alike).

    A run killed mid-write can leave a partial last line: it is cut off (with a warning)
    so that the rest of the file stays usable. A file made with other settings (its
    metadata line), without a metadata line, or holding another model's or config's lines
    belongs to another run: refuse rather than mix two runs' answers.
    """
    if not path.exists():
        return {}
    _drop_partial_last_line(path)
    previous: dict[str, Prediction] = {}
    for pred in iter_predictions(path):
        if pred.config != config or pred.model != model:
            raise UserError(
                f"{path}: holds predictions for model {pred.model!r}, config {pred.config!r} "
                f"(video {pred.video_id}); this run is model {model!r}, config {config!r}. "
                "Use another --out file."
            )
        previous[pred.video_id] = pred
    if metadata is not None and (previous or path.stat().st_size):
        found = read_metadata(path)
        if found is None:
            raise UserError(
                f"{path}: has no metadata line saying how its answers were produced (an "
                "older splice run or another tool made it); use another --out file"
            )
        conflict = metadata_conflict(found, metadata)
        if conflict is not None:
            raise UserError(
                f"{path}: was made with other settings: {conflict}. Resuming would mix "
                "answers of two settings in one file; use another --out file"
            )
    return previous


def is_answered(pred: Prediction) -> bool:
    """A row counts as done once the model answered (even unparseably); errors are retried."""
    return not pred.extra.get("error")


def _drop_partial_last_line(path: Path) -> None:
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    log.warning("%s: dropping a partial last line left by an interrupted run", path)
    with path.open("r+b") as fh:
        fh.truncate(keep)


# --- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowJob:
    """One row to ask about; ``messages`` is built in the worker (frame sampling is slow)."""

    video_id: str
    num_clips: int
    build_messages: Callable[[], list[dict[str, Any]]]


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
    caller: Callable[[list[dict[str, Any]]], CallResult],
    *,
    out: Path,
    config: str,
    model: str,
    concurrency: int = 4,
    progress: Callable[[Prediction], None] | None = None,
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
    them).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    metadata = metadata or {"producer": "splice run", "model": model, "config": config}
    out.parent.mkdir(parents=True, exist_ok=True)
    results = load_previous(out, config, model, metadata)
    done = {v for v, p in results.items() if is_answered(p)}
    stats = RunStats()
    order_of_ids: list[str] = []
    breaker: Breaker | None = getattr(caller, "breaker", None)
    redactor: Redactor = getattr(caller, "redactor", None) or Redactor()

    def work(job: RowJob) -> Prediction:
        try:
            return answer(job)
        except EndpointDown:
            raise
        except Exception as exc:  # a bug here must not cost the run, nor this row's place
            log.debug("row %s failed", job.video_id, exc_info=True)
            error = redactor.text(f"internal error: {type(exc).__name__}: {exc}")
            return Prediction(job.video_id, config, model, None, None, {"error": error})

    def answer(job: RowJob) -> Prediction:
        try:
            messages = job.build_messages()
        except Exception as exc:  # a bad clip is this row's error, not the run's
            result = CallResult(None, None, 0, f"could not build the request: {exc}")
        else:
            try:
                result = caller(messages)
            except EndpointDown:
                raise
            except Exception as exc:  # a bug or a reply nobody foresaw: still this row's
                log.debug("request for %s failed", job.video_id, exc_info=True)
                result = CallResult(None, None, 1, f"request failed: {type(exc).__name__}: {exc}")
        parsed = splice_metric.parse_order(result.raw_output)  # the whole answer
        raw, cut = cap_raw_output(result.raw_output)
        extra: dict[str, Any] = {"usage": result.usage, "attempts": result.attempts}
        if cut:
            extra["raw_output_cut"] = cut
        if result.error:
            extra["error"] = redactor.text(result.error)
        return Prediction(job.video_id, config, model, raw, parsed, extra)

    fresh = not out.exists() or out.stat().st_size == 0
    stop: BaseException | None = None
    with (
        out.open("ab", buffering=0) as fh,  # one write() per line: no line is split
        ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="splice-run") as pool,
    ):
        if fresh:
            _append_line(fh, metadata_line(metadata))
        pending: set[Future[Prediction]] = set()

        def collect(fut: Future[Prediction]) -> None:
            nonlocal stop
            try:
                pred = fut.result()
            except CancelledError:
                return
            except EndpointDown as exc:
                if stop is None:
                    stop = exc
                    stats.stopped = str(exc)
                    if breaker is not None:
                        breaker.stop(str(exc))
                return
            _append_line(fh, pred.to_json())
            results[pred.video_id] = pred
            stats.asked += 1
            stats.attempts += int(pred.extra.get("attempts") or 0)
            if pred.extra.get("error"):
                stats.errors += 1
                stats.errors_by_video[pred.video_id] = str(pred.extra["error"])
            elif pred.order is None:
                stats.unparsed += 1
            if progress is not None:
                progress(pred)

        def drain(block_until: int) -> None:
            nonlocal pending
            while len(pending) > block_until:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    collect(fut)

        try:
            for job in jobs:
                if stop is not None:
                    break
                order_of_ids.append(job.video_id)
                if job.video_id in done:
                    stats.skipped += 1
                    continue
                pending.add(pool.submit(work, job))
                drain(2 * concurrency - 1)  # bounded: never build every request up front
            drain(0)
        except BaseException as exc:  # an interrupt (Ctrl-C, SIGTERM): keep what is in
            stop = exc
            if breaker is not None:
                breaker.stop("interrupted")
            for fut in pending:
                fut.cancel()
            drain(0)

    # Rows of this run in job order, then rows an earlier run asked that this one did not.
    ordered = [results[v] for v in order_of_ids if v in results]
    asked_now = set(order_of_ids)
    ordered += [p for v, p in results.items() if v not in asked_now]
    write_predictions(out, ordered, metadata)
    if stop is not None and not isinstance(stop, EndpointDown):
        raise stop
    return ordered, stats


def _append_line(fh: Any, text: str) -> None:
    """Append one line with as few write() calls as the OS allows (one, for a regular
    file), so a kill leaves whole lines and at most one partial last line."""
    data = memoryview((text + "\n").encode("utf-8"))
    while data:
        data = data[fh.write(data) :]


# --- rows -> jobs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSettings:
    """Everything the command line decides about how rows become requests."""

    config: str
    clips_as: str = "images"  # "video": one video item per clip; "images": sampled frames
    frames: FrameSpec = FrameSpec()
    limit: int | None = None


def iter_jobs(
    rows: Iterable[dict[str, Any]], settings: RunSettings, references: dict[str, list[int]]
) -> Iterator[RowJob]:
    """One job per row; fills ``references`` (video id -> answer order) for scoring.

    The answer column stays here: only ``build_prompt`` (which reads model-facing columns)
    sees the row on the way to the model.
    """
    for index, row in enumerate(rows):
        if settings.limit is not None and index >= settings.limit:
            return
        video_id = str(row[schema.VIDEO_ID])
        answer = row.get(schema.ANSWER) or {}
        if answer.get("order") is not None:
            references[video_id] = list(answer["order"])
        model_row = {k: row[k] for k in schema.MODEL_FACING[settings.config] if k in row}
        yield RowJob(video_id, int(row[schema.NUM_CLIPS]), _message_builder(model_row, settings))


def _message_builder(row: dict[str, Any], settings: RunSettings) -> Callable[[], list[dict]]:
    def build() -> list[dict[str, Any]]:
        prompt = schema.build_prompt(row, settings.config)
        return schema.to_chat_messages(
            prompt, clips_as=settings.clips_as, frames=settings.frames.kwargs()
        )

    return build


def load_rows(data: str, config: str) -> Iterable[dict[str, Any]]:
    """Rows of a built folder or Hub id, streamed, clips undecoded (the runner only needs
    their bytes: it sends them as they are or samples frames with PyAV)."""
    try:
        return schema.load(config, source=data, streaming=True, decode=False)
    except FileNotFoundError as exc:  # a local folder that is not there (or not a build)
        raise UserError(f"--data {data}: {exc}") from None


# --- scoring --------------------------------------------------------------------------------


def score(predictions: list[Prediction], references: dict[str, list[int]]) -> dict[str, Any]:
    """The metric over the rows of this run that have a reference; a row without an
    answer (error) or with an unparseable one counts as an invalid prediction."""
    scored = [p for p in predictions if p.video_id in references]
    if not scored:
        return {}
    return splice_metric.score(
        [p.order for p in scored],
        [references[p.video_id] for p in scored],
        random_baseline=True,
    )


# --- command line ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", required=True, help="base URL, e.g. http://host:8000/v1")
    parser.add_argument("--model", required=True, help="model name the endpoint serves")
    parser.add_argument("--config", required=True, choices=schema.CONFIGS)
    parser.add_argument("--data", required=True, help="a built SPLICE folder or a Hub dataset id")
    parser.add_argument(
        "--frames",
        type=parse_frames,
        default=None,
        help="frame sampling for --as images: fps=1,max_side=448 (default) or num_frames=16",
    )
    parser.add_argument(
        "--as",
        dest="clips_as",
        choices=("video", "images"),
        default="images",
        help="send each clip as one video item (vLLM's video_url) or as sampled frames "
        "(base64 images; works with every OpenAI-compatible endpoint). Default: images",
    )
    parser.add_argument("--out", required=True, type=Path, help="prediction file (JSONL)")
    parser.add_argument("--concurrency", type=int_at_least(1), default=4, help="requests in flight")
    parser.add_argument(
        "--timeout",
        type=float_in(0, low_open=True),
        default=300.0,
        help="wall-clock seconds per attempt, whatever the server does (default 300)",
    )
    parser.add_argument("--max-retries", type=int_at_least(0), default=5, help="retries per row")
    parser.add_argument(
        "--backoff", type=float_in(0), default=1.0, help="first retry wait in seconds (doubles)"
    )
    parser.add_argument(
        "--max-answer-bytes",
        type=int_at_least(1024),
        default=DEFAULT_MAX_ANSWER_BYTES,
        help=f"largest reply body read per attempt (default {DEFAULT_MAX_ANSWER_BYTES})",
    )
    parser.add_argument(
        "--max-connect-failures",
        type=int_at_least(1),
        default=DEFAULT_MAX_FAILURES,
        help="stop the run after this many connection failures in a row (refused, DNS, "
        f"TLS; default {DEFAULT_MAX_FAILURES})",
    )
    parser.add_argument(
        "--max-silence",
        type=float_in(0, low_open=True),
        default=DEFAULT_MAX_SILENCE,
        help="stop the run when no reply at all arrived for this many seconds while "
        f"requests kept failing (default {DEFAULT_MAX_SILENCE:g})",
    )
    parser.add_argument("--limit", type=int_at_least(1), default=None, help="only the first N rows")
    parser.add_argument("--max-tokens", type=int_at_least(1), default=1024)
    parser.add_argument("--temperature", type=float_in(0), default=0.0)
    parser.add_argument(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        help=f"environment variable holding the API key (default {DEFAULT_KEY_ENV})",
    )


def api_key_from_env(name: str, explicit: bool) -> str:
    """The key's value from the environment; its value is never logged.

    No key at all is fine for local servers (vLLM, SGLang) unless a variable was named.
    """
    value = os.environ.get(name)
    if value:
        return value
    if explicit:
        raise UserError(f"--api-key-env {name}: that variable is not set or empty")
    return NO_KEY_PLACEHOLDER


def run_metadata(args: argparse.Namespace, settings: RunSettings) -> dict[str, Any]:
    """How this run's answers are produced: the prediction file's metadata line."""
    return {
        "producer": "splice run",
        "model": args.model,
        "config": args.config,
        "endpoint": public_url(args.endpoint),
        "prompt_version": schema.PROMPT_VERSION,
        "clips_as": settings.clips_as if args.config != "text" else None,
        "frames": (
            settings.frames.kwargs()
            if args.config != "text" and settings.clips_as == "images"
            else None
        ),
        "sampling": {"max_tokens": args.max_tokens, "temperature": args.temperature},
        "splice_version": project_version(),
    }


def _check_options(args: argparse.Namespace) -> None:
    checks = [
        (args.concurrency >= 1, "--concurrency must be >= 1"),
        (args.timeout > 0, "--timeout must be > 0"),
        (args.max_retries >= 0, "--max-retries must be >= 0"),
        (args.limit is None or args.limit >= 1, "--limit must be >= 1"),
        (args.max_answer_bytes >= 1024, "--max-answer-bytes must be >= 1024"),
        (args.max_connect_failures >= 1, "--max-connect-failures must be >= 1"),
        (args.max_silence > 0, "--max-silence must be > 0"),
    ]
    for ok, message in checks:
        if not ok:
            raise UserError(message)
    if args.frames is not None and (args.clips_as == "video" or args.config == "text"):
        raise UserError(
            "--frames applies to --as images with a video config "
            f"(got --as {args.clips_as}, --config {args.config})"
        )
    parts = urllib.parse.urlsplit(args.endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--endpoint {public_url(args.endpoint)!r}: expected http(s)://host...")
    if parts.username or parts.password:
        raise UserError(
            "--endpoint: put credentials in the API key variable (--api-key-env), not in the "
            "URL (which is printed and recorded)"
        )


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: answers in hand are written before the run ends."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def run(args: argparse.Namespace, *, sleep: Callable[[float], None] | None = None) -> int:
    _check_options(args)
    api_key = api_key_from_env(args.api_key_env, args.api_key_env != DEFAULT_KEY_ENV)
    settings = RunSettings(
        config=args.config,
        clips_as=args.clips_as,
        frames=args.frames or FrameSpec(),
        limit=args.limit,
    )
    redactor = Redactor()
    caller = ChatCaller(
        args.endpoint,
        args.model,
        RetryPolicy(max_retries=args.max_retries, base=args.backoff),
        api_key=api_key,
        timeout=args.timeout,
        max_bytes=args.max_answer_bytes,
        generation={"max_tokens": args.max_tokens, "temperature": args.temperature},
        breaker=Breaker(args.max_connect_failures, args.max_silence),
        redactor=redactor,
        sleep=sleep,
    )
    log_filter = RedactingFilter(redactor)
    log.addFilter(log_filter)
    metadata = run_metadata(args, settings)
    rows = load_rows(args.data, args.config)  # a missing build is refused before any output
    print(
        f"splice run: {args.model} at {metadata['endpoint']}, config {args.config}, "
        f"clips as {settings.clips_as if args.config != 'text' else 'text only'}, "
        f"out {args.out}",
        file=sys.stderr,
    )
    references: dict[str, list[int]] = {}
    bar = tqdm(desc="rows answered", unit="row", total=args.limit, disable=None, file=sys.stderr)
    in_main = threading.current_thread() is threading.main_thread()
    previous_handler = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    try:
        predictions, stats = run_jobs(
            iter_jobs(rows, settings, references),
            caller,
            out=args.out,
            config=args.config,
            model=args.model,
            concurrency=args.concurrency,
            progress=lambda _pred: bar.update(),
            metadata=metadata,
        )
    except KeyboardInterrupt:
        print(
            f"splice run: interrupted; the answers already in are kept in {args.out}; run the "
            "same command again to resume.",
            file=sys.stderr,
        )
        return INTERRUPTED_EXIT
    finally:
        bar.close()
        log.removeFilter(log_filter)
        if in_main:
            signal.signal(signal.SIGTERM, previous_handler)
    answered = sum(is_answered(p) for p in predictions)
    if stats.stopped is not None:
        print(
            f"splice run: stopped: {redactor.text(stats.stopped)}. {answered} answered rows "
            f"are kept in {args.out}; run the same command again to resume.",
            file=sys.stderr,
        )
        return 1
    print(
        f"asked {stats.asked} rows ({stats.skipped} already in {args.out}), "
        f"{stats.attempts} requests, {stats.errors} errors, {stats.unparsed} unparsed answers",
        file=sys.stderr,
    )
    for video_id, error in list(stats.errors_by_video.items())[:10]:
        print(f"  {video_id}: {redactor.text(error)}", file=sys.stderr)
    scores = score(predictions, references)
    report = {"model": args.model, "config": args.config, "scores": scores}
    print(json.dumps(report, indent=2, default=_jsonable))
    return 1 if stats.errors else 0


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays in the metric's output, for json.dumps."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
