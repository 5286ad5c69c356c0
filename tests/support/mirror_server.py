"""A video mirror on 127.0.0.1 that serves real files and misbehaves on request.

``splice download --url-template`` is tested against a socket, so yt-dlp's generic
extractor and HTTP downloader run exactly as against a lab's mirror. Each path has a
behaviour: ``ok`` (the file), ``404``, ``403``, ``cut`` (half the file, then the connection
closes; Range ignored, as by a server that cannot resume), ``flaky`` (a request
without Range is cut, one with Range is served: only a resumed download completes),
``slow`` (half the file, then nothing), ``cookie`` (403 unless the request carries the
expected cookie) and ``hangup`` (the connection is closed without a reply: a server that is
there, but answers nothing).

The server is bounded: a slow reply stalls at most ``max_stall`` seconds and wakes at once
on shutdown, and a watchdog stops the server after ``lifetime`` seconds even if a test
forgets to.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CONTENT_TYPES = {".mp4": "video/mp4", ".webm": "video/webm", ".mpg": "video/mpeg"}


@dataclass(frozen=True)
class Item:
    file: Path | None = None
    behaviour: str = "ok"


@dataclass(frozen=True)
class Hit:
    method: str
    path: str
    range: str | None
    cookie: str | None


class Mirror:
    def __init__(
        self,
        items: dict[str, Item],
        *,
        cookie: str | None = None,
        max_stall: float = 10.0,
        lifetime: float = 300.0,
    ):
        self.items = items
        self.cookie = cookie
        self.max_stall = max_stall
        self.hits: list[Hit] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                mirror._serve(self, body=False)

            def do_GET(self) -> None:
                mirror._serve(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._threads = [
            threading.Thread(target=self.server.serve_forever, daemon=True),
            threading.Thread(target=self._watchdog, args=(lifetime,), daemon=True),
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def requests_for(self, name: str) -> list[Hit]:
        return [h for h in self.hits if h.path.strip("/").split("/")[-1] == name]

    def __enter__(self) -> Mirror:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self.server.shutdown()
            self.server.server_close()

    def _watchdog(self, lifetime: float) -> None:
        if not self._stop.wait(lifetime):
            self.stop()

    def _serve(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        name = handler.path.strip("/").split("/")[-1]
        cookie = handler.headers.get("Cookie")
        requested_range = handler.headers.get("Range")
        with self._lock:
            self.hits.append(Hit(handler.command, handler.path, requested_range, cookie))
        item = self.items.get(name)
        if item is not None and item.behaviour == "hangup":
            handler.close_connection = True
            return
        if item is None or item.behaviour == "404":
            handler.send_error(404)
            return
        if item.behaviour == "403":
            handler.send_error(403)
            return
        if item.behaviour == "cookie" and (not cookie or self.cookie not in cookie):
            handler.send_error(403)
            return
        data = item.file.read_bytes()
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", requested_range or "")
        resumable = item.behaviour == "flaky" and match is not None
        if resumable:
            start = int(match.group(1))
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            handler.send_response(200)
        handler.send_header("Content-Type", CONTENT_TYPES.get(item.file.suffix, "video/mp4"))
        handler.send_header("Content-Length", str(len(data) - start))
        handler.send_header("Accept-Ranges", "bytes" if item.behaviour == "flaky" else "none")
        handler.end_headers()
        if not body:
            return
        try:
            if item.behaviour == "cut" or (item.behaviour == "flaky" and not resumable):
                handler.wfile.write(data[: len(data) // 2])
                handler.wfile.flush()
                handler.close_connection = True
                return
            if item.behaviour == "slow":
                handler.wfile.write(data[: len(data) // 2])
                handler.wfile.flush()
                self._stop.wait(self.max_stall)
                return
            handler.wfile.write(data[start:])
        except (BrokenPipeError, ConnectionResetError):
            pass
