"""``splice run``: put SPLICE to a model served behind an OpenAI-compatible chat endpoint.

For each row it sends the paper's prompt with the clips (as video items, or as frames
sampled the paper's way and sent as base64 images), built by ``splice_eval.run.prompts`` so
the runner and a user's own script ask the same question, and ends by scoring everything
in the prediction file with the metric (``scoring``). This module is the command line;
the work is done by

- ``chat``: the OpenAI-compatible client (timeouts, byte caps, retries with backoff and
  ``Retry-After``, the circuit breaker, redaction of the key in every error);
- ``jobs``: the job loop, at most ``--concurrency`` requests in flight; on SIGTERM or
  Ctrl-C it aborts what is in flight and writes what is in before exiting;
- ``resume``: the prediction file, appended one whole line per answer after a metadata
  line, resumed on a rerun (rows already answered skipped, other settings refused).

The API key is read from the environment (``OPENAI_API_KEY`` or ``--api-key-env NAME``);
it and every credential header are replaced by ``***`` (``redact``) in all that is
printed, logged or stored, including what a server echoes back.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import splice_dataset as schema
import splice_formats
from splice_build.cli import float_in, int_at_least
from splice_build.errors import UserError, ignore_further_interrupts, stop_exit, stop_words
from splice_build.output.card_reader import read_card
from splice_build.remote.breaker import DEFAULT_MAX_FAILURES, DEFAULT_MAX_SILENCE, Breaker
from splice_build.remote.redact import RedactingFilter, Redactor, public_url
from splice_build.running.ownership import lock_folder
from splice_eval.data_source import DATA_HELP, local_build, stream_source
from splice_eval.predictions import project_version
from splice_eval.run import frame_cache, probes, prompts
from splice_eval.run.chat import (
    DEFAULT_MAX_ANSWER_BYTES,
    NO_KEY_PLACEHOLDER,
    ChatCaller,
    RetryPolicy,
)
from splice_eval.run.jobs import RunSettings, iter_jobs, load_rows, run_jobs
from splice_eval.run.local import options as local_options
from splice_eval.run.progress import RowProgress, rows_total
from splice_eval.run.resume import is_answered
from splice_eval.run.sampling import FrameSpec
from splice_eval.scoring import question_scores
from splice_eval.scoring import runs as scoring
from splice_eval.scoring.score import format_table

log = logging.getLogger("splice.run")

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def _frames_items(text: str) -> dict[str, str]:
    """``--frames``' ``name=value`` items, each name one it knows."""
    values: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if name.strip() == "max_side":
            raise argparse.ArgumentTypeError(
                "max_side is now long_side (the cap on a frame's longer side)"
            )
        if not sep or name.strip() not in ("fps", "num_frames", "long_side"):
            raise argparse.ArgumentTypeError(
                f"bad item {part!r}; expected fps=F, num_frames=N and/or long_side=S"
            )
        values[name.strip()] = value.strip()
    return values


def parse_frames(text: str) -> FrameSpec:
    """``fps=1,long_side=448`` or ``num_frames=16[,long_side=448]`` -> FrameSpec. Its errors
    name the item, not the option: argparse names ``--frames``."""
    values = _frames_items(text)
    if "fps" in values and "num_frames" in values:
        raise argparse.ArgumentTypeError("give fps= or num_frames=, not both")
    fps = _frames_value(values, "fps", float_in(0, low_open=True), "> 0")
    num_frames = _frames_value(values, "num_frames", int_at_least(1), ">= 1")
    long_side = _frames_value(values, "long_side", int_at_least(16), ">= 16")
    if fps is None and num_frames is None:
        fps = 1.0
    return FrameSpec(
        fps=fps,
        num_frames=num_frames,
        long_side=schema.PAPER_LONG_SIDE if long_side is None else long_side,
    )


def _frames_value(
    values: dict[str, str], name: str, parse: Callable[[str], Any], allowed: str
) -> Any:
    """One item's value, read by the shared option types and refused naming the item."""
    if name not in values:
        return None
    try:
        return parse(values[name])
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{name} must be {allowed}, got {name}={values[name]}"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--endpoint", default=None, help="--backend openai: base URL, e.g. http://host:8000/v1"
    )
    parser.add_argument(
        "--model",
        required=True,
        help="model name the endpoint serves; with --backend transformers or vllm, a local "
        "checkpoint folder or a Hub id",
    )
    local_options.add_arguments(parser)
    parser.add_argument(
        "--config",
        required=True,
        choices=schema.CONFIGS,
        help="config to ask the model: %(choices)s",
    )
    parser.add_argument("--data", required=True, help=DATA_HELP)
    parser.add_argument(
        "--format",
        choices=splice_formats.FORMATS,
        default=splice_formats.ORDER,
        help="how each video is asked: order (put all clips in order, the paper's task; "
        "default), pairwise (which of two clips came first) or choice (pick the true order "
        "among candidates)",
    )
    parser.add_argument(
        "--frames",
        type=parse_frames,
        default=None,
        help="frame sampling for --as images: fps=1,long_side=448 (default) or num_frames=16; "
        "with --backend transformers or vllm the model family's paper setting is the "
        "default (Qwen2-VL: fps=1; InternVL, LLaVA-OneVision: num_frames=16; 448 px)",
    )
    parser.add_argument(
        "--as",
        dest="clips_as",
        choices=("video", "images"),
        default=None,
        help="--backend openai: send each clip as one video item (vLLM's video_url) or as "
        "sampled frames (base64 images; works with every OpenAI-compatible endpoint). "
        "Default: images",
    )
    parser.add_argument(
        "--probe",
        choices=probes.PROBES,
        default=probes.NONE,
        help="what the model is shown of each clip's sampled frames: single-frame (the "
        "middle one), frame-shuffle (seeded order), reversed, blind (mid-grey frames, same "
        "prompt) or none (default); needs --as images and a video config",
    )
    parser.add_argument(
        "--probe-seed",
        type=int,
        default=probes.DEFAULT_SEED,
        help="seed of frame-shuffle's orders (default %(default)s)",
    )
    parser.add_argument(
        "--frame-cache",
        type=Path,
        default=None,
        help="folder of sampled frames kept between runs, so a sweep decodes each clip "
        "once (default $SPLICE_FRAME_CACHE, else ~/.cache/splice/frames; safe to delete)",
    )
    parser.add_argument(
        "--no-frame-cache", action="store_true", help="decode every clip afresh, keep nothing"
    )
    parser.add_argument("--out", required=True, type=Path, help="prediction file (JSONL)")
    parser.add_argument(
        "--concurrency",
        type=int_at_least(1),
        default=4,
        help="requests in flight (default %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float_in(0, low_open=True),
        default=300.0,
        help="wall-clock seconds per attempt, whatever the server does (default 300)",
    )
    parser.add_argument(
        "--max-retries",
        type=int_at_least(0),
        default=5,
        help="retries per row (default %(default)s)",
    )
    parser.add_argument(
        "--backoff",
        type=float_in(0),
        default=1.0,
        help="first retry wait in seconds, doubled for each next (default %(default)s)",
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
    parser.add_argument(
        "--max-tokens",
        type=int_at_least(1),
        default=prompts.MAX_NEW_TOKENS,
        help="cap on the answer's tokens (default %(default)s)",
    )
    parser.add_argument(
        "--temperature",
        type=float_in(0),
        default=0.0,
        help="sampling temperature (default %(default)s)",
    )
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


def run_metadata(
    args: argparse.Namespace, settings: RunSettings, local: dict[str, Any] | None = None
) -> dict[str, Any]:
    """How this run's answers are produced: the prediction file's metadata line (``local``:
    a local backend's own settings, ``LocalModel.metadata``)."""
    sampled = settings.clips_as in ("images", "frames")
    return {
        "producer": "splice run",
        "model": args.model,
        "config": args.config,
        "endpoint": public_url(args.endpoint) if args.endpoint else None,
        **(local or {}),
        "prompt_version": prompts.prompt_version(settings.format),
        "format": settings.format,
        "question_seed": splice_formats.DEFAULT_SEED,
        "clips_as": settings.clips_as if args.config != "text" else None,
        "frames": settings.frames.kwargs() if args.config != "text" and sampled else None,
        "probe": settings.probe,
        "probe_seed": settings.probe_seed,
        "sampling": {"max_tokens": args.max_tokens, "temperature": args.temperature},
        "splice_version": project_version(),
        # the build asked (its card's identity): resuming on, or scoring against, another
        # build is refused; a Hub id's card alone is fetched (or taken from the Hub cache)
        "build_id": read_card(local_build(args.data, ())).build_id or None,
    }


def _check_options(args: argparse.Namespace) -> None:
    local_options.check(args)
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
    if args.frame_cache is not None and args.no_frame_cache:
        raise UserError("--frame-cache and --no-frame-cache: give one of them")
    if args.backend != local_options.OPENAI:
        _check_local(args)
        return
    _check_endpoint(args)


def _check_local(args: argparse.Namespace) -> None:
    if args.frames is not None and args.config == "text":
        raise UserError("--frames applies to a video config (got --config text)")
    if args.probe != probes.NONE and args.config == "text":
        raise UserError(f"--probe {args.probe} changes sampled frames: it needs a video config")
    from splice_eval.run.local.load import check_model_reachable

    check_model_reachable(args.model)  # at once: before the rows' and the backend's imports


def _check_endpoint(args: argparse.Namespace) -> None:
    clips_as = endpoint_clips_as(args)
    if args.frames is not None and (clips_as == "video" or args.config == "text"):
        raise UserError(
            "--frames applies to --as images with a video config "
            f"(got --as {clips_as}, --config {args.config})"
        )
    if args.probe != probes.NONE and (clips_as == "video" or args.config == "text"):
        raise UserError(
            f"--probe {args.probe} changes sampled frames: it needs --as images and a video "
            f"config (got --as {clips_as}, --config {args.config})"
        )
    parts = urllib.parse.urlsplit(args.endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--endpoint {public_url(args.endpoint)!r}: expected http(s)://host...")
    if parts.username or parts.password:
        raise UserError(
            "--endpoint: put credentials in the API key variable (--api-key-env), not in the "
            "URL (which is printed and recorded)"
        )


def endpoint_clips_as(args: argparse.Namespace) -> str:
    """``--as`` of an endpoint run: images unless given."""
    return args.clips_as or "images"


def run(args: argparse.Namespace, *, sleep: Callable[[float], None] | None = None) -> int:
    _check_options(args)
    # two runs on one file would ask rows twice and interleave their lines: the second is
    # refused at once, naming the first (the lock `splice build` and `download` take)
    with lock_folder(args.out, "--out", "splice run", kind="file"):
        return _run(args, sleep)


def _run(args: argparse.Namespace, sleep: Callable[[float], None] | None) -> int:
    redactor = Redactor()
    data = stream_source(args.data, args.config)  # an unreachable Hub: said at once
    rows = load_rows(data, args.config, args.format)  # a missing build: refused first
    common = dict(
        config=args.config,
        limit=args.limit,
        probe=args.probe,
        probe_seed=args.probe_seed,
        format=args.format,
        frame_cache=_frame_cache(args),
    )
    if args.backend == local_options.OPENAI:
        caller: Any = _endpoint_caller(args, redactor, sleep)
        settings = RunSettings(
            clips_as=endpoint_clips_as(args), frames=args.frames or FrameSpec(), **common
        )
        metadata = run_metadata(args, settings)
        where = f"at {metadata['endpoint']}"
        concurrency = args.concurrency
    else:
        from splice_eval.run.local.load import open_local

        local = open_local(args)  # loads the model: one line on stderr first
        frames = args.frames or parse_frames(local.family.frames)
        settings = RunSettings(clips_as="frames", frames=frames, **common)
        caller = local.caller
        metadata = run_metadata(args, settings, local.metadata)
        where = f"on {local.where} ({args.backend}, {local.family.name})"
        concurrency = max(args.concurrency, local.batch_size)
    log_filter = RedactingFilter(redactor)
    log.addFilter(log_filter)
    print(
        f"splice run: {args.model} {where}, config {args.config}, "
        f"clips as {settings.clips_as if args.config != 'text' else 'text only'}, "
        f"probe {settings.probe}, format {settings.format}, "
        f"build {(metadata['build_id'] or 'not identified')[:16]}, out {args.out}",
        file=sys.stderr,
    )
    references: dict[str, list[int]] = {}
    bar = RowProgress(rows_total(rows, args.limit))
    try:
        predictions, stats = run_jobs(
            iter_jobs(rows, settings, references),
            caller,
            out=args.out,
            config=args.config,
            model=args.model,
            concurrency=concurrency,
            progress=lambda _pred, resumed: bar.update(resumed),
            metadata=metadata,
        )
    except KeyboardInterrupt as stop:
        ignore_further_interrupts()
        bar.close()  # the bar's line ends before the message
        print(
            f"splice run: {stop_words(stop)}; the answers already in are kept in {args.out}; "
            "run the same command again to resume.",
            file=sys.stderr,
        )
        return stop_exit(stop)
    finally:
        bar.close()
        log.removeFilter(log_filter)
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
    if references and args.format != splice_formats.ORDER:
        run = scoring.Run.of(predictions, model=args.model, config=args.config, format=args.format)
        scores = scoring.score_run(run, references)
        print(question_scores.summarize(run, scores, args.out, scores_path(args.out)))
    elif references:
        run = scoring.Run.of(predictions, model=args.model, config=args.config)
        scores = scoring.score_run(run, references, random_baseline=True)
        print(summarize(run, scores, args.out, args.data))
    return 1 if stats.errors else 0


def _frame_cache(args: argparse.Namespace) -> frame_cache.FrameCache | None:
    if args.no_frame_cache:
        return None
    return frame_cache.FrameCache(args.frame_cache or frame_cache.default_dir())


def _endpoint_caller(
    args: argparse.Namespace, redactor: Redactor, sleep: Callable[[float], None] | None
) -> ChatCaller:
    api_key = api_key_from_env(args.api_key_env, args.api_key_env != DEFAULT_KEY_ENV)
    return ChatCaller(
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


def scores_path(out: Path) -> Path:
    """Where ``splice run`` writes a run's scores: beside its prediction file."""
    return out.with_name(out.stem + ".scores.json")


def summarize(run: scoring.Run, scores: dict[str, Any], out: Path, data: Path) -> str:
    """The run's scores in full to ``scores_path(out)``, and a few lines for the terminal:
    the run against the random expectation, and where the rest is."""
    path = scores_path(out)
    report = {"model": run.model, "config": run.config, "scores": scores}
    path.write_text(json.dumps(report, indent=2, default=_jsonable) + "\n", encoding="utf-8")
    rows = [(f"{out.name}:{run.model}/{run.config}", scores)]
    rows.append(("random (expected)", scores["random_baseline"]))
    return (
        f"{format_table('run', rows)}\n\nall scores: {path} (by number of clips, random "
        f"baseline)\nby domain: splice score {out} --data {data} --groups domain"
    )


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays in the metric's output, for json.dumps."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
