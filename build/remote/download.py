"""``splice download``: fetch the source videos of a build with yt-dlp.

COIN ships only YouTube URLs, and years later many are gone, so the download is a stage of
its own with its own report: every video the build will select (the very same selection,
`select.select_annotations`) ends as downloaded, already present, unavailable (the source
says so; never retried) or failed (transient errors on every attempt, retried with
backoff). yt-dlp is used as a library (``yt_dlp.YoutubeDL``): its YouTube extractor for the
default URLs and its generic extractor for a mirror's direct URLs (``--url-template``).

Files appear in the output folder only when finished and probing whole: yt-dlp works in
``<out>/.splice-download/<id>/`` (hidden, so the build's source index never enters it),
where a cut-off download's ``.part`` stays to be resumed by the next attempt or run. What
it made and no longer needs is removed; nothing else is. A broken earlier copy of a video
is renamed ``<name>.broken`` (not deleted) once a good one is in place.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from splice_build.errors import UserError
from splice_build.records import (
    CutSettings,
    DownloadOutcome,
    SkipVideo,
    SourceCandidates,
    SourceIndex,
    VideoEntry,
)
from splice_build.remote import download_report
from splice_build.running import ownership
from splice_build.running.report import portable
from splice_build.stages import probe, select, sources

DEFAULT_URL_TEMPLATE = "https://www.youtube.com/watch?v={video_id}"
LAYOUTS = ("flat", "coin")
STAGING = ".splice-download"
# The cutter's default cap on the short side (splice_dataset.PAPER_MAX_SIDE, not imported:
# the schema module pulls in `datasets`, which a download never needs).
DEFAULT_MAX_SIDE = 448
_PLACEHOLDERS = ("video_id", "recipe_type")


@dataclass(frozen=True)
class DownloadSettings:
    out: Path
    layout: str = "flat"
    # The cut the sources are for: its cap on the short side picks the format, ``audio``
    # whether sound is fetched, its coverage tolerance how whole a download must probe.
    cut: CutSettings = field(default_factory=lambda: CutSettings(max_side=DEFAULT_MAX_SIDE))
    url_template: str = DEFAULT_URL_TEMPLATE
    cookies: Path | None = None
    rate_limit: int | None = None  # bytes per second, per worker
    sleep: float = 5.0  # seconds before each download, per worker
    retries: int = 3  # further attempts after a transient error
    backoff: float = 10.0  # seconds before the first retry; doubled for each further one
    timeout: float = 30.0  # seconds without data before a connection counts as stalled
    workers: int = 2
    progress: bool = True

    def public(self) -> dict[str, Any]:
        """The settings as the report shows them: whether cookies were used, never which."""
        skip = ("out", "cut", "cookies", "progress")
        data = {k: v for k, v in asdict(self).items() if k not in skip}
        data.update(max_side=self.cut.max_side, audio=self.cut.audio, tolerance=self.cut.tolerance)
        data["cookies"] = self.cookies is not None
        data["url_template"] = download_report.public_url(self.url_template)
        return data


# --- format choice ------------------------------------------------------------------


def short_side(fmt: dict[str, Any]) -> int | None:
    width, height = fmt.get("width"), fmt.get("height")
    if width and height:
        return min(width, height)
    return height or None


def _size(fmt: dict[str, Any]) -> float:
    return fmt.get("filesize") or fmt.get("filesize_approx") or fmt.get("tbr") or float("inf")


def choose_format(
    formats: list[dict[str, Any]], max_side: int, audio: bool = False, can_merge: bool = False
) -> str | None:
    """A yt-dlp format spec for the cutter: the smallest format whose short side is at least
    ``max_side`` (the clips' cap: a smaller one would be upscaled), else the best below it.

    Video only unless ``audio``; with audio, a format that carries sound, or the chosen
    video plus the best audio when ffmpeg can merge them. A format of unknown size (a
    mirror's direct file) is taken as it is. Any container and codec PyAV decodes will do.
    """
    video = [f for f in formats if f.get("vcodec") != "none" and f.get("ext") != "mhtml"]
    if not video:
        return None
    if not audio:
        pool = [f for f in video if f.get("acodec") == "none"] or video
    elif can_merge:
        pool = video
    else:
        pool = [f for f in video if f.get("acodec") != "none"] or video
    known = [f for f in pool if short_side(f)]
    above = [f for f in known if short_side(f) >= max_side]
    if above:
        chosen = min(above, key=lambda f: (short_side(f), _size(f)))
    elif known:
        chosen = max(known, key=lambda f: (short_side(f), -_size(f)))
    else:
        chosen = pool[-1]  # yt-dlp lists formats worst first
    spec = str(chosen["format_id"])
    if audio and can_merge and chosen.get("acodec") == "none":
        spec += "+bestaudio"
    return spec


# --- error classification -----------------------------------------------------------

_HTTP_STATUS = re.compile(r"HTTP Error (\d{3})")
# (pattern, status, category); the first match wins, so throttling that YouTube words as
# "unavailable" is caught before "removed".
_MESSAGES: tuple[tuple[str, str, str], ...] = (
    (r"not a bot|too many requests|rate.?limit|try again later|captcha|po token", "failed",
     "throttled"),
    (r"requested format is not available|no video formats|unsupported url", "unavailable",
     "other"),
    (r"private video|members.only|join this channel|sign in to view", "unavailable", "private"),
    (r"confirm your age|age.restricted|inappropriate for some users", "unavailable",
     "age-restricted"),
    (r"your country|geo.?restrict|geo.?block|from your location", "unavailable", "geo-blocked"),
    (r"copyright", "unavailable", "copyright"),
    (r"removed|no longer available|terminated|does not exist|deleted|video unavailable|"
     r"is unavailable|not available", "unavailable", "removed"),
    (r"timed out|timeout", "failed", "timeout"),
    (r"bytes read|more expected|incomplete|content too short|did not get any data",
     "failed", "incomplete"),
    (r"connection|network|unreachable|refused|reset by peer|name resolution|"
     r"temporary failure|getaddrinfo|ssl", "failed", "network"),
)  # fmt: skip


def classify(message: str) -> tuple[str, str]:
    """(status, category) of a yt-dlp error: "failed" ones are transient and retried."""
    status = _HTTP_STATUS.search(message)
    if status:
        code = int(status.group(1))
        if code in (404, 410):
            return "unavailable", "removed"
        if code in (401, 403):
            return "unavailable", "private"
        if code == 451:
            return "unavailable", "copyright"
        if code == 429:
            return "failed", "throttled"
        if code == 408:
            return "failed", "timeout"
        if code >= 500:
            return "failed", "server"
    text = message.lower()
    for pattern, kind, category in _MESSAGES:
        if re.search(pattern, text):
            return kind, category
    return "unavailable", "other"


def _clean_message(message: str) -> str:
    text = re.sub(r"\s+", " ", message.replace("\r", " ")).strip()
    return re.sub(r"^ERROR:\s*", "", text)


# --- one video ----------------------------------------------------------------------


class _QuietLogger:
    """yt-dlp's messages stay out of the terminal (the progress bar and report say it all);
    its errors reach us as exceptions."""

    def debug(self, msg: str) -> None:
        pass

    info = warning = error = debug


def _youtube_dl(params: dict[str, Any]):
    """A ``YoutubeDL`` that reads the cookie file but never writes it back (yt-dlp saves its
    cookie jar on close: two workers would race on the user's file)."""
    import yt_dlp

    class _ReadOnlyCookies(yt_dlp.YoutubeDL):
        def save_cookies(self) -> None:
            pass

    return _ReadOnlyCookies(params)


def video_url(template: str, entry: VideoEntry) -> str:
    return template.format(video_id=entry.video_id, recipe_type=entry.recipe_type)


def target_dir(settings: DownloadSettings, entry: VideoEntry) -> Path:
    if settings.layout == "coin":
        return settings.out / str(entry.recipe_type)
    return settings.out


class Fetcher:
    """Fetches one video at a time (thread-safe: every attempt has its own ``YoutubeDL``)."""

    def __init__(self, settings: DownloadSettings, index: SourceIndex):
        self.settings = settings
        self.index = index
        self.bytes = 0
        self.cancel = threading.Event()  # set on Ctrl-C: downloads under way stop at once
        self._lock = threading.Lock()

    def fetch(self, entry: VideoEntry) -> DownloadOutcome:
        """One video's outcome, whatever happens: an error on this machine fails that video
        (category ``local``), never the run, so the others go on and the report is written."""
        try:
            return self._fetch(entry)
        except Exception as err:
            reason = relative_reason(f"{type(err).__name__}: {err}", self.settings)
            return DownloadOutcome(
                entry.video_id,
                entry.recipe_type,
                "failed",
                category="local",
                reason=reason,
                url=download_report.public_url(video_url(self.settings.url_template, entry)),
            )

    def _fetch(self, entry: VideoEntry) -> DownloadOutcome:
        s = self.settings
        url = video_url(s.url_template, entry)
        base = DownloadOutcome(
            entry.video_id, entry.recipe_type, "", url=download_report.public_url(url)
        )
        candidates = self.index.lookup(entry.video_id)
        broken: list[str] = []
        for rel in candidates.paths:
            try:
                probe.probe(entry, s.out, s.cut.tolerance, replace(candidates, paths=(rel,)))
            except SkipVideo:
                broken.append(rel)
                continue
            return replace(base, status="present", file=rel, bytes=(s.out / rel).stat().st_size)
        staging = s.out / STAGING / entry.video_id
        staging.mkdir(parents=True, exist_ok=True)
        outcome = replace(base, status="failed", category="network")
        for attempt in range(1, s.retries + 2):
            if attempt > 1 and self.cancel.wait(s.backoff * 2 ** (attempt - 2)):
                break
            outcome = self._attempt(entry, url, staging, replace(outcome, attempts=attempt))
            if outcome.status != "failed":
                break
        if outcome.status == "downloaded":
            outcome = self._place(entry, staging, outcome, broken)
        if outcome.status != "failed" and not self.cancel.is_set():  # keep .part to resume
            shutil.rmtree(staging, ignore_errors=True)
        return outcome

    def _attempt(
        self, entry: VideoEntry, url: str, staging: Path, outcome: DownloadOutcome
    ) -> DownloadOutcome:
        import yt_dlp

        s = self.settings
        params: dict[str, Any] = {
            "outtmpl": {"default": str(staging / f"{entry.video_id}.%(ext)s")},
            "paths": {"home": str(staging)},
            "quiet": True,
            "no_warnings": True,
            "noprogress": True,
            "logger": _QuietLogger(),
            "noplaylist": True,
            "continuedl": True,
            "retries": 0,  # our own loop retries, with backoff, and resumes the .part
            "socket_timeout": s.timeout,
            "cachedir": False,
            "progress_hooks": [self._count],
        }
        if s.rate_limit:
            params["ratelimit"] = s.rate_limit
        if s.sleep > 0:
            params["sleep_interval"] = s.sleep
            params["sleep_interval_requests"] = min(s.sleep, 0.75)
        if s.cookies is not None:
            params["cookiefile"] = str(s.cookies)
        try:
            with _youtube_dl(params) as ydl:
                merger = yt_dlp.postprocessor.FFmpegMergerPP(ydl)

                def selector(ctx: dict[str, Any]):
                    spec = choose_format(
                        ctx["formats"], s.cut.max_side, s.cut.audio, merger.available
                    )
                    if spec is None:
                        return iter(())
                    return ydl.build_format_selector(spec)(ctx)

                ydl.format_selector = selector
                info = ydl.extract_info(url, download=True)
        except yt_dlp.utils.DownloadError as err:
            message = relative_reason(_clean_message(str(err.msg or err)), s)
            status, category = classify(message)
            return replace(outcome, status=status, category=category, reason=message)
        except Exception as err:  # one video's surprise must not stop the others
            message = relative_reason(_clean_message(f"{type(err).__name__}: {err}"), s)
            status, category = classify(message)
            return replace(outcome, status=status, category=category, reason=message)
        files = [Path(d["filepath"]) for d in (info or {}).get("requested_downloads", []) or []]
        files = [f for f in files if f.is_file()]
        if not files:
            return replace(
                outcome, status="unavailable", category="other", reason="no video format"
            )
        return replace(
            outcome,
            status="downloaded",
            category="",
            reason="",
            file=files[0].name,
            format=_describe(info),
            bytes=files[0].stat().st_size,
        )

    def _place(
        self, entry: VideoEntry, staging: Path, outcome: DownloadOutcome, broken: list[str]
    ) -> DownloadOutcome:
        """Move a finished download into place, once it probes whole."""
        s = self.settings
        staged = staging / outcome.file
        try:
            probed = probe.probe(
                entry,
                staging,
                s.cut.tolerance,
                SourceCandidates(entry.video_id, (outcome.file,), 1, 1),
            )
        except SkipVideo as skip:
            staged.unlink()  # ours, and useless: a retry or the next run fetches it anew
            why = relative_reason(skip.reason, s)
            return replace(
                outcome,
                status="unavailable",
                category="other",
                reason=f"the downloaded file does not probe whole: {why}",
                file="",
            )
        folder = target_dir(s, entry)
        folder.mkdir(parents=True, exist_ok=True)
        ext = _extension(staged.suffix, probed.source.container)
        target = folder / f"{entry.video_id}{ext}"
        notes = []
        for rel in broken:
            old = s.out / rel
            os.replace(old, old.with_name(old.name + ".broken"))
            notes.append(f"moved the broken {rel} aside to {rel}.broken")
        if target.exists():  # a file the probe did not list (e.g. another id's name)
            os.replace(target, target.with_name(target.name + ".broken"))
        os.replace(staged, target)
        return replace(
            outcome,
            file=target.relative_to(s.out).as_posix(),
            reason="; ".join(notes),
        )

    def _count(self, status: dict[str, Any]) -> None:
        if self.cancel.is_set():
            from yt_dlp.utils import DownloadCancelled

            raise DownloadCancelled("interrupted")
        if status.get("status") == "finished":
            with self._lock:
                self.bytes += int(status.get("downloaded_bytes") or 0)


# PyAV's demuxer name -> the extension the source index knows it by.
_CONTAINER_EXTENSIONS = {"mov": ".mp4", "matroska": ".mkv", "mpeg": ".mpg", "mpegts": ".ts"}


def _extension(suffix: str, container: str) -> str:
    """The downloaded file's extension, or one the build's index accepts when yt-dlp could
    not name the format (it writes ``.unknown_video`` then)."""
    if suffix.lower() in sources.SOURCE_EXTENSIONS:
        return suffix
    first = container.split(",")[0]
    known = f".{first}" if f".{first}" in sources.SOURCE_EXTENSIONS else ".mkv"
    return _CONTAINER_EXTENSIONS.get(first, known)


def _describe(info: dict[str, Any]) -> str:
    parts = [str(info.get("format") or info.get("format_id") or "")]
    codec = info.get("vcodec")
    if codec and codec != "none":
        parts.append(codec)
    return ", ".join(p for p in parts if p)


def relative_reason(reason: str, settings: DownloadSettings) -> str:
    """A reason as the report may hold it: the output folder named ``<out>``, any other
    local path by its last part (`report.portable`, the build report's rule)."""
    return portable(reason, {"<out>": settings.out})


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()  # only when empty: what a failed download left is kept to resume
    except OSError:
        pass


# --- the command --------------------------------------------------------------------


def run_download(
    entries: list[VideoEntry], settings: DownloadSettings
) -> tuple[list[DownloadOutcome], bool]:
    """Fetch every entry's source into ``settings.out``: one outcome per finished entry, and
    whether the run was interrupted (Ctrl-C) before all finished."""
    settings.out.mkdir(parents=True, exist_ok=True)
    fetcher = Fetcher(settings, sources.index_sources(settings.out))
    outcomes: list[DownloadOutcome] = []
    tally = dict.fromkeys(download_report.STATUSES, 0)
    bar = tqdm(total=len(entries), unit="video", disable=not settings.progress, desc="download")
    start = time.monotonic()
    pool = ThreadPoolExecutor(max(1, settings.workers), thread_name_prefix="splice-download")
    interrupted = False
    try:
        pending = {pool.submit(fetcher.fetch, e) for e in entries}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
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
    except KeyboardInterrupt:
        interrupted = True
        fetcher.cancel.set()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
        # Once no worker runs: removed while another worker was creating its folder in it,
        # the staging root made that worker's mkdir fail (a race seen with 2 workers).
        _remove_empty(settings.out / STAGING)
    return sorted(outcomes, key=lambda o: o.video_id), interrupted


def yt_dlp_version() -> str:
    from yt_dlp.version import __version__

    return __version__


def check_settings(settings: DownloadSettings) -> None:
    """Every option checked before any work; each refusal names its option."""
    if settings.layout not in LAYOUTS:
        raise UserError(f"--layout must be one of {', '.join(LAYOUTS)}, got {settings.layout}")
    if settings.cut.max_side < 16:
        raise UserError(f"--max-side must be at least 16, got {settings.cut.max_side}")
    if settings.workers < 1:
        raise UserError(f"--workers must be at least 1, got {settings.workers}")
    for name, value in (
        ("--sleep", settings.sleep),
        ("--retries", settings.retries),
        ("--backoff", settings.backoff),
    ):
        if value < 0:
            raise UserError(f"{name} must not be negative, got {value}")
    if settings.timeout <= 0:
        raise UserError(f"--timeout must be positive, got {settings.timeout}")
    if settings.rate_limit is not None and settings.rate_limit <= 0:
        raise UserError(f"--rate-limit must be positive, got {settings.rate_limit}")
    try:
        video_url(settings.url_template, _EXAMPLE)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(
            f"--url-template: unknown or malformed placeholder {exc} (use "
            f"{', '.join('{' + p + '}' for p in _PLACEHOLDERS)})"
        ) from None
    if "{video_id}" not in settings.url_template:
        raise UserError("--url-template must contain {video_id}")
    if settings.cookies is not None:
        _check_cookies(settings.cookies)
    if settings.out.exists() and not settings.out.is_dir():
        raise UserError(f"--out {settings.out} exists and is not a folder")


_EXAMPLE = VideoEntry("x", "", "", 0, "", 0.0, "", ())


def _check_cookies(path: Path) -> None:
    """A Netscape cookie file that yt-dlp loads without a word: its loader prints a bad
    line, cookie value and all, straight to stderr, so every line is checked here first and
    a refusal names the line, never its content."""
    from yt_dlp.cookies import YoutubeDLCookieJar

    if not path.is_file():
        raise UserError(f"--cookies file not found: {path}")
    hint = "expected a Netscape-format cookie file, as a browser extension exports it"
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        raise UserError(f"--cookies {path}: cannot be read as text; {hint}") from None
    for number, line in enumerate(lines, start=1):
        line = line.removeprefix("#HttpOnly_")
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 7 or not re.fullmatch(r"(\d+(\.\d+)?)?", fields[4]):
            raise UserError(f"--cookies {path} line {number}: not a cookie entry; {hint}")
    try:
        YoutubeDLCookieJar(str(path)).load()
    except Exception:
        raise UserError(f"--cookies {path}: {hint}") from None


def _rate(text: str) -> int:
    """``500K``, ``4.2M`` or bytes per second, as yt-dlp's ``--limit-rate`` takes it."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)i?[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a rate: {text!r} (e.g. 500K, 4M)")
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    select.add_selection_arguments(parser)
    parser.add_argument(
        "--out", type=Path, default=Path("videos"), help="folder of the videos (the build's "
        "--videos; default %(default)s)"
    )  # fmt: skip
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="flat",
        help="flat: <id>.<ext>; coin: COIN's <recipe_type>/<id>.<ext> (default %(default)s)",
    )
    parser.add_argument(
        "--max-side",
        type=int,
        default=DEFAULT_MAX_SIDE,
        help="take the smallest format whose short side is at least this, else the best "
        "below it (the build's --max-side; default %(default)s)",
    )
    parser.add_argument("--audio", action="store_true", help="keep the sound (default: video only)")
    parser.add_argument(
        "--url-template",
        default=DEFAULT_URL_TEMPLATE,
        help="where a video is fetched from, with {video_id} and {recipe_type}: a mirror's "
        "direct URLs, e.g. https://lab.example/coin/{recipe_type}/{video_id}.mp4 "
        "(default: YouTube)",
    )
    parser.add_argument(
        "--cookies", type=Path, default=None, help="Netscape cookie file (read, never copied)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="parallel downloads (default %(default)s)"
    )
    parser.add_argument(
        "--sleep",
        type=float,
        default=5.0,
        help="seconds each worker waits before a download (default %(default)s)",
    )
    parser.add_argument(
        "--rate-limit", type=_rate, default=None, help="per worker, e.g. 2M (bytes/s)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        help="further attempts after a network error, 429 or 5xx (default %(default)s)",
    )
    parser.add_argument(
        "--backoff",
        type=float,
        default=10.0,
        help="seconds before the first retry, doubled for each next (default %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds without data before a download counts as stalled (default %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def settings_from_args(args: argparse.Namespace) -> DownloadSettings:
    return DownloadSettings(
        out=args.out,
        layout=args.layout,
        cut=CutSettings(max_side=args.max_side, audio=args.audio),
        url_template=args.url_template,
        cookies=args.cookies,
        rate_limit=args.rate_limit,
        sleep=args.sleep,
        retries=args.retries,
        backoff=args.backoff,
        timeout=args.timeout,
        workers=args.workers,
        progress=not args.no_progress,
    )


def run(args: argparse.Namespace) -> int:
    try:
        import yt_dlp  # noqa: F401
    except ImportError:
        raise UserError(
            "yt-dlp is not installed: pip install 'splice-benchmark[download]' "
            "(or pip install -e '.[download]' in a clone)"
        ) from None
    settings = settings_from_args(args)
    check_settings(settings)
    _, selection = select.select_annotations(
        args.annotations,
        subset_size=args.subset_size,
        seed=args.seed,
        curation=args.curation,
        limit=args.limit,
    )
    with ownership.lock_folder(settings.out, "--out"):
        outcomes, interrupted = run_download(selection.selected, settings)
        version = yt_dlp_version()
        line = download_report.write_report(settings.out, outcomes, settings.public(), version)
    print(line)
    print(f"report: {settings.out / download_report.REPORT_JSON} (and .csv)")
    if interrupted:
        print(f"interrupted: {len(selection.selected) - len(outcomes)} videos not tried")
        return 130
    attempted = [o for o in outcomes if o.status != "present"]
    if attempted and all(o.status == "failed" for o in attempted):
        print("every download attempt failed on the network: check the connection or mirror")
        return 1
    return 0
