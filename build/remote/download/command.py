"""``splice download`` as a subcommand (``add_arguments`` / ``run``, the convention of
`splice_build.cli`): options -> `DownloadSettings`, the build's own selection, a pool of
`Fetcher` workers with a progress bar, the report, and an exit status that says whether the
network was the problem."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from splice_build.errors import ignore_further_interrupts, require, stop_exit, stop_words
from splice_build.plural import counted
from splice_build.records import CutSettings, DownloadOutcome, VideoEntry
from splice_build.remote import download_report
from splice_build.remote.download.fetch import STAGING, Fetcher, short_reason
from splice_build.remote.download.settings import LAYOUTS, DownloadSettings, check_settings
from splice_build.running import ownership
from splice_build.sources import registry
from splice_build.stages import ingest, select, sources


@dataclass(frozen=True)
class DownloadRun:
    outcomes: list[DownloadOutcome]  # one per finished entry, by video id
    interrupted: KeyboardInterrupt | None  # Ctrl-C (or SIGTERM) before all finished
    stopped: str | None = None  # why the breaker stopped the run early (no network)


# With --no-progress (a log, a batch job): a status line at most this often, in seconds.
STATUS_EVERY = 60.0


def _status(what: str) -> None:
    print(f"splice download: {what}", file=sys.stderr, flush=True)


def _tally_words(tally: dict[str, int], total: int) -> str:
    done = sum(tally.values())
    counted = ", ".join(f"{n} {s}" for s, n in tally.items() if n)
    return f"{done}/{total} videos{f' ({counted})' if counted else ''}"


def run_download(entries: list[VideoEntry], settings: DownloadSettings) -> DownloadRun:
    """Fetch every entry's source into ``settings.out``. With the bar off, a status line
    says what the run does at the start and then at most every `STATUS_EVERY` seconds, so
    a long run is never silent."""
    settings.out.mkdir(parents=True, exist_ok=True)
    fetcher = Fetcher(settings, sources.index_sources(settings.out))
    outcomes: list[DownloadOutcome] = []
    tally = dict.fromkeys(download_report.STATUSES, 0)
    bar = tqdm(total=len(entries), unit="video", disable=not settings.progress, desc="download")
    start = said = time.monotonic()
    if not settings.progress:
        _status(f"{len(entries)} videos into {settings.out}, {settings.workers} at a time")
    pool = ThreadPoolExecutor(max(1, settings.workers), thread_name_prefix="splice-download")
    interrupted: KeyboardInterrupt | None = None
    try:
        pending = {pool.submit(fetcher.fetch, e) for e in entries}
        while pending:
            done, pending = wait(pending, timeout=STATUS_EVERY, return_when=FIRST_COMPLETED)
            if not settings.progress and time.monotonic() - said >= STATUS_EVERY:
                said = time.monotonic()
                _status(_tally_words(tally, len(entries)) + " so far")
            for future in done:
                outcome = future.result()
                outcomes.append(outcome)
                tally[outcome.status] += 1
                elapsed = max(time.monotonic() - start, 1e-9)
                bar.set_postfix(
                    done=tally["downloaded"],
                    present=tally["present"],
                    unavailable=tally["unavailable"],
                    failed=tally["failed"],
                    MB_s=f"{fetcher.bytes / elapsed / 1e6:.2f}",
                    refresh=False,
                )
                bar.update()
    except KeyboardInterrupt as stop:
        ignore_further_interrupts()
        interrupted = stop
        fetcher.cancel.set()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
        # Once no worker runs: removed while another worker was creating its folder in it,
        # the staging root made that worker's mkdir fail (a race seen with 2 workers).
        _remove_empty(settings.out / STAGING)
    return DownloadRun(
        sorted(outcomes, key=lambda o: o.video_id), interrupted, fetcher.breaker.reason
    )


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()  # only when empty: what a failed download left is kept to resume
    except OSError:
        pass


def yt_dlp_version() -> str:
    from yt_dlp.version import __version__

    return __version__


def _rate(text: str) -> int:
    """``500K``, ``4.2M`` or bytes per second, as yt-dlp's ``--limit-rate`` takes it."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)i?[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a rate: {text!r} (e.g. 500K, 4M)")
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


# The options' defaults are the settings record's, so the two cannot drift apart.
_DEFAULTS = DownloadSettings(out=Path("videos"))


# Options whose default is the `DownloadSettings` field of the same name (with _ for -).
_SETTINGS_OPTIONS = (
    ("--workers", int, "parallel downloads"),
    ("--sleep", float, "seconds each worker waits before a download"),
    ("--retries", int, "further attempts after a network error, 429 or 5xx"),
    ("--backoff", float, "seconds before the first retry, doubled for each next"),
    ("--timeout", float, "seconds without data before a download counts as stalled"),
    (
        "--max-connect-failures",
        int,
        "stop after this many connection failures in a row (no network, mirror down); a rerun "
        "resumes",
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    select.add_selection_arguments(parser)
    # the build's own source and rules, so that the videos fetched are the ones it selects
    ingest.add_source_arguments(parser)
    parser.add_argument(
        "--out", type=Path, default=_DEFAULTS.out, help="folder of the videos (the build's "
        "--videos; default %(default)s)"
    )  # fmt: skip
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default=_DEFAULTS.layout,
        help="flat: <id>.<ext>; coin: COIN's <recipe_type>/<id>.<ext> (default %(default)s)",
    )
    parser.add_argument(
        "--short-side",
        type=int,
        default=_DEFAULTS.cut.short_side,
        help="take the smallest format whose short side is at least this, else the best "
        "below it (the build's --short-side; default %(default)s)",
    )
    parser.add_argument("--audio", action="store_true", help="keep the sound (default: video only)")
    parser.add_argument(
        "--url-template",
        default=_DEFAULTS.url_template,
        help="where a video is fetched from, with {video_id} and {recipe_type}: a mirror's "
        "direct URLs, e.g. https://lab.example/coin/{recipe_type}/{video_id}.mp4 "
        "(default: YouTube)",
    )
    parser.add_argument(
        "--cookies", type=Path, default=None, help="Netscape cookie file (read, never copied)"
    )
    for flag, kind, text in _SETTINGS_OPTIONS:
        default = getattr(_DEFAULTS, flag.removeprefix("--").replace("-", "_"))
        parser.add_argument(flag, type=kind, default=default, help=f"{text} (default %(default)s)")
    parser.add_argument(
        "--rate-limit", type=_rate, default=None, help="per worker, e.g. 2M (bytes/s)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def settings_from_args(args: argparse.Namespace) -> DownloadSettings:
    return DownloadSettings(
        out=args.out,
        layout=args.layout,
        cut=CutSettings(short_side=args.short_side, audio=args.audio),
        url_template=args.url_template,
        cookies=args.cookies,
        rate_limit=args.rate_limit,
        sleep=args.sleep,
        retries=args.retries,
        backoff=args.backoff,
        timeout=args.timeout,
        workers=args.workers,
        progress=not args.no_progress,
        max_connect_failures=args.max_connect_failures,
    )


def run(args: argparse.Namespace) -> int:
    registry.downloadable(args.source)  # before yt-dlp: Goal-Step and steps are local only
    require("yt_dlp", "download", "splice download")
    settings = settings_from_args(args)
    check_settings(settings, args.source)
    _, selection = select.select_annotations(
        args.annotations,
        subset_size=args.subset_size,
        seed=args.seed,
        curation=args.curation,
        limit=args.limit,
        source=args.source,
        options=ingest.options_from_args(args),
    )
    with ownership.lock_folder(settings.out, "--out", "splice download"):
        done = run_download(selection.selected, settings)
        version = yt_dlp_version()
        line = download_report.write_report(settings.out, done.outcomes, settings.public(), version)
    print(line)
    print(f"report: {settings.out / download_report.REPORT_JSON} (and .csv)")
    last, status = closing_line(done, len(selection.selected))
    if last:
        print(last)
    return status


# Failure categories that are the network's (or the mirror's), not this machine's.
_NETWORK = frozenset({"network", "timeout", "incomplete", "throttled", "server"})


def closing_line(done: DownloadRun, selected: int) -> tuple[str, int]:
    """The run's last line (short, naming what failed) and its exit status: 130 when
    interrupted (143 on SIGTERM), 1 when stopped early or when every video tried failed, else 0."""
    if done.interrupted is not None:
        untried = counted(selected - len(done.outcomes), "video")
        return f"{stop_words(done.interrupted)}: {untried} not tried", stop_exit(done.interrupted)
    untried = sum(o.status == download_report.NOT_TRIED for o in done.outcomes)
    if done.stopped:
        return (
            f"stopped early: {short_reason(done.stopped)}; {untried} videos not tried: check "
            "the connection or the mirror, then run the same command again (it resumes)",
            1,
        )
    attempted = [o for o in done.outcomes if o.status != "present"]
    if not attempted or any(o.status != "failed" for o in attempted):
        return "", 0
    by = Counter(o.category for o in attempted)
    if set(by) <= _NETWORK:
        where, hint = "on the network", "check the connection or the mirror"
    elif set(by) == {"local"}:
        where, hint = "on this machine", "check --out and its disk"
    else:
        where, hint = "", "see the report"
    kinds = ", ".join(f"{n} {c}" for c, n in by.most_common())
    first = short_reason(attempted[0].reason, 100)
    return f"every download failed{f' {where}' if where else ''} ({kinds}; {first}): {hint}", 1
