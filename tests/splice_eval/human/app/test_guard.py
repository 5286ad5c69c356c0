"""Another annotator's session, tried as an attacker would: with passwords, B1 is logged in
and knows A1's session hash (it travels in URLs and request bodies) and A1's event ids.
Through the HTTP routes of a real server, B1 can neither read A1's page stream, nor fetch
the clips it shows, nor join, cancel, close or read one of A1's events; A1's page goes on
working throughout, and a URL holding a NUL byte is refused, not a server error."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest

from splice_eval.human.app.package import read_package
from tests.support.annotate_serving import (
    completed,
    file_urls,
    handlers,
    join,
    logged_in,
    post_json,
    run_event,
    served,
    status_of,
)

pytest.importorskip("gradio")
PASSWORDS = {"A1": "kiwi", "B1": "pie"}


def test_another_annotators_session_hash_opens_nothing_of_theirs(package, tmp_path):
    root, _ = package
    answers = tmp_path / "answers"
    tasks = read_package(root).tasks
    n_max = max(len(t.clips) for ts in tasks.values() for t in ts)
    n = len(tasks["A1"][0].clips)
    # state, name, the folder shown (A1's first), unknown, positions
    answer = [None, None, tasks["A1"][0].folder, False, *range(1, n + 1), *[None] * (n_max - n)]
    with served(root, answers, PASSWORDS) as url:
        a1, b1 = logged_in(url, "A1", "kiwi"), logged_in(url, "B1", "pie")
        fn = handlers(a1, url)
        api = url + "/gradio_api"
        page = run_event(a1, url, fn["load"], [None], "a1-page")
        assert page["success"] and "**A1**: 0 of 3 answered" in json.dumps(page["output"])
        clips = file_urls(page["output"])
        assert len(clips) == n
        own = run_event(b1, url, fn["load"], [None], "b1-page")  # B1's own page works
        assert own["success"] and file_urls(own["output"])

        # A1 submits; the answer waits in A1's stream, unread
        saved = join(a1, url, fn["submit"], answer, "a1-page")
        moved = join(a1, url, fn["next"], [None, None, None], "a1-page")
        a1_stream = f"{api}/queue/data?session_hash=a1-page"
        assert status_of(b1, a1_stream) == 403  # not read, so not taken from A1
        assert status_of(b1, f"{api}/call/x/{saved}") == 403  # the event's stream by its id
        load = {"data": [None], "fn_index": fn["load"], "session_hash": "a1-page"}
        assert status_of(b1, post_json(f"{api}/queue/join", load)) == 403
        cancel = {"session_hash": "a1-page", "fn_index": fn["next"], "event_id": moved}
        assert status_of(b1, post_json(f"{api}/cancel", cancel)) == 403
        assert status_of(b1, post_json(f"{api}/cancel", cancel | {"session_hash": "b1"})) == 403
        assert status_of(b1, post_json(f"{api}/stream/{moved}/close", {})) == 403
        assert status_of(b1, f"{api}/heartbeat/a1-page") == 403
        assert status_of(b1, f"{api}/deep_link?session_hash=a1-page") == 403
        for clip in clips:
            assert status_of(b1, clip) == 403  # the parts A1's page shows
            assert status_of(a1, clip) == 200
        for clip in file_urls(own["output"]):
            assert status_of(a1, clip) == 403 and status_of(b1, clip) == 200

        # A1's page still has both its events, and acted as A1
        done = completed(a1, url, "a1-page", {saved, moved})
        assert done[saved]["success"] and "Saved folder" in json.dumps(done[saved]["output"])
        assert done[moved]["success"] and "**A1**" in json.dumps(done[moved]["output"])
    assert sorted(p.name for p in answers.glob("*.csv")) == ["A1.csv"]


@pytest.mark.parametrize("passwords", [PASSWORDS, None], ids=["passwords", "open"])
def test_a_url_holding_a_nul_byte_is_refused(package, tmp_path, passwords):
    root, _ = package
    with served(root, tmp_path / "answers", passwords) as url:
        a1 = logged_in(url, "A1", "kiwi") if passwords else urllib.request.build_opener()
        for path in ("/gradio_api/file=", "/gradio_api/file/", "/", "/gradio_api/queue/data"):
            bad = url + path + "a%00b"
            assert 400 <= status_of(a1, bad) < 500, path
        query = urllib.parse.urlencode({"session_hash": "a\x00b"})
        assert 400 <= status_of(a1, f"{url}/gradio_api/queue/data?{query}") < 500


def test_the_guard_reads_a_login_cookie_as_gradio_does():
    """One request, one user, for the guard and for Gradio alike: the same parser over the
    same headers, the secure cookie first even when it names no login."""
    from starlette.requests import Request

    from splice_eval.human.app.guard import logged_in_user

    class App:
        cookie_id = "c"
        tokens = {"tok-a": "A1", "tok-b": "B1"}

    def gradio_user(scope):  # gradio/routes.py get_current_user, as pinned
        cookies = Request(scope).cookies
        token = cookies.get("access-token-c") or cookies.get("access-token-unsecure-c")
        return App.tokens.get(token)

    headers = [
        [(b"cookie", b"access-token-c=tok-a")],
        [(b"cookie", b"access-token-c=tok-a"), (b"cookie", b"access-token-c=tok-b")],
        [(b"cookie", b"access-token-c=nobody; access-token-unsecure-c=tok-b")],
        [(b"cookie", b'x="unterminated; access-token-unsecure-c=tok-b')],
        [(b"cookie", b"access-token-unsecure-c=tok-b")],
        [],
    ]
    for h in headers:
        scope = {"type": "http", "headers": h, "app": App()}
        assert logged_in_user(scope) == gradio_user(scope), h
