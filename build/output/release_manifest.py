"""What ``splice import-release`` records about a build whose clips come from the authors'
release instead of being cut from COIN's videos, and the one reader of that record.

A build cut from COIN's videos is checked against COIN's segment times; an imported build
cannot be (the release's clips were cut by the authors, at times nobody published), so
``splice validate`` checks each clip against what the import recorded here instead: its
frame count, duration and sha256. The record is a file of the build folder,
``release_manifest.json``, whose sha256 the card states.

Nothing in it gives the order away: the release's files (whose names hold the
chronological part number) are listed with their sha256 only, sorted by path and not
linked to labels; the clips are listed per video in label order with values that can be
read off the clips themselves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MANIFEST = "release_manifest.json"
ORIGIN = "release"  # the card's ``splice_build.origin`` of an imported build
FORMAT = 1


@dataclass(frozen=True)
class ReleaseFile:
    """One file of the release that went into the build."""

    path: str  # inside the release, e.g. "splice_video_segments/00/<id>_part_1.mp4"
    sha256: str  # (no size: sizes next to clip sizes would hint at which clip is which)


@dataclass(frozen=True)
class ImportedClip:
    """One clip of the build as the import wrote it (label order within its video)."""

    frames: int
    duration: float  # seconds, as `validate.probe_clip` measures it
    sha256: str  # of the embedded mp4 bytes


@dataclass(frozen=True)
class ReleaseManifest:
    repo_id: str  # Hub dataset id, or the local folder's name
    revision: str  # commit of the snapshot, or "local"
    license: str
    files: tuple[ReleaseFile, ...]  # sorted by path
    clips: dict[str, tuple[ImportedClip, ...]]  # video id -> clips in label order

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "origin": ORIGIN,
            "repo_id": self.repo_id,
            "revision": self.revision,
            "license": self.license,
            "files": [asdict(f) for f in self.files],
            "clips": {vid: [asdict(c) for c in clips] for vid, clips in sorted(self.clips.items())},
        }
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> ReleaseManifest:
        data: dict[str, Any] = json.loads(text)
        if data.get("format") != FORMAT or data.get("origin") != ORIGIN:
            raise ValueError(f"not a format-{FORMAT} release manifest")
        return cls(
            repo_id=data["repo_id"],
            revision=data["revision"],
            license=data["license"],
            files=tuple(ReleaseFile(**f) for f in data["files"]),
            clips={
                vid: tuple(ImportedClip(**c) for c in clips) for vid, clips in data["clips"].items()
            },
        )


def read_manifest(build_dir: Path) -> ReleaseManifest | None:
    """The manifest of an imported build, None for a build cut from COIN's videos.

    Raises ValueError naming the file when it exists but cannot be read.
    """
    path = Path(build_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        return ReleaseManifest.from_json(path.read_text("utf-8"))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{MANIFEST}: unreadable ({exc})") from None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = [
    "MANIFEST",
    "ORIGIN",
    "ImportedClip",
    "ReleaseFile",
    "ReleaseManifest",
    "read_manifest",
    "sha256_text",
]
