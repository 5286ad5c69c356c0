"""Shared by the annotation app's tests: a real package exported from the demo build, its
true positions (computed from the build's answers and the key, never by the app), and the
app served in this process on 127.0.0.1 (a thread: it ends with the test process)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import splice_dataset as schema
from splice_eval.builddata import iter_rows
from splice_eval.human import annotate
from splice_eval.human.annotate import Assignment

ANNOTATORS = ("A1", "B1")
LIMIT = 3  # videos: each annotator orders 3 folders


def export_package(demo_build: Path, out: Path) -> dict[int, Assignment]:
    annotate.export(demo_build, out, ANNOTATORS, seed=5, limit=LIMIT)
    return annotate.read_key(out / annotate.KEY_NAME)


def true_positions(demo_build: Path, key: dict[int, Assignment]) -> dict[int, list[int]]:
    """folder -> the position (1 = first) of each random_part_k, k = 1..n, from the build."""
    answers = {
        r[schema.VIDEO_ID]: r[schema.ANSWER]["order"]
        for r in iter_rows(demo_build, "text", [schema.VIDEO_ID, schema.ANSWER])
    }
    return {
        folder: [answers[a.video_id].index(label) + 1 for label in a.parts]
        for folder, a in key.items()
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(package: Path, answers: Path, passwords: dict[str, str] | None = None) -> Iterator[str]:
    """The app on a free 127.0.0.1 port; its Gradio file cache in a temporary folder."""
    from splice_eval.human.app.app import launch
    from splice_eval.human.app.package import read_package
    from splice_eval.human.app.store import AnswerStore

    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = tempfile.mkdtemp(prefix="splice-gradio-")
    port = free_port()
    demo = launch(
        read_package(package), AnswerStore(answers), "127.0.0.1", port, passwords, block=False
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


def get(url: str) -> tuple[int, bytes]:
    """A GET that returns the status of a refusal instead of raising."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def handlers(opener: urllib.request.OpenerDirector, url: str) -> dict[str, int]:
    """The page's event handlers by what triggers them: ``load``, or a button's elem_id."""
    config = json.loads(opener.open(url + "/config", timeout=30).read())
    elem = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
    out = {}
    for dep in config["dependencies"]:
        for target, trigger in dep["targets"]:
            out["load" if trigger == "load" else elem[target]] = dep["id"]
    return out


def logged_in(url: str, user: str, password: str) -> urllib.request.OpenerDirector:
    """A client holding ``user``'s login cookie, as a browser does after the login form."""
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    data = urllib.parse.urlencode({"username": user, "password": password}).encode()
    with browser.open(url + "/login", data, timeout=30) as response:
        assert response.status == 200
    return browser


def status_of(opener: urllib.request.OpenerDirector, url: str | urllib.request.Request) -> int:
    """The status of a request (the body read whole), a refusal's included."""
    try:
        with opener.open(url, timeout=30) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def post_json(url: str, body: dict) -> urllib.request.Request:
    return urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )


def join(opener: urllib.request.OpenerDirector, url: str, fn: int, data: list, session: str) -> str:
    """An event put in Gradio's queue for ``session``, as the page sends it; its id."""
    body = {"data": data, "fn_index": fn, "session_hash": session}
    request = post_json(url + "/gradio_api/queue/join", body)
    return json.loads(opener.open(request, timeout=30).read())["event_id"]


def completed(
    opener: urllib.request.OpenerDirector, url: str, session: str, event_ids: set[str]
) -> dict[str, dict]:
    """The ``process_completed`` messages of ``event_ids``, read from the session's stream."""
    stream = url + "/gradio_api/queue/data?" + urllib.parse.urlencode({"session_hash": session})
    out: dict[str, dict] = {}
    with opener.open(stream, timeout=120) as response:
        for line in response:
            if line.startswith(b"data: "):
                message = json.loads(line[6:])
                if message.get("msg") == "process_completed" and (
                    message.get("event_id") in event_ids
                ):
                    out[message["event_id"]] = message
                    if len(out) == len(event_ids):
                        return out
    raise AssertionError(f"events {event_ids - set(out)} of session {session} never completed")


def run_event(
    opener: urllib.request.OpenerDirector, url: str, fn: int, data: list, session: str
) -> dict:
    """One event through Gradio's queue, as the page sends it (the session named by the
    hash the client chooses); the ``process_completed`` message it ends with."""
    event_id = join(opener, url, fn, data, session)
    return completed(opener, url, session, {event_id})[event_id]


def file_urls(message: object) -> list[str]:
    """The ``/file=`` addresses an event's message hands the page (its clips)."""
    if isinstance(message, dict):
        return [u for v in message.values() for u in file_urls(v)]
    if isinstance(message, list):
        return [u for v in message for u in file_urls(v)]
    return [message] if isinstance(message, str) and "/file=" in message else []


# --- the page under load: `splice annotate serve` in its own process, tabs as clients ----


def die_with_the_test() -> None:
    """``preexec_fn`` of a server a test starts: it ends with the test process, and takes
    Ctrl-C as under a terminal (``terminal.terminal_sigint``)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_serve(
    package: Path, answers: Path, port: int, cache: Path, passwords: Path | None = None
) -> subprocess.Popen:
    """``splice annotate serve`` as a user starts it, returned once it prints its address
    (then the page answers)."""
    argv = [sys.executable, "-m", "splice_build.cli", "annotate", "serve", str(package)]
    argv += ["--port", str(port), "--answers", str(answers)]
    argv += ["--passwords", str(passwords)] if passwords else []
    env = os.environ | {"GRADIO_TEMP_DIR": str(cache), "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        argv, env=env, preexec_fn=die_with_the_test, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    line = server.stdout.readline()
    while line and not line.startswith("serving"):
        line = server.stdout.readline()
    if not line:
        server.wait(timeout=60)
        raise AssertionError(f"serve ended ({server.returncode}): {server.stderr.read()}")
    return server


@dataclass
class Ack:
    """One event's end as a tab read it from its stream."""

    event: str
    seconds: float  # from the join to the completion read
    at: float  # time.monotonic() when read
    message: dict


class Tab:
    """One browser tab of the page over HTTP: its own session hash, the annotator's login
    (a browser's tabs share the cookie), the page as it shows after each event (the
    folder on screen), and every message its stream carried (``streamed``:
    event id -> messages), so a test sees whatever reached it, its own or not."""

    def __init__(self, opener: urllib.request.OpenerDirector, url: str, fn: dict, session: str):
        self.opener, self.url, self.fn, self.session = opener, url, fn, session
        self.folder: int | None = None
        self.joined: list[str] = []
        self.streamed: dict[str, list[str]] = {}

    def event(self, name: str, data: list) -> Ack:
        start = time.monotonic()
        event_id = join(self.opener, self.url, self.fn[name], data, self.session)
        self.joined.append(event_id)
        message = self._until_completed(event_id)
        ack = Ack(event_id, time.monotonic() - start, time.monotonic(), message)
        self._show(message)
        return ack

    def load(self) -> Ack:
        return self.event("load", [None])

    def submit(self, positions: list[int], n_max: int, unknown: bool = False) -> Ack:
        fields = [*positions, *[None] * (n_max - len(positions))]
        return self.event("submit", [None, None, self.folder, unknown, *fields])

    def back(self) -> Ack:
        """Previous: the page's folder before the one it shows."""
        return self.event("previous", [None, None, self.folder])

    def _until_completed(self, event_id: str) -> dict:
        """Read the session's stream (reopened as the page does, whenever it closes) until
        ``event_id`` completes."""
        query = urllib.parse.urlencode({"session_hash": self.session})
        for _ in range(20):
            with self.opener.open(f"{self.url}/gradio_api/queue/data?{query}", timeout=120) as r:
                for line in r:
                    if not line.startswith(b"data: "):
                        continue
                    message = json.loads(line[6:])
                    if message.get("event_id"):
                        self.streamed.setdefault(message["event_id"], []).append(message["msg"])
                    if message.get("msg") == "process_completed" and (
                        message.get("event_id") == event_id
                    ):
                        return message
        raise AssertionError(f"event {event_id} of {self.session} never completed")

    def _show(self, message: dict) -> None:
        """The folder the page now shows (the hidden field after the state; see app)."""
        data = message.get("output", {}).get("data")
        if message.get("success") and data:
            self.folder = data[1]


def page_text(ack: Ack) -> str:
    return json.dumps(ack.message.get("output", {}))
