"""The options of ``splice download`` as one frozen record, checked whole before any work
(each refusal names its option), so a mistake never surfaces halfway through a long run."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_build.records import CutSettings, VideoEntry
from splice_build.remote.breaker import DEFAULT_MAX_FAILURES
from splice_build.remote.redact import public_url

DEFAULT_URL_TEMPLATE = "https://www.youtube.com/watch?v={video_id}"
LAYOUTS = ("flat", "coin")
# The cutter's default cap on the short side (splice_dataset.CLIP_SHORT_SIDE, not imported:
# the schema module pulls in `datasets`, which a download never needs).
DEFAULT_SHORT_SIDE = 448
_PLACEHOLDERS = ("video_id", "recipe_type")


@dataclass(frozen=True)
class DownloadSettings:
    out: Path
    layout: str = "flat"
    # The cut the sources are for: its cap on the short side picks the format, ``audio``
    # whether sound is fetched, its coverage tolerance how whole a download must probe.
    cut: CutSettings = field(default_factory=lambda: CutSettings(short_side=DEFAULT_SHORT_SIDE))
    url_template: str = DEFAULT_URL_TEMPLATE
    cookies: Path | None = None
    rate_limit: int | None = None  # bytes per second, per worker
    sleep: float = 5.0  # seconds before each download, per worker
    retries: int = 3  # further attempts after a transient error
    backoff: float = 10.0  # seconds before the first retry; doubled for each further one
    timeout: float = 30.0  # seconds without data before a connection counts as stalled
    workers: int = 2
    progress: bool = True
    # Connection failures in a row (no server reached) after which the run stops: the
    # model runner's breaker, `splice_build.remote.breaker`.
    max_connect_failures: int = DEFAULT_MAX_FAILURES

    def public(self) -> dict[str, Any]:
        """The settings as the report shows them: whether cookies were used, never which."""
        skip = ("out", "cut", "cookies", "progress")
        data = {k: v for k, v in asdict(self).items() if k not in skip}
        cut = self.cut
        data.update(short_side=cut.short_side, audio=cut.audio, tolerance=cut.tolerance)
        data["cookies"] = self.cookies is not None
        data["url_template"] = public_url(self.url_template, keep_placeholders=True)
        return data


def video_url(template: str, entry: VideoEntry) -> str:
    return template.format(video_id=entry.video_id, recipe_type=entry.recipe_type)


def public_video_url(template: str, entry: VideoEntry) -> str:
    """The video's URL as the report shows it: the id kept, the template's secrets not
    (`redact.public_url`)."""
    return video_url(public_url(template, keep_placeholders=True), entry)


def check_settings(settings: DownloadSettings, source: str = "coin") -> None:
    """Every option checked before any work; each refusal names its option. COIN's
    ``recipe_type`` (``--layout coin``, ``{recipe_type}``) exists for ``source`` coin only."""
    if settings.layout not in LAYOUTS:
        raise UserError(f"--layout must be one of {', '.join(LAYOUTS)}, got {settings.layout}")
    if source != "coin" and settings.layout == "coin":
        raise UserError(f"--layout coin: COIN's <recipe_type>/ folders; --source {source} is flat")
    if source != "coin" and "{recipe_type}" in settings.url_template:
        raise UserError(f"--url-template: {{recipe_type}} is COIN's; --source {source} has none")
    _check_numbers(settings)
    _check_url_template(settings.url_template)
    if settings.cookies is not None:
        _check_cookies(settings.cookies)
    if settings.out.exists() and not settings.out.is_dir():
        raise UserError(f"--out {settings.out} exists and is not a folder")


def _check_numbers(settings: DownloadSettings) -> None:
    if settings.cut.short_side < 16:
        raise UserError(f"--short-side must be at least 16, got {settings.cut.short_side}")
    for name, least in (
        ("--workers", settings.workers),
        ("--max-connect-failures", settings.max_connect_failures),
    ):
        if least < 1:
            raise UserError(f"{name} must be at least 1, got {least}")
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


_EXAMPLE = VideoEntry("x", "", "", 0, "", 0.0, "", ())


def _check_url_template(template: str) -> None:
    try:
        video_url(template, _EXAMPLE)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(
            f"--url-template: unknown or malformed placeholder {exc} (use "
            f"{', '.join('{' + p + '}' for p in _PLACEHOLDERS)})"
        ) from None
    if "{video_id}" not in template:
        raise UserError("--url-template must contain {video_id}")


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
