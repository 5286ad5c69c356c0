"""Keep credentials out of everything the runner prints, logs or stores.

Servers and proxies echo requests back in error bodies (some quote the ``Authorization``
header whole), and prediction files are shared, so every text that leaves the runner goes
through a ``Redactor`` that knows the secrets it sent: the API key and the value of every
header that carries a credential. Each is replaced by ``***``, in the forms a server may
echo it (as sent, URL-quoted, JSON-escaped).
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


def public_url(url: str) -> str:
    """``scheme://host[:port]/path`` of an endpoint: no user, password or query."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def url_secrets(url: str) -> list[str]:
    """Credentials written into a URL: its password, user and query values."""
    parts = urllib.parse.urlsplit(url)
    found = [parts.password or "", parts.username or ""]
    found += [v for _, v in urllib.parse.parse_qsl(parts.query)]
    return [s for s in found if s]
