"""The names ``guard`` binds, read from each of Gradio's session and event routes (those the
HTTP test in test_guard.py does not send), and the files and events a response hands out."""

from __future__ import annotations

from pathlib import Path

import pytest

from splice_eval.human.app import owners as owners_module
from splice_eval.human.app.claims import api_route, handed_files, minted_event, request_claims
from splice_eval.human.app.owners import Owners


@pytest.mark.parametrize(
    "route,method,query,body,sessions,events",
    [
        ("queue/data", "GET", "session_hash=a&session_hash=b", None, ("a", "b"), ()),
        ("queue/data", "GET", "session_hash=", None, ("",), ()),  # Gradio reads "" too
        ("run/predict", "POST", "", {"session_hash": "a", "data": []}, ("a",), ()),
        ("call/predict", "POST", "", {"session_hash": "a", "data": []}, ("a",), ()),
        ("call/predict/e1", "GET", "", None, (), ("e1",)),
        ("call/v2/predict/e1", "GET", "", None, (), ("e1",)),
        ("stream/e1", "POST", "", {"session_hash": "a", "data": []}, ("a",), ("e1",)),
        ("stream/a/run/3/playlist.m3u8", "GET", "", None, ("a",), ()),
        ("stream/a/run/3/seg.ts", "GET", "", None, ("a",), ()),
        ("heartbeat/a", "GET", "", None, ("a",), ()),
        ("cancel", "POST", "", {"session_hash": "a", "event_id": "e1"}, ("a",), ("e1",)),
        ("queue/join", "POST", "", {"session_hash": "a", "event_id": "e1"}, ("a",), ()),
        ("queue/status", "GET", "", None, (), ()),
    ],
)
def test_each_route_names_its_sessions_and_events(route, method, query, body, sessions, events):
    claims = request_claims(route, method, query, body)
    assert (claims.sessions, claims.events, claims.refused) == (sessions, events, None)


def test_files_and_closed_routes():
    assert request_claims("file=/tmp/x.mp4", "GET", "", None).file == Path("/tmp/x.mp4")
    assert request_claims("file//tmp/x.mp4", "GET", "", None).file == Path("/tmp/x.mp4")
    assert "no file named" in request_claims("file=", "GET", "", None).refused
    multipart = request_claims("component_server", "POST", "", None)
    assert "no server functions" in multipart.refused
    assert api_route("/gradio_api/queue/data") == "queue/data"
    assert api_route("/app/gradio_api/queue/data", "/app") == "queue/data"
    assert api_route("/config") is None


def test_a_response_hands_out_its_files_and_its_event():
    clip = {"path": "/tmp/c/part_1.mp4", "meta": {"_type": "gradio.FileData"}}
    message = {"output": {"data": [{"value": {"video": clip}}, "/gradio_api/file=/tmp/d%20e"]}}
    assert handed_files(message) == {Path("/tmp/c/part_1.mp4"), Path("/tmp/d e")}
    assert handed_files({"path": "/etc/passwd"}) == set()  # not a FileData: nothing handed
    assert minted_event({"event_id": "e1"}) == "e1" and minted_event(["e1"]) is None


def test_owners_bind_on_first_use(tmp_path):
    owners = Owners({"A1": tmp_path / "A1", "B1": tmp_path / "B1"})
    assert owners.session_refusal("s", "A1") is None
    assert "another annotator's" in owners.session_refusal("s", "B1")
    assert owners.session_refusal("s", "A1") is None
    owners.mint_event("e", "A1")
    assert owners.owns_event("e", "A1") and not owners.owns_event("e", "B1")
    assert not owners.owns_event("unknown", "A1")
    assert owners.session_refusal("e", "B1")  # the session Gradio names after the event
    cached = tmp_path / "cache" / "part_1.mp4"
    owners.hand([cached], "A1")
    assert owners.may_fetch(cached, "A1") and not owners.may_fetch(cached, "B1")
    own = (tmp_path / "B1" / "video" / "1" / "random_part_1.mp4").resolve()
    assert owners.may_fetch(own, "B1") and not owners.may_fetch(own, "A1")


def test_owners_memory_is_bounded_per_user(tmp_path, monkeypatch):
    monkeypatch.setattr(owners_module, "MAX_SESSIONS", 3)
    monkeypatch.setattr(owners_module, "MAX_EVENTS", 2)
    owners = Owners({})
    assert [owners.session_refusal(f"s{i}", "A1") for i in range(3)] == [None] * 3
    assert "over 3 pages" in owners.session_refusal("s3", "A1")
    assert owners.session_refusal("s0", "A1") is None  # one's own still works
    assert owners.session_refusal("t0", "B1") is None  # and others' cap is their own
    for event in ("e1", "e1", "e2", "e2", "e3", "e3"):  # a stream repeats its event's id
        owners.mint_event(event, "A1")
    owners.mint_event("e3", "B1")
    assert [owners.owns_event(e, "A1") for e in ("e1", "e2", "e3")] == [False, True, True]
    assert len(owners.events) == 2
