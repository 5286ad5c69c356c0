"""The ASGI middleware between the network and Gradio: every session, event and file is the
logged-in annotator's own, and a URL holding a NUL byte is refused.

Gradio serves a page's stream (``queue/data``), its events (``queue/join``, ``cancel``,
``stream``, ``call``) and its files to anyone logged in who names them, and the names travel
in URLs and bodies. With passwords that would let one annotator read another's page (the
true-order-free but modality-flipped parts: B1's captioned parts of a video A1 orders as
video only), take their events, or answer for them. So with passwords each name is bound
to the logged-in user (``owners.Owners``, what ``claims`` reads of Gradio's routes), and a
request naming someone else's, or a name nobody was given, gets 403 before Gradio sees it.
Files are served only to the users whose pages were handed them (read from the responses
on their way out) or inside their own annotator folder.

Handed to Gradio through ``launch(app_kwargs=...)``; it reads the user the way Gradio's
login does (the app's ``tokens`` by the access-token cookie; Gradio is pinned,
``app.GRADIO_VERSION``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.requests import cookie_parser

from .claims import Claims, api_route, handed_files, json_or_none, minted_event, request_claims
from .owners import Owners

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]
# Largest request body read to find the names in it (the page's own are a few kB).
MAX_BODY = 1 << 20
# Largest JSON response read for the files it hands out (larger ones hand out nothing).
MAX_SNIFF = 16 << 20
UPLOAD = "upload"  # a multipart file upload: names no session the app binds


def logged_in_user(scope: Scope) -> str | None:
    """The user Gradio's login gave this request's cookie, or None."""
    app = scope.get("app")
    tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
    if not tokens or cookie_id is None:
        return None
    # Read as Gradio reads it (``Request.cookies``): Starlette's parser over every Cookie
    # header in turn, then the secure cookie before the other, whether or not it names a
    # login. A reading of our own (SimpleCookie, which refuses what Starlette takes, and a
    # valid token looked for under either name) could make one request two users.
    cookies: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        if name == b"cookie":
            cookies.update(cookie_parser(value.decode("latin-1")))
    token = cookies.get(f"access-token-{cookie_id}") or cookies.get(
        f"access-token-unsecure-{cookie_id}"
    )
    return tokens.get(token) if token else None


def holds_nul(scope: Scope) -> bool:
    """Whether the URL names a NUL byte (in its path or, percent-encoded, its query)."""
    query = urllib.parse.unquote_to_bytes(scope.get("query_string", b""))
    return "\x00" in scope.get("path", "") or b"\x00" in query


class OwnSessionsOnly:
    """The middleware; ``folders``: each annotator's folder, None without passwords (then
    only NUL bytes are refused: with no login anyone may be anyone)."""

    def __init__(self, app: ASGIApp, folders: Mapping[str, Path] | None = None):
        self.app = app
        self.owners = Owners(folders) if folders is not None else None

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if holds_nul(scope):
            await refuse(send, 400, "Bad request: the URL holds a NUL byte.")
            return
        route = api_route(scope.get("path", ""), scope.get("root_path", ""))
        if self.owners is None or route is None:
            await self.app(scope, receive, send)
            return
        body, receive = await _read_body(scope, receive, route)
        if body is None:
            await refuse(send, 413, f"Request too large: over {MAX_BODY} bytes.")
            return
        claims = request_claims(
            route, scope["method"], scope.get("query_string", b"").decode("latin-1"),
            json_or_none(body) if body else None,
        )  # fmt: skip
        user = logged_in_user(scope)
        if claims.refused or claims.sessions or claims.events or claims.file is not None:
            if user is None:
                await refuse(send, 401, "Not authenticated: log in first.")
                return
            if reason := self._refusal(claims, user):
                await refuse(send, 403, reason)
                return
        await self.app(scope, receive, self._sniffing(send, user) if user else send)

    def _refusal(self, claims: Claims, user: str) -> str | None:
        owners = self.owners
        assert owners is not None
        if claims.refused:
            return claims.refused
        if claims.file is not None and not owners.may_fetch(claims.file, user):
            return "File not allowed: not handed to your page."
        for session in claims.sessions:
            if reason := owners.session_refusal(session, user):
                return reason
        if not all(owners.owns_event(e, user) for e in claims.events):
            return "Not allowed: not an event of yours."
        return None

    def _sniffing(self, send: Callable, user: str) -> Callable:
        """``send``, first recording what each response hands ``user``."""
        owners = self.owners
        assert owners is not None

        def take(payload: object) -> None:
            owners.hand(handed_files(payload), user)
            if (event := minted_event(payload)) is not None:
                owners.mint_event(event, user)

        reader = _ResponseReader(take)

        async def sniff(message: dict) -> None:
            reader.read(message)
            await send(message)

        return sniff


class _ResponseReader:
    """Hands each JSON document of a response (an event stream's messages, or a JSON body
    once whole) to ``take``, before the part of the response that completes it is sent."""

    def __init__(self, take: Callable[[object], None]):
        self.take = take
        self.kind = ""
        self.pending = bytearray()

    def read(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers", ()))
            self.kind = headers.get(b"content-type", b"").decode("latin-1").split(";")[0]
            return
        if message["type"] != "http.response.body" or self.kind not in JSON_KINDS:
            return
        self.pending.extend(message.get("body", b""))
        if self.kind == "text/event-stream":
            *complete, rest = bytes(self.pending).split(b"\n\n")
            self.pending[:] = rest
            for event in complete:
                for line in event.split(b"\n"):
                    if line.startswith(b"data:"):
                        self.take(json_or_none(line[5:]))
        elif len(self.pending) > MAX_SNIFF:
            self.kind = ""  # too large to read: hands out nothing
            self.pending.clear()
        elif not message.get("more_body", False):
            self.take(json_or_none(bytes(self.pending)))


JSON_KINDS = frozenset({"application/json", "text/event-stream"})


async def _read_body(scope: Scope, receive: Callable, route: str) -> tuple[bytes | None, Callable]:
    """The request's body (None when over `MAX_BODY`) and a ``receive`` that replays it."""
    if scope["method"] != "POST" or route.startswith(UPLOAD):
        return b"", receive
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", _replay([message], receive)
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_BODY:
            return None, receive
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, _replay([{"type": "http.request", "body": body, "more_body": False}], receive)


def _replay(messages: list[dict], receive: Callable) -> Callable:
    async def replay() -> dict:
        return messages.pop(0) if messages else await receive()

    return replay


async def refuse(send: Callable, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
