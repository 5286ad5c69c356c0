"""Shared by the annotation app's tests: a real package exported from the demo build, its
true positions (computed from the build's answers and the key, never by the app), and the
app served in this process on 127.0.0.1 (a thread: it ends with the test process)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterator
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
