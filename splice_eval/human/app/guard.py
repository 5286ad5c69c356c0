"""Which clips a logged-in annotator may fetch by path.

Gradio serves every file under ``allowed_paths`` to any logged-in user, and a clip's
path names its annotator (``<package>/B1/video_text/<folder>/random_part_k.mp4``). The
protocol flips modalities between annotators: B1's captioned parts of a video that A1
orders as video only must stay out of A1's reach, so with passwords a request for a
file under the package is served only inside the logged-in annotator's own folder. The
page itself never needs those paths (Gradio hands it copies in its cache, under names
derived from a salted hash of their bytes), so the rule costs the page nothing.

An ASGI middleware, handed to the Gradio app through ``launch(app_kwargs=...)``: it runs
before Gradio's own file route, reads the user the way Gradio's login does (the app's
``tokens`` by the access-token cookie; Gradio is pinned, ``app.GRADIO_VERSION``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]
FILE_ROUTES = ("/file=", "/file/")


def requested_file(path: str) -> Path | None:
    """The file a request path asks Gradio for (``.../file=<path>``), or None."""
    for marker in FILE_ROUTES:
        _, sep, rest = path.partition(marker)
        if sep and rest:
            return Path(rest).resolve()  # relative to the working folder, as Gradio reads it
    return None


def may_fetch(file: Path, root: Path, folders: Mapping[str, Path], user: str | None) -> bool:
    """A file outside the package is Gradio's to judge; inside it, only the logged-in
    annotator's own folder."""
    if not file.is_relative_to(root):
        return True
    own = folders.get(user) if user is not None else None
    return own is not None and file.is_relative_to(own)


def logged_in_user(scope: Scope) -> str | None:
    """The user Gradio's login gave this request's cookie, or None."""
    app = scope.get("app")
    tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
    if not tokens or cookie_id is None:
        return None
    cookies = SimpleCookie()
    for name, value in scope.get("headers", ()):
        if name == b"cookie":
            cookies.load(value.decode("latin-1"))
    for name in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
        if name in cookies and cookies[name].value in tokens:
            return tokens[cookies[name].value]
    return None


class OwnFolderOnly:
    """The middleware: a request for another annotator's file gets 403, nothing else."""

    def __init__(self, app: ASGIApp, root: Path, folders: Mapping[str, Path]):
        self.app = app
        self.root = root.resolve()
        self.folders = {name: path.resolve() for name, path in folders.items()}

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            file = requested_file(scope.get("path", ""))
            if file is not None and not may_fetch(
                file, self.root, self.folders, logged_in_user(scope)
            ):
                await _refuse(send)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Callable) -> None:
    body = b"File not allowed: not your annotator folder."
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})
