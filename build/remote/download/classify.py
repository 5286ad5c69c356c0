"""What a yt-dlp error means for the run: "unavailable" (the source says so; never retried)
or "failed" (transient: retried with backoff), with the category the report counts. yt-dlp
has no error codes for most of these, so its messages (YouTube's wording) are matched."""

from __future__ import annotations

import re

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
