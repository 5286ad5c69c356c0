"""A real OpenAI-compatible HTTP server on localhost that answers with scripted replies.

The runner is tested against a socket, not a mocked client, so retries, timeouts, headers
and JSON bodies go through the same HTTP code as against vLLM or a commercial API. Each
request is matched to a "conversation key" (a hash of its messages), so a script can say
"the first attempt for this row gets a 429, the second succeeds" even though the runner
sends rows concurrently and in any order.

The server is bounded: it answers at most ``max_requests`` requests (then 503s), a slow
reply waits at most ``max_delay`` seconds and wakes up at once on shutdown (so do stalls
and drips), and a watchdog shuts the server down after ``lifetime`` seconds even if a test
forgets to. Hostile replies (``Reply.body``, ``drip``, ``stall``, ``echo_headers``) script
the servers the runner must survive.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion (status 200) or an error status."""

    status: int = 200
    content: str | None = None  # the assistant's text for a 200
    delay: float = 0.0  # seconds to wait before answering (capped by the server's max_delay)
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"Retry-After": "0"}
    prompt_tokens: int = 11
    completion_tokens: int = 7
    # Hostile servers: ``body`` is sent as is instead of a completion (a cut-off or
    # non-JSON body, a wrong shape); ``drip`` sends the body one byte per that many
    # seconds; ``stall`` sends the headers and then nothing until the server stops;
    # ``echo_headers`` puts the request's headers into an error body, as some proxies do.
    body: bytes | None = None
    drip: float = 0.0
    stall: bool = False
    echo_headers: bool = False


@dataclass(frozen=True)
class Request:
    """What the server received, for tests to inspect."""

    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]
    key: str  # conversation key: same for every retry of the same messages
    attempt: int  # 0 for the first request with this key


# A script sees the parsed request and returns the reply to send.
Script = Callable[[Request], Reply]


def conversation_key(body: dict[str, Any]) -> str:
    """Identity of a request's conversation: retries of one row share it."""
    messages = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(messages.encode("utf-8")).hexdigest()[:16]


def prompt_text(request: Request) -> str:
    """All text parts of the request's messages, joined (for scripts that read the prompt)."""
    parts: list[str] = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(parts)


def media_parts(request: Request) -> list[dict[str, Any]]:
    """The non-text content parts (images or videos) of the request, in order."""
    parts: list[dict[str, Any]] = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            parts.extend(p for p in content if p.get("type") != "text")
    return parts


def count_clips(request: Request) -> int:
    """Number of distinct "Video k" labels in the prompt text."""
    return len(set(re.findall(r"Video (\d+)", prompt_text(request))))


class FakeOpenAIServer:
    """Run with ``with FakeOpenAIServer(script) as server: ... server.url ...``."""

    def __init__(
        self,
        script: Script,
        *,
        max_requests: int = 500,
        max_delay: float = 10.0,
        lifetime: float = 300.0,
    ):
        self.script = script
        self.max_requests = max_requests
        self.max_delay = max_delay
        self.lifetime = lifetime
        self.requests: list[Request] = []
        self._attempts: dict[str, int] = defaultdict(int)
        self.in_flight = 0
        self.max_in_flight = 0  # most requests the server was handling at once
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Timer | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self._watchdog = threading.Timer(self.lifetime, self.stop)
        self._watchdog.daemon = True
        self._watchdog.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes slow replies
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL as an OpenAI client expects it (ends in /v1)."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- request handling --------------------------------------------------------------

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Request | None:
        key = conversation_key(body)
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return None
            request = Request(path, headers, body, key, self._attempts[key])
            self._attempts[key] += 1
            self.requests.append(request)
        return request

    def attempts(self, key: str) -> int:
        with self._lock:
            return self._attempts[key]


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to ``server`` (http.server makes one handler per request and
    owns its ``self.server``, so the fake travels as a class attribute)."""
    return type("Handler", (_Handler,), {"fake": server})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOpenAIServer  # set by _make_handler

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # keep pytest output clean

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path != CHAT_PATH:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "body is not JSON"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = self.fake._record(self.path, headers, body)
        if request is None:
            self._send_json(503, {"error": {"message": "fake server request budget spent"}})
            return
        with self.fake._lock:
            self.fake.in_flight += 1
            self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
        try:
            self._answer(request, body)
        finally:
            with self.fake._lock:
                self.fake.in_flight -= 1

    def _answer(self, request: Request, body: dict[str, Any]) -> None:
        reply = self.fake.script(request)
        if reply.delay > 0 and self.fake._stopping.wait(min(reply.delay, self.fake.max_delay)):
            return  # shutting down: drop the connection
        if reply.body is not None or reply.drip or reply.stall:
            self._send_raw(reply)
            return
        if reply.status != 200:
            message = f"scripted {reply.status}"
            if reply.echo_headers:
                message += f" for request headers {dict(self.headers.items())}"
            payload = {"error": {"message": message, "type": "scripted"}}
            self._send_json(reply.status, payload, reply.headers)
            return
        usage = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
        completion = {
            "id": f"chatcmpl-{request.key}-{request.attempt}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
        self._send_json(200, completion, reply.headers)

    def _send_raw(self, reply: Reply) -> None:
        data = (
            reply.body
            if reply.body is not None
            else json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": reply.content}}]}
            ).encode("utf-8")
        )
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
            if reply.stall:
                self.fake._stopping.wait()
                return
            if not reply.drip:
                self.wfile.write(data)
                return
            for k in range(len(data)):
                self.wfile.write(data[k : k + 1])
                self.wfile.flush()
                if self.fake._stopping.wait(reply.drip):
                    return
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to tell it
