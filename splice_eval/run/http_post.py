"""One HTTP(S) POST that ends by a wall-clock deadline and reads at most a set number of bytes.

Why not the openai client or httpx: their timeouts bound each socket operation, not the
request, so a server that sends one byte every half second keeps an attempt alive for as
long as it drips, and they read a body whole however large it is. Here a watchdog thread
shuts the socket down when the deadline passes (or when the caller aborts the attempt),
which ends whatever read or write is blocked, headers and body alike; the body is read in
chunks and refused past ``max_bytes``. The standard library's ``http.client`` is enough
for the one request the runner sends and gives us the socket to shut down.

Not covered: a DNS lookup that hangs (``getaddrinfo`` cannot be interrupted) and proxies
(``HTTPS_PROXY`` is not read; point ``--endpoint`` at the server or at the proxy itself).
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass

# What a failed attempt was, for retry and circuit-breaker decisions.
CONNECT = "connect"  # refused, unreachable, DNS, TLS: no conversation with a server
TIMEOUT = "timeout"  # the deadline passed (stall, drip, slow answer)
DROPPED = "dropped"  # the connection broke after it was made (reset, cut-off body)
OVERSIZE = "oversize"  # the body is larger than the cap
ABORTED = "aborted"  # the caller stopped the attempt (the run is stopping)

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes


class HttpFailure(Exception):
    """An attempt that produced no complete HTTP reply; ``kind`` is one of the constants."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Attempt:
    """Lets another thread end an attempt in flight (``abort``); one per request."""

    def __init__(self) -> None:
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.finished = False
        self.expired = False
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True
        self._wake.set()

    def _watch(self, timeout: float) -> None:
        self._wake.wait(timeout)
        with self._lock:
            if self.finished:
                return
            self.expired = True
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _set_sock(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            if self.expired and sock is not None:  # the deadline passed while connecting
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _finish(self) -> None:
        with self._lock:
            self.finished = True
        self._wake.set()


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    max_bytes: int,
    attempt: Attempt | None = None,
) -> HttpReply:
    """POST ``body`` to ``url``; the reply, or ``HttpFailure`` within ``timeout`` seconds."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {parts.scheme}://{parts.hostname}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    attempt = attempt or Attempt()
    deadline = time.monotonic() + timeout
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=timeout, context=_tls_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    watchdog = threading.Thread(target=attempt._watch, args=(timeout,), daemon=True)
    watchdog.start()
    try:
        _connect(conn, parts.hostname, attempt, timeout)
        attempt._set_sock(conn.sock)
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            data = _read_body(response, max_bytes, deadline, attempt, timeout)
            status = response.status
            reply_headers = {k.lower(): v for k, v in response.getheaders()}
        except HttpFailure:
            raise
        except TimeoutError:  # the socket's own timeout (= the deadline) beat the watchdog
            raise _failure(attempt, TIMEOUT, "", timeout) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            message = f"connection dropped: {_describe(exc)}"
            raise _failure(attempt, DROPPED, message, timeout) from None
        if attempt.expired or attempt.aborted:  # finished, but only just: same as too late
            raise _failure(attempt, TIMEOUT, "", timeout)
        return HttpReply(status, reply_headers, data)
    finally:
        attempt._finish()
        conn.close()


def _connect(
    conn: http.client.HTTPConnection, hostname: str, attempt: Attempt, timeout: float
) -> None:
    """Open the connection; each way it fails becomes its ``HttpFailure`` kind."""
    try:
        conn.connect()
    except ssl.SSLError as exc:
        raise _failure(attempt, CONNECT, f"TLS handshake failed: {exc}", timeout) from None
    except socket.gaierror as exc:
        raise _failure(attempt, CONNECT, f"cannot resolve {hostname}: {exc}", timeout) from None
    except TimeoutError:
        raise _failure(attempt, TIMEOUT, "", timeout) from None
    except OSError as exc:
        raise _failure(attempt, CONNECT, f"cannot connect: {exc}", timeout) from None


def _read_body(
    response: http.client.HTTPResponse,
    max_bytes: int,
    deadline: float,
    attempt: Attempt,
    timeout: float,
) -> bytes:
    """The whole body, refused past ``max_bytes`` or the deadline, chunk by chunk (a server
    dripping bytes never holds an attempt past its deadline)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = response.read1(_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            raise HttpFailure(
                OVERSIZE, f"answer body larger than {max_bytes} bytes (--max-answer-bytes)"
            )
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise _failure(attempt, TIMEOUT, "", timeout)
    if response.length:  # EOF before Content-Length: read1 does not raise
        raise http.client.IncompleteRead(b"", response.length)
    return b"".join(chunks)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The system's trust store, loaded once (not per attempt)."""
    return ssl.create_default_context()


def _failure(attempt: Attempt, kind: str, message: str, timeout: float) -> HttpFailure:
    """The failure to report: an abort or a passed deadline explains any socket error."""
    if attempt.aborted:
        return HttpFailure(ABORTED, "stopped: the run is ending")
    if attempt.expired or kind == TIMEOUT:
        return HttpFailure(TIMEOUT, f"timeout: no complete answer within {timeout:g} s")
    return HttpFailure(kind, message)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
