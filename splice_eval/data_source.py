"""What every ``--data`` (``splice run``, ``score``, ``report``, ``baseline``; the BUILD of
``annotate export``) takes: a built folder, or a Hub dataset id ``ORG/NAME`` (the one rule,
`splice_dataset.is_hub_id`).

The readers of the organiser's side (`builddata`: score, report, baselines, the human
protocol) read Parquet files, so a Hub id becomes the Hub cache's snapshot of just the
configs asked for (`local_build`). ``splice run`` streams a Hub id instead, and only asks
here whether it can (`stream_source`). Either way a Hub that cannot be reached is said at
once, in one line naming the option, before any library retries it: ``HF_HUB_OFFLINE``
set, or the endpoint's host unresolvable or refusing connections (`breaker.unreachable`),
with the dataset not already in the cache. A copy in the cache is used as it is.

A local path is checked before anything reads it (`local_folder`): a file, or a folder
that is not there, is said as such, naming the option; a mistyped path that could also
be a Hub id (``data/x``) is said to be no folder here before what the Hub says of it,
never only "the Hub is offline".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import splice_dataset as schema
from splice_build.errors import UserError
from splice_build.remote.breaker import unreachable

DATA_HELP = "a built SPLICE folder or a Hub dataset id ORG/NAME"
# Seconds the reachability check of the Hub waits for a connection.
REACH_TIMEOUT = 5.0


def local_build(
    data: str | os.PathLike, configs: Sequence[str] | None = None, option: str = "--data"
) -> Path:
    """A build folder to read: ``data`` itself, or the Hub cache's snapshot of its
    ``configs``' shards and card (every file when None), fetched when not there yet."""
    if not schema.is_hub_id(data):
        return local_folder(data, option)
    repo = os.fspath(data)
    patterns = (
        None if configs is None else ["README.md", *(f"{schema.shard_dir(c)}/*" for c in configs)]
    )
    from huggingface_hub import snapshot_download

    cached = _cached(repo, patterns)
    if cached is not None:
        return cached
    check_reachable(repo, _not_here(repo, option))
    try:
        return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=patterns))
    except Exception as exc:  # huggingface_hub's errors: not found, gated, network
        raise UserError(f"{_not_here(repo, option)} {repo}: {_first_line(exc)}") from None


def stream_source(data: str, config: str, option: str = "--data") -> str:
    """What ``splice run`` hands `splice_dataset.load`: a folder as given; a Hub id's
    cached snapshot when it holds ``config``; else the Hub id itself (streamed), once the
    Hub is known to be reachable."""
    if not schema.is_hub_id(data):
        return str(local_folder(data, option))
    cached = _cached(data, ["README.md", f"{schema.shard_dir(config)}/*"])
    if cached is not None and (cached / schema.shard_dir(config)).is_dir():
        return str(cached)
    check_reachable(data, _not_here(data, option))
    return data


def local_folder(data: str | os.PathLike, option: str = "--data") -> Path:
    """``data`` as a folder that is there, or a UserError naming ``option``: a file, or no
    such folder (relative to the working folder, which the message names)."""
    path = Path(data)
    if path.is_dir():
        return path
    if path.exists() or path.is_symlink():
        what = "a file" if path.is_file() else "not a folder (a dangling link or a special file)"
        raise UserError(
            f"{option} {os.fspath(data)}: is {what}; give a built SPLICE folder or a Hub "
            "dataset id ORG/NAME"
        )
    raise UserError(f"{option} {os.fspath(data)}: {_no_folder(path)}")


def _no_folder(path: Path) -> str:
    where = "" if path.is_absolute() else f" in {Path.cwd()}"
    return f"no such folder{where}"


def _not_here(repo: str, option: str) -> str:
    """How a Hub-shaped ``--data`` is named in what the Hub says of it: a mistyped local
    path (``data/x``) looks like a Hub id, so the message first says there is no such
    folder (``check_reachable`` puts the id after the option)."""
    return f"{option} {repo}: {_no_folder(Path(repo))}; as a Hub dataset id,"


def _cached(repo: str, patterns: list[str] | None) -> Path | None:
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            repo, repo_type="dataset", allow_patterns=patterns, local_files_only=True
        )
    except Exception:  # not in the cache (LocalEntryNotFoundError), or an unreadable one
        return None
    return Path(folder)


def check_reachable(
    repo: str, option: str, what: str = "dataset", instead: str = "a built folder"
) -> None:
    """One line, at once, when the Hub cannot be asked for ``repo`` (a ``what``: dataset,
    model) that is not in the Hub cache: every Hub id an option takes is refused alike."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        raise UserError(
            f"{option} {repo}: HF_HUB_OFFLINE is set and the {what} is not in the Hub cache; "
            f"download it once online, or pass {instead}"
        )
    endpoint = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    why = unreachable(endpoint, REACH_TIMEOUT)
    if why:
        raise UserError(
            f"{option} {repo}: the Hub cannot be reached ({why}) and the {what} is not in "
            f"the Hub cache; check the connection, or pass {instead}"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
