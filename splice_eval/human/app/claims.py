"""What a request to Gradio's API names (sessions, events, a file) and what a response hands
out (files, a new event): the words of Gradio's routes that ``guard`` binds to the logged-in
user. Read from Gradio's pinned routes (``gradio/routes.py`` of ``app.GRADIO_VERSION``):

- a session hash: ``session_hash`` in the query (``queue/data``, ``deep_link``) or the JSON
  body (``queue/join``, ``cancel``, ``run``/``api``/``call``), and the path of
  ``heartbeat/<session>`` and ``stream/<session>/<run>/<component>/...``;
- an event id: the path of ``stream/<event>[/close]`` and ``call/[v2/]<api>/<event>`` (GET),
  and ``event_id`` in the body of ``cancel``;
- a file: the path after ``file=`` (or the older ``file/``).

Every place is read, whether or not the route uses it: a name the route ignores costs
nothing to bind.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

API = "/gradio_api/"
FILE_ROUTES = ("file=", "file/")
FILE_DATA = "gradio.FileData"
# Routes the page never uses that act on a session named inside a multipart form (server
# functions of components this page has none of): closed rather than parsed.
CLOSED = frozenset({"component_server", "component_server/"})


@dataclass(frozen=True)
class Claims:
    sessions: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    file: Path | None = None
    refused: str | None = None  # why the request is refused whoever sends it


def api_route(path: str, root_path: str = "") -> str | None:
    """The route below ``/gradio_api/`` (``queue/data``), or None for the page's own files."""
    if root_path and path.startswith(root_path):
        path = path[len(root_path) :]
    return path[len(API) :] if path.startswith(API) else None


def request_claims(route: str, method: str, query: str, body: object) -> Claims:
    """The sessions, events and file a request to ``route`` names (``body``: its JSON)."""
    for marker in FILE_ROUTES:
        if route.startswith(marker):
            file = as_file(route[len(marker) :])
            return Claims(file=file) if file else Claims(refused="File not allowed: no file named.")
    if route in CLOSED:
        return Claims(refused="Not allowed: this page has no server functions.")
    sessions = urllib.parse.parse_qs(query, keep_blank_values=True).get("session_hash", [])
    events: list[str] = []
    fields = body if isinstance(body, dict) else {}
    if isinstance(fields.get("session_hash"), str):
        sessions.append(fields["session_hash"])
    parts = route.rstrip("/").split("/")
    if parts[0] == "heartbeat" and len(parts) == 2:
        sessions.append(parts[1])
    elif parts[0] == "stream" and len(parts) >= 4:
        sessions.append(parts[1])
    elif parts[0] == "stream" and len(parts) in (2, 3):
        events.append(parts[1])
    elif parts[0] == "call" and method == "GET" and len(parts) >= 3:
        events.append(parts[-1])
    if parts[0] == "cancel" and isinstance(fields.get("event_id"), str):
        events.append(fields["event_id"])
    return Claims(sessions=tuple(sessions), events=tuple(events))


def as_file(name: str) -> Path | None:
    """The file Gradio would read for ``name`` (relative to the working folder, as Gradio's
    ``utils.abspath``), or None when it names none."""
    try:
        return Path(os.path.abspath(name)).resolve() if name else None
    except (OSError, ValueError):
        return None


def handed_files(payload: object) -> set[Path]:
    """Every file a response's JSON hands the page: the ``path`` of each ``FileData`` and
    the address of each ``/file=`` URL."""
    found: set[Path] = set()
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            meta = item.get("meta")
            if isinstance(meta, dict) and meta.get("_type") == FILE_DATA:
                stack.append(("path", item.get("path")))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, tuple):  # a FileData's path
            if isinstance(item[1], str) and (file := as_file(item[1])) is not None:
                found.add(file)
        elif isinstance(item, str) and "/file=" in item:
            address = urllib.parse.urlsplit(item).path.partition("/file=")[2]
            if (file := as_file(urllib.parse.unquote(address))) is not None:
                found.add(file)
    return found


def minted_event(payload: object) -> str | None:
    """The event id a join answers with (``{"event_id": ...}``)."""
    if isinstance(payload, dict) and isinstance(payload.get("event_id"), str):
        return payload["event_id"]
    return None


def json_or_none(data: bytes) -> object:
    try:
        return json.loads(data)
    except ValueError:  # not JSON (UnicodeDecodeError is one)
        return None
