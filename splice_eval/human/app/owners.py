"""Whose each session, event and served file is, once the server has seen it used.

Gradio names a page's session by a hash the client chooses and an event by an id the queue
mints, and serves whatever its routes are asked for by those names to anyone logged in. The
app binds them to the logged-in annotator instead: a session to the user who first used it,
an event to the user whose join minted it, a file to the users whose pages were handed it
(a clip in Gradio's cache, named by a salted hash of its bytes) or whose own folder holds it.

One ``Owners`` per server, used from its event loop only: each check and its record happen
with no ``await`` between them, so no lock is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path


class Owners:
    def __init__(self, folders: Mapping[str, Path]):
        self.folders = {name: path.resolve() for name, path in folders.items()}
        self.sessions: dict[str, str] = {}
        self.events: dict[str, str] = {}
        self.files: dict[Path, set[str]] = {}

    def claim_session(self, session: str, user: str) -> bool:
        """Whether ``session`` is ``user``'s: it is the first user's to name it."""
        return self.sessions.setdefault(session, user) == user

    def mint_event(self, event: str, user: str) -> None:
        """An event is its joiner's, and so is the session Gradio names after it when the
        join named none (``call/<api>``)."""
        self.events.setdefault(event, user)
        self.sessions.setdefault(event, user)

    def owns_event(self, event: str, user: str) -> bool:
        """Only events the user's own joins minted; an unknown id is nobody's."""
        return self.events.get(event) == user

    def hand(self, files: Iterable[Path], user: str) -> None:
        for file in files:
            self.files.setdefault(file, set()).add(user)

    def may_fetch(self, file: Path, user: str) -> bool:
        """A file the user's pages were handed, or one inside the user's own folder."""
        own = self.folders.get(user)
        return user in self.files.get(file, ()) or (own is not None and file.is_relative_to(own))
