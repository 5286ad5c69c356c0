"""Gradio's logins kept across a restart of ``splice annotate serve --passwords``.

Gradio keeps a login as a random token in memory (``app.tokens``: token -> user), sent
back by the browser in a cookie whose name holds a random id of the server
(``app.cookie_id``). Both are new in a new process, so after a crash and a restart every
open page was logged out: its next submit was refused, and the annotator's page never
said so (0 of the submits after a restart were acknowledged). Here both are kept in one
file beside the answers (``FILE_NAME``, readable by its owner only): read when the server
starts, written whole (atomically) at each login and logout. A token is a password's
equal while the file lives; the organiser deletes it to log everyone out.

Installed on the app at startup (``lifespan``), before the server answers any request,
and read by ``guard`` as Gradio reads it. Bounded: each user's newest `MAX_PER_USER`
logins are kept (one per browser, and a browser keeps its cookie)."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from splice_build.atomic import atomic_path

FILE_NAME = ".logins.json"
MAX_PER_USER = 100


class _Tokens(dict):
    """``app.tokens``, written through to the file on every change (Gradio's login and
    logout routes set and delete items; both run on the server's event loop)."""

    def __init__(self, items: dict[str, str], save: Callable[[dict[str, str]], None]):
        super().__init__(items)
        self._save = save

    def __setitem__(self, token: str, user: str) -> None:
        super().__setitem__(token, user)
        mine = [t for t, u in self.items() if u == user]
        for old in mine[:-MAX_PER_USER]:
            super().__delitem__(old)
        self._save(dict(self))

    def __delitem__(self, token: str) -> None:
        super().__delitem__(token)
        self._save(dict(self))


class Logins:
    """The file ``folder/FILE_NAME`` and what it holds: the cookie id and the tokens of
    ``users`` (a token of a user no longer in the passwords file is dropped)."""

    def __init__(self, folder: Path, users: set[str]):
        self.path = Path(folder) / FILE_NAME
        self.cookie_id, self.tokens = secrets.token_urlsafe(32), {}
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
            cookie_id, tokens = kept["cookie_id"], kept["tokens"]
            if isinstance(cookie_id, str) and isinstance(tokens, dict):
                self.cookie_id = cookie_id
                self.tokens = {t: u for t, u in tokens.items() if isinstance(u, str) and u in users}
        except (OSError, ValueError, KeyError, TypeError):
            pass  # none yet, or unreadable: everyone logs in again, as after any restart

    def save(self, tokens: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"cookie_id": self.cookie_id, "tokens": tokens})
        with atomic_path(self.path, fsync=True) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable
            with os.fdopen(fd, "w", encoding="utf-8") as fh:  # by others, even for a moment
                fh.write(text)

    def install(self, app: Any) -> None:
        """Gradio's app logs in with these from now on."""
        app.cookie_id = self.cookie_id
        app.tokens = _Tokens(self.tokens, self.save)

    def lifespan(self) -> Callable[[Any], Any]:
        """For ``launch(app_kwargs={"lifespan": ...})``: installs at startup."""

        @asynccontextmanager
        async def installed(app: Any) -> AsyncIterator[None]:
            self.install(app)
            yield

        return installed
