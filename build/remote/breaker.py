"""Stop a run when the far end is gone (a model endpoint, the network of a download),
instead of retrying it item after item.

Per-item retries suit a flaky endpoint; against a dead one they cost every item its full
backoff (about 30 s a row for a model run at the defaults, 20 hours for a full build; about
47 s a video for ``splice download`` with no network). The breaker is shared by all
workers: it opens after ``max_failures`` consecutive connection failures (refused,
DNS, TLS: no server talked to us) or when no complete HTTP reply of any kind arrived for
``max_silence`` seconds while requests kept failing (stalls, drips, timeouts). Any reply,
even an error status, closes the count. Once open, every attempt in flight is aborted and
no new one starts, so the run stops within moments.

It lives in ``splice_build`` because both ``splice download`` and the model runner of
``splice_eval`` (which imports ``splice_build``, never the reverse) use it.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

DEFAULT_MAX_FAILURES = 8
DEFAULT_MAX_SILENCE = 900.0


class Abortable(Protocol):
    """An attempt in flight that another thread can end (an HTTP request, a download)."""

    def abort(self) -> None: ...


AttemptT = TypeVar("AttemptT", bound=Abortable)


class EndpointDown(RuntimeError):
    """The endpoint stopped answering: the run stops, a rerun resumes."""


class Breaker:
    def __init__(
        self,
        max_failures: int = DEFAULT_MAX_FAILURES,
        max_silence: float = DEFAULT_MAX_SILENCE,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_failures = max_failures
        self.max_silence = max_silence
        self.clock = clock
        self.stopped = threading.Event()  # sleeps wait on it: a stop wakes them
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._failures = 0
        self._last_error = ""
        self._last_heard: float | None = None  # set by the first attempt, not at creation
        self._in_flight: set[Abortable] = set()

    def check(self) -> None:
        """Raise EndpointDown once the breaker is open."""
        if self.stopped.is_set():
            raise EndpointDown(self.reason or "stopped")

    def start(self, attempt: AttemptT) -> AttemptT:
        """Register an attempt the breaker aborts if it opens; raises when already open."""
        with self._lock:
            self.check()
            if self._last_heard is None:
                self._last_heard = self.clock()
            self._in_flight.add(attempt)
        return attempt

    def end(self, attempt: Abortable) -> None:
        with self._lock:
            self._in_flight.discard(attempt)

    def heard(self) -> None:
        """A complete HTTP reply arrived (any status)."""
        with self._lock:
            self._failures = 0
            self._last_heard = self.clock()

    def failed(self, connection: bool, error: str) -> None:
        """An attempt got no reply; ``connection``: no server was reached at all."""
        with self._lock:
            if self.stopped.is_set():
                return
            self._last_error = error
            if connection:
                self._failures += 1
                if self._failures >= self.max_failures:
                    self._open(f"{self._failures} connection failures in a row (last: {error})")
                    return
            silent = self.clock() - (self._last_heard or self.clock())
            if silent >= self.max_silence:
                self._open(f"no reply from the endpoint for {silent:.0f} s (last: {error})")

    def stop(self, reason: str) -> None:
        """Open the breaker from outside (an interrupt): abort what is in flight."""
        with self._lock:
            if not self.stopped.is_set():
                self._open(reason)

    def _open(self, reason: str) -> None:
        self.reason = reason
        self.stopped.set()
        for attempt in self._in_flight:
            attempt.abort()


_DEFAULT_PORTS = {"http": 80, "https": 443}


def unreachable(url: str, timeout: float = 5.0) -> str | None:
    """Why ``url``'s host cannot be reached at all (its name does not resolve, or nothing
    accepts a connection on its port), in a few words; None when a connection opens, or when
    a proxy stands between (the direct check would say nothing about the proxied route).

    A run asks this after its first failure to connect, before anything was heard: a "yes"
    means the network (or the mirror) is clearly down, and the breaker opens at once instead
    of after ``max_failures`` attempts spread over the retries' backoff (minutes)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host or parts.scheme not in _DEFAULT_PORTS:
        return None
    proxies = urllib.request.getproxies()
    if parts.scheme in proxies or "all" in proxies:
        return None
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return f"cannot resolve {host} (no network or DNS)"
    last = ""
    for family, kind, proto, _, address in addresses:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(address)
            return None
        except OSError as err:
            last = err.strerror or str(err) or type(err).__name__
    return f"cannot connect to {host}:{port} ({last.lower() or 'no address'})"
