"""Issue 47 §5, isolation: "while annotator A listened on the queue, annotator B's own event
results went to A's stream: B missed 4 of its results". Every event's results go to the
session that sent it, and only to it.

Gradio routes an event's messages by the session hash its join named (``Queue.send_message``:
``pending_messages_per_session[event.session_hash]``), and a stream reads one session's
messages (``queue/data?session_hash=``, or ``call/<api>/<event>``: the event's session),
each message to whichever open stream of that session takes it first. So B's results reach
A only if A reads a stream of B's session, or B's events land in a session A reads; and B
loses results if A's request drops or closes them (``heartbeat/<session>`` closes a
session's events when it ends; ``cancel`` removes the event it names from the queue,
whatever session it names). Each of those routes is tried here by A, through a real server
on 127.0.0.1 with passwords, in every form the guard and Gradio might read differently
(repeated and encoded query parameters, doubled and encoded slashes, a trailing slash,
other methods, an event id in a join, a hash A names first, a restart that keeps the
logins), while A's own page listens on its stream and B has events in flight. B must get
every result, and no stream of A's may carry one of B's events.

Bounded: one server per test (two for the restart), two logged-in clients, a few events
each; requests are sent byte-exact with ``http.client`` (urllib would tidy the URL)."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.annotate_serving import (
    Tab,
    completed,
    handlers,
    join,
    logged_in,
    served,
)

pytest.importorskip("gradio")
PASSWORDS = {"A1": "kiwi", "B1": "pie"}
B_PAGE = "b-page"
# A's requests naming B's session as Gradio reads it (Starlette's query parser, last value
# wins; uvicorn's decoded path): each is refused before Gradio sees it.
NAMING_B = [
    ("GET", f"/gradio_api/queue/data?session_hash={B_PAGE}"),
    ("GET", f"/gradio_api/queue/data?session_hash=a-page&session_hash={B_PAGE}"),
    ("GET", f"/gradio_api/queue/data?session_hash={B_PAGE}&session_hash=a-page"),
    ("GET", f"/gradio_api/queue/data?session_hash={B_PAGE}&session_hash"),
    ("GET", "/gradio_api/queue/data?session%5Fhash=b%2Dpage"),
    ("GET", "/gradio_api/queue/data?session_hash=%62-page"),
    ("GET", f"/gradio_api/queue/data/?session_hash={B_PAGE}"),
    ("GET", f"/gradio_api//queue/data?session_hash={B_PAGE}"),
    ("GET", f"/gradio_api/queue%2Fdata?session_hash={B_PAGE}"),
    ("GET", f"/gradio_api/%71ueue/data?session_hash={B_PAGE}"),
    ("HEAD", f"/gradio_api/queue/data?session_hash={B_PAGE}"),
    ("GET", f"/gradio_api/heartbeat/{B_PAGE}"),
    ("GET", "/gradio_api/heartbeat/b%2Dpage"),
    ("GET", f"/gradio_api/deep_link?session_hash={B_PAGE}"),
]
# Routes naming one of B's events (``{event}``): the event's session stream, its close.
NAMING_B_EVENT = [
    ("GET", "/gradio_api/call/x/{event}"),
    ("GET", "/gradio_api/call/v2/x/{event}"),
    ("GET", "/gradio_api/call/x/{event}/"),
    ("HEAD", "/gradio_api/call/x/{event}"),
    ("POST", "/gradio_api/stream/{event}/close"),
]
# Addresses that reach no stream route at all (Gradio's own 404).
NO_ROUTE = [
    f"//gradio_api/queue/data?session_hash={B_PAGE}",
    f"/queue/data?session_hash={B_PAGE}",
    f"http://127.0.0.1/gradio_api/queue/data?session_hash={B_PAGE}",
]


def _cookie(opener: urllib.request.OpenerDirector) -> str:
    jar = next(h.cookiejar for h in opener.handlers if hasattr(h, "cookiejar"))
    return "; ".join(f"{c.name}={c.value}" for c in jar)


def _raw(url: str, method: str, target: str, cookie: str, body: object = None) -> tuple[int, bytes]:
    """One request sent as written (the target byte for byte), its status and everything
    its response carried within a few seconds (a stream is read until it ends or idles)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=3)
    data = json.dumps(body).encode() if body is not None else None
    conn.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
    conn.putheader("Cookie", cookie)
    if data is not None:
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    got = b""
    try:
        while chunk := response.read1(1 << 16):
            got += chunk
    except (TimeoutError, http.client.HTTPException, OSError):
        pass  # a stream that idles: what it carried so far is what A took
    finally:
        conn.close()
    return response.status, got


class Listening:
    """A's own page, listening on its queue throughout: a thread moving it on and back
    (an event at a time, each read from A's stream) until told to stop."""

    def __init__(self, tab: Tab):
        self.tab, self.stop, self.errors = tab, threading.Event(), []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        step = "next"
        try:
            while not self.stop.is_set():
                ack = self.tab.event(step, [None, None, self.tab.folder])
                assert ack.message["success"], ack.message
                step = "previous" if step == "next" else "next"
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def __enter__(self) -> Listening:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=120)


def _results(url: str, cookie: str, session: str, events: set[str]) -> dict[str, dict]:
    """The ``process_completed`` messages of ``events`` that ``session``'s stream carries
    before it ends or idles (10 s): a result taken by another stream is missing here, not
    waited for."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request(
        "GET", f"/gradio_api/queue/data?session_hash={session}", headers={"Cookie": cookie}
    )
    out: dict[str, dict] = {}
    try:
        for line in conn.getresponse():
            if line.startswith(b"data: "):
                message = json.loads(line[6:])
                if message.get("msg") == "process_completed" and message["event_id"] in events:
                    out[message["event_id"]] = message
                    if len(out) == len(events):
                        break
    except (TimeoutError, http.client.HTTPException, OSError):
        pass
    finally:
        conn.close()
    return out


def _b_events(b1, url: str, fn: dict, n: int) -> list[str]:
    """B's page moves on ``n`` times at once: ``n`` events in flight, unread."""
    return [join(b1, url, fn["next"], [None, None, None], B_PAGE) for _ in range(n)]


def test_while_a_listens_every_result_of_b_goes_to_b_and_only_b(package, tmp_path):
    root, _ = package
    with served(root, tmp_path / "answers", PASSWORDS) as url:
        a1, b1 = logged_in(url, "A1", "kiwi"), logged_in(url, "B1", "pie")
        fn = handlers(a1, url)
        a_cookie, b_cookie = _cookie(a1), _cookie(b1)
        a_tab = Tab(a1, url, fn, "a-page")
        a_tab.load()
        b_first = join(b1, url, fn["load"], [None], B_PAGE)
        assert completed(b1, url, B_PAGE, {b_first})[b_first]["success"]

        b_sent: list[str] = []
        b_got: dict[str, dict] = {}
        taken: dict[str, tuple[int, bytes]] = {}
        with Listening(a_tab) as listening:
            for method, target in NAMING_B:
                events = _b_events(b1, url, fn, 2)
                taken[f"{method} {target}"] = _raw(url, method, target, a_cookie)
                b_sent += events
                b_got |= _results(url, b_cookie, B_PAGE, set(events))
            for method, template in NAMING_B_EVENT:
                events = _b_events(b1, url, fn, 2)
                target = template.format(event=events[0])
                taken[f"{method} {target}"] = _raw(
                    url, method, target, a_cookie, {} if method == "POST" else None
                )
                b_sent += events
                b_got |= _results(url, b_cookie, B_PAGE, set(events))
            for target in NO_ROUTE:
                events = _b_events(b1, url, fn, 2)
                status, body = _raw(url, "GET", target, a_cookie)
                assert status == 404, (target, status, body[:200])
                b_sent += events
                b_got |= _results(url, b_cookie, B_PAGE, set(events))
            # A cancels B's waiting event in A's own session (Gradio removes the event it
            # names from the queue, whatever the session), and joins naming B's event id
            events = _b_events(b1, url, fn, 3)
            cancel = {"session_hash": "a-page", "fn_index": fn["next"], "event_id": events[-1]}
            taken["POST cancel"] = _raw(url, "POST", "/gradio_api/cancel", a_cookie, cancel)
            # (in another page of A's: two streams of one session share its messages)
            own = {"data": [None, None, None], "fn_index": fn["next"], "session_hash": "a-other"}
            status, body = _raw(
                url, "POST", "/gradio_api/queue/join", a_cookie, own | {"event_id": events[0]}
            )
            assert status == 200 and json.loads(body)["event_id"] not in events, body
            a_extra = json.loads(body)["event_id"]
            b_sent += events
            b_got |= _results(url, b_cookie, B_PAGE, set(events))
            assert a_extra in completed(a1, url, "a-other", {a_extra})
        assert not listening.errors, listening.errors

    for request, (status, body) in taken.items():
        assert status in (403, 405), (request, status, body[:200])
        assert not any(e.encode() in body for e in b_sent), request
    # B got every result, each a success of B's own page
    assert set(b_got) == set(b_sent), set(b_sent) - set(b_got)
    assert all(m["success"] and "**B1**" in json.dumps(m["output"]) for m in b_got.values())
    # A's page listened throughout, and its stream carried only A's own events
    assert len(a_tab.joined) > 2
    assert set(a_tab.streamed) <= set(a_tab.joined), set(a_tab.streamed) & set(b_sent)
    print(
        f"\n{len(taken) + len(NO_ROUTE)} of A's requests naming B's session or events, each "
        f"refused; B got {len(b_got)} of {len(b_sent)} results while A's page ran "
        f"{len(a_tab.joined)} events of its own"
    )


def _load(url: str, cookie: str, fn: dict, session: str) -> tuple[int, bytes]:
    """A page load joined for ``session``, sent as written."""
    body = {"data": [None], "fn_index": fn["load"], "session_hash": session}
    return _raw(url, "POST", "/gradio_api/queue/join", cookie, body)


def _race(url: str, a_cookie: str, b1, fn: dict, session: str) -> tuple[int, int, bytes]:
    """A opens a stream of ``session`` while B's first join names it: the two statuses, and
    what A's stream carried."""
    body = {"data": [None], "fn_index": fn["load"], "session_hash": session}
    request = urllib.request.Request(
        url + "/gradio_api/queue/join", json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )  # fmt: skip

    def b_join() -> int:
        try:
            with b1.open(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    with ThreadPoolExecutor(2) as pool:
        b = pool.submit(b_join)
        a = pool.submit(
            _raw, url, "GET", f"/gradio_api/queue/data?session_hash={session}", a_cookie
        )
        a_status, a_body = a.result(timeout=60)
        return a_status, b.result(timeout=60), a_body


def test_a_session_hash_is_one_annotators_even_when_another_names_it_first_or_after_a_restart(
    package, tmp_path
):
    root, _ = package
    answers = tmp_path / "answers"
    with served(root, answers, PASSWORDS) as url:
        a1, b1 = logged_in(url, "A1", "kiwi"), logged_in(url, "B1", "pie")
        fn = handlers(a1, url)
        a_cookie = _cookie(a1)
        # A listens on a hash nobody used yet: it is A's, and B is refused it, loudly
        status, body = _raw(url, "GET", "/gradio_api/queue/data?session_hash=fresh", a_cookie)
        assert status == 200 and b"unexpected_error" in body  # no such session yet
        refused = _load(url, _cookie(b1), fn, "fresh")
        assert refused[0] == 403, refused
        # A's stream and B's first join naming one new hash at once: never both served
        both = 0
        for k in range(8):
            a_status, b_status, a_body = _race(url, a_cookie, b1, fn, f"race-{k}")
            assert 403 in (a_status, b_status), (k, a_status, b_status)
            both += a_status == b_status == 200
            assert b'"process_completed"' not in a_body or b_status == 403, (k, a_body[:300])
        assert both == 0
        b_tab = Tab(b1, url, fn, B_PAGE)
        b_tab.load()
        shown = b_tab.folder

    # a restart keeps the logins (same cookies) and forgets every binding: B's page
    # reconnects with its hash, and it is still B's alone
    with served(root, answers, PASSWORDS) as url:
        b_tab.url = url
        b_tab.folder = shown
        ack = b_tab.event("next", [None, None, shown])
        assert ack.message["success"] and "**B1**" in json.dumps(ack.message["output"])
        events = _b_events(b1, url, fn, 3)
        b_cookie = _cookie(b1)
        status, body = _raw(url, "GET", f"/gradio_api/queue/data?session_hash={B_PAGE}", a_cookie)
        assert status == 403 and not any(e.encode() in body for e in events), body[:200]
        assert set(_results(url, b_cookie, B_PAGE, set(events))) == set(events)
        # and a hash A names first after the restart is A's: B's page is refused, not robbed
        status, _ = _raw(url, "GET", "/gradio_api/queue/data?session_hash=b-second", a_cookie)
        assert status == 200
        refused = _load(url, _cookie(b1), fn, "b-second")
        assert refused[0] == 403, refused
    assert set(b_tab.streamed) <= set(b_tab.joined)
