"""Where the release's files come from: a local folder as it is, or the Hub's snapshot of
``prokajevo/splice-benchmark`` (`download_release`, the import's only network call).

What the import records of the origin (repository id, revision, local or not) is decided
here once, so the card and the manifest say the same."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from splice_build.errors import UserError
from splice_build.remote.release.scan import SEGMENTS_DIR
from splice_dataset import is_hub_id

HUB_REPO = "prokajevo/splice-benchmark"
# What the import downloads: the clips only (the release has no other data file).
ALLOW_PATTERNS = (f"{SEGMENTS_DIR}/*/*.mp4",)
RELEASE_LICENSE = "cc-by-nc-4.0"  # the release card's licence (its Hub page)


@dataclass(frozen=True)
class ReleaseFolder:
    """A release on this machine and what the card and manifest say of its origin."""

    folder: Path  # as given (messages name it so); the Hub cache's is absolute
    repo_id: str  # the Hub id, or a local folder's own name
    revision: str  # the snapshot's commit, else as asked ("unknown" for a local folder)
    local: bool


def download_release(repo_id: str = HUB_REPO, revision: str | None = None) -> Path:
    """The release's clips in the Hub cache (resumable; files already there are reused)."""
    from huggingface_hub import snapshot_download

    return Path(
        snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=list(ALLOW_PATTERNS),
        )
    )


def resolve_source(source: str, revision: str | None) -> ReleaseFolder:
    """SOURCE as a release folder: a folder, or a Hub id to fetch.

    A local folder is named by itself: nothing proves it is a copy of the release."""
    path = Path(source)
    if path.is_dir():
        return ReleaseFolder(path, path.resolve().name, revision or "unknown", True)
    if path.exists():
        raise UserError(f"SOURCE {source}: not a folder")
    if not is_hub_id(source):
        raise UserError(f"SOURCE {source!r}: no such folder, and not a Hub dataset id")
    try:
        folder = download_release(source, revision)
    except (OSError, ValueError) as exc:  # huggingface_hub's errors are OSError/ValueError
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"cannot fetch dataset {source} (revision {revision or 'main'}) from the Hub: {detail}"
        ) from None
    # A snapshot folder is named by the commit it holds: the exact revision imported.
    commit = folder.name if re.fullmatch(r"[0-9a-f]{40}", folder.name) else None
    return ReleaseFolder(folder, source, commit or revision or "main", False)
