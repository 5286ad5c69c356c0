"""Whose each session, event and served file is, once the server has seen it used.

Gradio names a page's session by a hash the client chooses and an event by an id the queue
mints, and serves whatever its routes are asked for by those names to anyone logged in. The
app binds them to the logged-in annotator instead: a session to the user who first used it,
an event to the user whose join minted it, a file to the users whose pages were handed it
(a clip in Gradio's cache, named by a salted hash of its bytes) or whose own folder holds it.

Memory is bounded per user. A session is never forgotten (forgotten, it would be the next
claimant's), so a user who opened `MAX_SESSIONS` pages is refused more; an event is needed
only while its page waits for it, so each user's oldest beyond `MAX_EVENTS` are forgotten
(then nobody's). Files are only those the server itself handed out: the package's clips.

One ``Owners`` per server, used from its event loop only: each check and its record happen
with no ``await`` between them, so no lock is needed.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from pathlib import Path

MAX_SESSIONS = 10_000  # per user: a page load is one
MAX_EVENTS = 10_000  # per user, the newest: an event is named seconds after its join


class Owners:
    def __init__(self, folders: Mapping[str, Path]):
        self.folders = {name: path.resolve() for name, path in folders.items()}
        self.sessions: dict[str, str] = {}
        self.opened: Counter[str] = Counter()
        self.events: dict[str, str] = {}
        self.minted: dict[str, deque[str]] = {}
        self.files: dict[Path, set[str]] = {}

    def session_refusal(self, session: str, user: str) -> str | None:
        """Why ``user`` may not use ``session``, or None: it is the first user's to name it
        (a join that names none runs in a session named after its event: the event's)."""
        owner = self.sessions.get(session) or self.events.get(session)
        if owner is None:
            if self.opened[user] >= MAX_SESSIONS:
                return f"Not allowed: over {MAX_SESSIONS} pages opened; restart the server."
            self.sessions[session] = owner = user
            self.opened[user] += 1
        return None if owner == user else "Not allowed: this session is another annotator's."

    def mint_event(self, event: str, user: str) -> None:
        """``event`` is ``user``'s, unless it is someone's already (its id comes back in
        every message of its stream)."""
        if event in self.events:
            return
        self.events[event] = user
        newest = self.minted.setdefault(user, deque())
        newest.append(event)
        if len(newest) > MAX_EVENTS:
            self.events.pop(newest.popleft(), None)

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
