"""Keep credentials out of everything printed, logged or stored: the one redactor of the
model runner (``splice run``) and of ``splice download``.

Servers and proxies echo requests back in error bodies (some quote the ``Authorization``
header whole), yt-dlp's errors quote the URL whole, and prediction files and download
reports are shared, so every text that leaves them goes through a ``Redactor`` that knows
the secrets sent: an API key, the value of every header that carries a credential, and
what a URL holds (`url_secrets`). Each is replaced by ``***``, in the forms a server may
echo it (as sent, URL-quoted, JSON-escaped). A URL is shown as `public_url` gives it.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from collections.abc import Iterable, Mapping

MASK = "***"
# Headers whose value is a credential, whatever the scheme.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie", "x-auth-token"}
)
_MIN_SECRET = 4  # shorter "secrets" (e.g. the placeholder key "EMPTY") would mangle text
_PLACEHOLDERS = frozenset({"EMPTY", "none", "None", "null"})


class Redactor:
    """Replaces known secrets by ``***`` in text and in JSON-like values."""

    def __init__(self, secrets: Iterable[str] = ()):
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if not secret or len(secret) < _MIN_SECRET or secret in _PLACEHOLDERS:
            return
        forms = {secret, urllib.parse.quote(secret, safe=""), json.dumps(secret)[1:-1]}
        # "Bearer sk-..." is redacted as a whole and its token on its own
        scheme, _, token = secret.partition(" ")
        if token and len(token) >= _MIN_SECRET and scheme.isalpha():
            forms.add(token)
        self._secrets.update(f for f in forms if len(f) >= _MIN_SECRET)
        longest_first = sorted(self._secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, longest_first)))

    def add_headers(self, headers: Mapping[str, str]) -> None:
        for name, value in headers.items():
            if name.lower() in CREDENTIAL_HEADERS:
                self.add(value)

    def text(self, value: str) -> str:
        if self._pattern is None or not value:
            return value
        return self._pattern.sub(MASK, value)

    def value(self, value: object) -> object:
        """Redact every string inside a JSON-like value (dicts, lists, strings)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """Rewrites log records so a secret in a message or its arguments never reaches a handler."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:  # a traceback's text can quote a secret too
            message += "\n" + logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        record.exc_text = None
        record.msg = self.redactor.text(message)
        record.args = None
        return True


def public_url(url: str, keep_placeholders: bool = False) -> str:
    """``scheme://host[:port]/path`` of a URL: no user info, query or fragment. Of a URL
    template (``keep_placeholders``: ``splice download --url-template``) the query
    parameters whose value holds a placeholder stay (YouTube's ``v={video_id}``): they name
    the video, where anything else (a mirror's token) may be a secret."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    kept = [p for p in parts.query.split("&") if "{" in p.partition("=")[2]]
    query = "&".join(kept) if keep_placeholders else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_secrets(url: str, keep_placeholders: bool = False) -> list[str]:
    """What `public_url` leaves out of a URL that may be secret: its user info (whole, and
    its name and password) and its query values, as written and decoded (a template's
    placeholders kept, with ``keep_placeholders``), for a `Redactor` to mask wherever a
    message repeats the URL."""
    parts = urllib.parse.urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    found = [userinfo, parts.password or "", parts.username or ""]
    found += [p.partition("=")[2] for p in parts.query.split("&")]
    found += [v for _, v in urllib.parse.parse_qsl(parts.query)]
    return [s for s in dict.fromkeys(found) if s and not (keep_placeholders and "{" in s)]
