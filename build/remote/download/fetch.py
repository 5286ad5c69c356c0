"""One video, start to finish: already present and probing whole, or fetched with yt-dlp
into its staging folder (retried with backoff, resuming the ``.part``), probed, and moved
into place. Whatever happens ends as one `DownloadOutcome`, never as an exception, so one
video's trouble never stops the others or the report."""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from splice_build.records import (
    DownloadOutcome,
    SkipVideo,
    SourceCandidates,
    SourceIndex,
    VideoEntry,
)
from splice_build.remote import download_report
from splice_build.remote.breaker import Breaker, EndpointDown, unreachable
from splice_build.remote.download.classify import classify
from splice_build.remote.download.formats import choose_format
from splice_build.remote.download.settings import (
    DownloadSettings,
    public_video_url,
    video_url,
)
from splice_build.remote.redact import Redactor, url_secrets
from splice_build.running.report import portable
from splice_build.stages import probe, sources

STAGING = ".splice-download"


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


def target_dir(settings: DownloadSettings, entry: VideoEntry) -> Path:
    if settings.layout == "coin":
        return settings.out / str(entry.recipe_type)
    return settings.out


class _Cancel:
    """An attempt as the breaker sees it: aborting one ends every download under way (the
    breaker opens for the whole run)."""

    def __init__(self, cancel: threading.Event):
        self._cancel = cancel

    def abort(self) -> None:
        self._cancel.set()


# Failure categories where no server answered at all (the breaker's connection failures),
# and those where one may have and then went silent (its silence clock decides).
_UNREACHED = frozenset({"network"})
_SILENT = frozenset({"timeout", "incomplete"})


class Fetcher:
    """Fetches one video at a time (thread-safe: every attempt has its own ``YoutubeDL``).

    One circuit breaker (`splice_build.remote.breaker`, the model runner's) watches every
    attempt: after ``max_connect_failures`` connection failures in a row the run stops, and
    the videos not tried yet are reported as such at once, instead of each spending all its
    retries against a network that is not there. A first failure to connect before anything
    was heard is checked at once (`breaker.unreachable`): a host that does not resolve or
    refuses connections stops the run then, not minutes of backoff later."""

    def __init__(self, settings: DownloadSettings, index: SourceIndex):
        self.settings = settings
        self.index = index
        self.bytes = 0
        self.cancel = threading.Event()  # set on Ctrl-C: downloads under way stop at once
        self.breaker = Breaker(settings.max_connect_failures)
        self._lock = threading.Lock()
        self._heard = False  # any reply in this run: the network is there
        self._checked = False  # the reachability check is made once

    def fetch(self, entry: VideoEntry) -> DownloadOutcome:
        """One video's outcome, whatever happens: an error on this machine fails that video
        (category ``local``), never the run, so the others go on and the report is written."""
        try:
            return self._fetch(entry)
        except Exception as err:
            reason = portable_reason(f"{type(err).__name__}: {err}", self.settings)
            return DownloadOutcome(
                entry.video_id,
                entry.recipe_type,
                "failed",
                category="local",
                reason=reason,
                url=public_video_url(self.settings.url_template, entry),
            )

    def _fetch(self, entry: VideoEntry) -> DownloadOutcome:
        s = self.settings
        url = video_url(s.url_template, entry)
        base = DownloadOutcome(
            entry.video_id, entry.recipe_type, "", url=public_video_url(s.url_template, entry)
        )
        candidates = sources.candidates_for(self.index, entry)
        broken: list[str] = []
        for rel in candidates.paths:
            try:
                probe.probe(entry, s.out, s.cut.tolerance, replace(candidates, paths=(rel,)))
            except SkipVideo:
                broken.append(rel)
                continue
            return replace(base, status="present", file=rel, bytes=(s.out / rel).stat().st_size)
        outcome = replace(base, status="failed", category="network")
        if self.breaker.stopped.is_set():
            return self._not_tried(base)
        staging = s.out / STAGING / entry.video_id
        staging.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, s.retries + 2):
            if attempt > 1 and self.cancel.wait(s.backoff * 2 ** (attempt - 2)):
                break
            try:
                handle = self.breaker.start(_Cancel(self.cancel))
            except EndpointDown:
                return self._not_tried(base) if attempt == 1 else outcome
            try:
                outcome = self._attempt(entry, url, staging, replace(outcome, attempts=attempt))
            finally:
                self.breaker.end(handle)
            self._tell_breaker(url, outcome)
            if outcome.status != "failed":
                break
        if outcome.status == "downloaded":
            outcome = self._place(entry, staging, outcome, broken)
        if outcome.status != "failed" and not self.cancel.is_set():  # keep .part to resume
            shutil.rmtree(staging, ignore_errors=True)
        return outcome

    def _tell_breaker(self, url: str, outcome: DownloadOutcome) -> None:
        """Count an attempt's outcome: any answer (a file, "unavailable", a throttling or
        server error) closes the count; an open breaker stops the downloads under way."""
        if outcome.status == "failed" and outcome.category in _UNREACHED | _SILENT:
            if outcome.category in _UNREACHED:
                self._check_reachable(url)
            self.breaker.failed(outcome.category in _UNREACHED, outcome.reason)
        elif outcome.category != "local":
            self._heard = True
            self.breaker.heard()
        if self.breaker.stopped.is_set():
            self.cancel.set()

    def _check_reachable(self, url: str) -> None:
        """Once, on the first failure to connect while nothing was heard yet: when the host
        cannot be reached at all the network is clearly down, and the run stops now."""
        with self._lock:
            if self._heard or self._checked:
                return
            self._checked = True
        why = unreachable(url, min(self.settings.timeout, 5.0))
        if why:
            self.breaker.stop(portable_reason(why, self.settings))

    def _not_tried(self, base: DownloadOutcome) -> DownloadOutcome:
        """A video left for a rerun: the downloads stopped before it (the breaker's reason)."""
        why = short_reason(portable_reason(self.breaker.reason or "stopped", self.settings))
        return replace(base, status=download_report.NOT_TRIED, reason=f"not tried: {why}")

    def _attempt(
        self, entry: VideoEntry, url: str, staging: Path, outcome: DownloadOutcome
    ) -> DownloadOutcome:
        import yt_dlp

        s = self.settings
        try:
            with _youtube_dl(self._params(entry, staging)) as ydl:
                merger = yt_dlp.postprocessor.FFmpegMergerPP(ydl)

                def selector(ctx: dict[str, Any]):
                    spec = choose_format(
                        ctx["formats"], s.cut.short_side, s.cut.audio, merger.available
                    )
                    if spec is None:
                        return iter(())
                    return ydl.build_format_selector(spec)(ctx)

                ydl.format_selector = selector
                info = ydl.extract_info(url, download=True)
        except yt_dlp.utils.DownloadError as err:
            message = portable_reason(_clean_message(str(err.msg or err)), s)
            status, category = classify(message)
            return replace(outcome, status=status, category=category, reason=message)
        except Exception as err:  # one video's surprise must not stop the others
            message = portable_reason(_clean_message(f"{type(err).__name__}: {err}"), s)
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

    def _params(self, entry: VideoEntry, staging: Path) -> dict[str, Any]:
        """yt-dlp's options for one attempt: silent, no retries of its own (ours back off and
        resume), working in the video's staging folder."""
        s = self.settings
        params: dict[str, Any] = {
            # yt-dlp joins the template under ``home``: a file name, never a path, or a
            # relative --out came out doubled (<out>/.splice-download/<id>/<out>/...).
            "outtmpl": {"default": f"{entry.video_id}.%(ext)s"},
            "paths": {"home": os.path.abspath(staging)},
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
        return params

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
            why = portable_reason(skip.reason, s)
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
        if os.path.lexists(target):  # one the probe did not try: a dangling link, say
            rel = target.relative_to(s.out).as_posix()
            why = sources.unreadable_reason(target) or "not tried as this video's source"
            os.replace(target, target.with_name(target.name + ".broken"))  # the user's: kept
            notes.append(f"moved {rel} aside to {rel}.broken ({why})")
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


def portable_reason(reason: str, settings: DownloadSettings) -> str:
    """A reason as the report may hold it: the output folder named ``<out>``, any other
    local path by its last part (`report.portable`, the build report's rule), and the URL
    template's secrets masked by the one `redact.Redactor` (yt-dlp's errors quote the URL whole)."""
    secrets = url_secrets(settings.url_template, keep_placeholders=True)
    hidden = Redactor(secrets).text(reason)
    return portable(hidden, {"<out>": settings.out})


def short_reason(reason: str, limit: int = 120) -> str:
    """A reason fit for a summary line: yt-dlp's ``(caused by ...)`` tail (the same error
    again) dropped, and cut at ``limit`` characters."""
    text = re.split(r"\s*\(caused by ", reason, maxsplit=1)[0]
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _clean_message(message: str) -> str:
    text = re.sub(r"\s+", " ", message.replace("\r", " ")).strip()
    return re.sub(r"^ERROR:\s*", "", text)
