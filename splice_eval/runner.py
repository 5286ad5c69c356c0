"""``splice run``: put SPLICE to a model served behind an OpenAI-compatible chat endpoint.

vLLM, SGLang, TGI and the commercial APIs all speak the OpenAI chat API, so one runner
covers served open models and closed ones alike. For each row it sends the paper's prompt
with the clips (as video items, or as frames sampled the paper's way and sent as base64
images), both built by ``splice_dataset`` so the runner and a user's own script ask the
same question. Answers are parsed by the metric's ``parse_order`` (the only parser) and
written as a prediction file (``splice_eval.predictions``) that ``splice score`` reads.

Long runs against rate-limited or flaky endpoints are the norm, so the runner
- keeps at most ``--concurrency`` requests in flight,
- retries 429, 408, 409 and 5xx answers, timeouts and dropped connections with exponential
  backoff, honouring the server's ``Retry-After``; other 4xx answers are row errors, and
  401/403/404 (wrong key, model or URL) stop the run at once since every row would fail,
- appends each answer to the output file as it arrives and, when started again on the same
  file, skips rows already answered (rows that ended in an error are tried again),
- ends by scoring everything in the file with the metric.

The API key is read from the environment (``OPENAI_API_KEY`` or ``--api-key-env NAME``)
and is never printed, logged or written to the prediction file.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

import splice_dataset as schema
import splice_metric
from splice_build.cli import float_in, int_at_least
from splice_build.errors import UserError
from splice_eval.predictions import Prediction, iter_predictions, write_predictions

log = logging.getLogger("splice.run")

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, SGLang) accept any key; the openai client refuses an empty one.
NO_KEY_PLACEHOLDER = "EMPTY"
RETRY_STATUSES = frozenset({408, 409, 429})  # plus every 5xx
FATAL_STATUSES = frozenset({401, 403, 404})


# --- frames ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameSpec:
    """How frames are sampled from a clip: the paper's two settings (Appendix A.2)."""

    fps: float | None = 1.0
    num_frames: int | None = None
    max_side: int | None = None

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
        max_side = int(values["max_side"]) if "max_side" in values else None
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


class EndpointError(RuntimeError):
    """The endpoint refuses every request (bad key, model or URL): stop the run."""


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
    """Sends one chat request and retries it according to a RetryPolicy.

    The openai client's own retries are switched off (``max_retries=0``) so that every
    attempt and wait is counted here, recorded in the prediction file and testable.
    """

    def __init__(
        self,
        client: Any,
        model: str,
        policy: RetryPolicy,
        *,
        generation: dict[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.client = client
        self.model = model
        self.policy = policy
        self.generation = dict(generation or {})
        self.sleep = sleep

    def __call__(self, messages: list[dict[str, Any]]) -> CallResult:
        import openai

        waits: list[float] = []
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                response = self.client.chat.completions.create(
                    model=self.model, messages=messages, **self.generation
                )
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in FATAL_STATUSES:
                    raise EndpointError(
                        f"endpoint answered HTTP {status} ({_error_message(exc)}); "
                        "check --endpoint, --model and the API key variable"
                    ) from None
                error = f"HTTP {status}: {_error_message(exc)}"
                if status not in RETRY_STATUSES and status < 500:
                    return CallResult(None, None, attempt, error, tuple(waits))
                retry_after = retry_after_seconds(exc.response.headers)
            except openai.APITimeoutError:
                error = "timeout: no answer within the request timeout"
            except openai.APIConnectionError as exc:
                error = f"connection error: {exc.__cause__ or exc}"
            else:
                return _result_from_response(response, attempt, tuple(waits))
            if attempt > self.policy.max_retries:
                return CallResult(None, None, attempt, error, tuple(waits))
            wait_s = self.policy.delay(attempt, retry_after)
            log.debug("attempt %d failed (%s); retrying in %.2fs", attempt, error, wait_s)
            waits.append(wait_s)
            self.sleep(wait_s)


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if message:
            return str(message)[:300]
    return str(getattr(exc, "message", exc))[:300]


def _result_from_response(response: Any, attempts: int, waits: tuple[float, ...]) -> CallResult:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return CallResult(None, None, attempts, "response has no choices", waits)
    content = choices[0].message.content
    usage = response.usage.model_dump() if getattr(response, "usage", None) else None
    if content is None:
        return CallResult(None, usage, attempts, "response message has no content", waits)
    return CallResult(str(content), usage, attempts, None, waits)


# --- resumable prediction file ---------------------------------------------------------------


def load_previous(path: Path, config: str, model: str) -> dict[str, Prediction]:
    """The last line per video already in ``path`` (answers and errors alike).

    A run killed mid-write can leave a partial last line: it is cut off (with a warning)
    so that the rest of the file stays usable. Lines for another model or config mean the
    file belongs to another run: refuse rather than mix two runs' answers.
    """
    if not path.exists():
        return {}
    _drop_partial_last_line(path)
    previous: dict[str, Prediction] = {}
    for pred in iter_predictions(path):
        if pred.config != config or pred.model != model:
            raise ValueError(
                f"{path}: holds predictions for model {pred.model!r}, config {pred.config!r} "
                f"(video {pred.video_id}); this run is model {model!r}, config {config!r}. "
                "Use another --out file."
            )
        previous[pred.video_id] = pred
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


def run_jobs(
    jobs: Iterable[RowJob],
    caller: Callable[[list[dict[str, Any]]], CallResult],
    *,
    out: Path,
    config: str,
    model: str,
    concurrency: int = 4,
    progress: Callable[[Prediction], None] | None = None,
) -> tuple[list[Prediction], RunStats]:
    """Ask every job not yet answered in ``out``; returns the file's final predictions.

    Answers are appended to ``out`` as they complete (so a crash loses only requests in
    flight); at the end the file is rewritten with one line per video, in job order.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    out.parent.mkdir(parents=True, exist_ok=True)
    results = load_previous(out, config, model)
    done = {v for v, p in results.items() if is_answered(p)}
    stats = RunStats()
    order_of_ids: list[str] = []

    def work(job: RowJob) -> Prediction:
        try:
            messages = job.build_messages()
        except Exception as exc:  # a bad clip is this row's error, not the run's
            result = CallResult(None, None, 0, f"could not build the request: {exc}")
        else:
            result = caller(messages)
        parsed = splice_metric.parse_order(result.raw_output)
        extra: dict[str, Any] = {"usage": result.usage, "attempts": result.attempts}
        if result.error:
            extra["error"] = result.error
        return Prediction(job.video_id, config, model, result.raw_output, parsed, extra)

    with (
        out.open("a", encoding="utf-8") as fh,
        ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="splice-run") as pool,
    ):
        pending: set[Future[Prediction]] = set()

        def drain(block_until: int) -> None:
            nonlocal pending
            while len(pending) > block_until:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    pred = fut.result()  # EndpointError propagates and stops the run
                    fh.write(pred.to_json() + "\n")
                    fh.flush()
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

        try:
            for job in jobs:
                order_of_ids.append(job.video_id)
                if job.video_id in done:
                    stats.skipped += 1
                    continue
                pending.add(pool.submit(work, job))
                drain(2 * concurrency - 1)  # bounded: never build every request up front
            drain(0)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise

    # Rows of this run in job order, then rows an earlier run asked that this one did not.
    ordered = [results[v] for v in order_of_ids if v in results]
    asked_now = set(order_of_ids)
    ordered += [p for v, p in results.items() if v not in asked_now]
    write_predictions(out, ordered)
    return ordered, stats


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
        "--timeout", type=float_in(0, low_open=True), default=300.0, help="seconds per request"
    )
    parser.add_argument("--max-retries", type=int_at_least(0), default=5, help="retries per row")
    parser.add_argument(
        "--backoff", type=float_in(0), default=1.0, help="first retry wait in seconds (doubles)"
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


def make_client(endpoint: str, api_key: str, timeout: float) -> Any:
    import openai

    return openai.OpenAI(base_url=endpoint, api_key=api_key, timeout=timeout, max_retries=0)


def run(args: argparse.Namespace, *, sleep: Callable[[float], None] = time.sleep) -> int:
    if args.concurrency < 1:
        raise UserError("--concurrency must be >= 1")
    if args.timeout <= 0:
        raise UserError("--timeout must be > 0")
    if args.max_retries < 0:
        raise UserError("--max-retries must be >= 0")
    if args.limit is not None and args.limit < 1:
        raise UserError("--limit must be >= 1")
    if args.frames is not None and (args.clips_as == "video" or args.config == "text"):
        raise UserError(
            "--frames applies to --as images with a video config "
            f"(got --as {args.clips_as}, --config {args.config})"
        )
    api_key = api_key_from_env(args.api_key_env, args.api_key_env != DEFAULT_KEY_ENV)
    settings = RunSettings(
        config=args.config,
        clips_as=args.clips_as,
        frames=args.frames or FrameSpec(),
        limit=args.limit,
    )
    caller = ChatCaller(
        make_client(args.endpoint, api_key, args.timeout),
        args.model,
        RetryPolicy(max_retries=args.max_retries, base=args.backoff),
        generation={"max_tokens": args.max_tokens, "temperature": args.temperature},
        sleep=sleep,
    )
    rows = load_rows(args.data, args.config)  # a missing build is refused before any output
    print(
        f"splice run: {args.model} at {args.endpoint}, config {args.config}, "
        f"clips as {settings.clips_as if args.config != 'text' else 'text only'}, "
        f"out {args.out}",
        file=sys.stderr,
    )
    references: dict[str, list[int]] = {}
    bar = tqdm(desc="rows answered", unit="row", total=args.limit, disable=None, file=sys.stderr)
    try:
        predictions, stats = run_jobs(
            iter_jobs(rows, settings, references),
            caller,
            out=args.out,
            config=args.config,
            model=args.model,
            concurrency=args.concurrency,
            progress=lambda _pred: bar.update(),
        )
    except EndpointError as exc:
        print(f"splice run: stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    print(
        f"asked {stats.asked} rows ({stats.skipped} already in {args.out}), "
        f"{stats.attempts} requests, {stats.errors} errors, {stats.unparsed} unparsed answers",
        file=sys.stderr,
    )
    for video_id, error in list(stats.errors_by_video.items())[:10]:
        print(f"  {video_id}: {error}", file=sys.stderr)
    scores = score(predictions, references)
    report = {"model": args.model, "config": args.config, "scores": scores}
    print(json.dumps(report, indent=2, default=_jsonable))
    return 1 if stats.errors else 0


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays in the metric's output, for json.dumps."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
