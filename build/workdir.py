"""The resumable work folder: one finished folder per cut video, committed atomically.

A video's clips are cut into a private temporary folder and renamed into place only once
complete, with a ``cut.json`` naming the key of what was cut. After an interruption (even
SIGKILL) a rerun finds either a complete folder whose key matches, which it reuses, or
nothing usable, which it redoes; a half-written temporary folder is never read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import asdict
from pathlib import Path

from .records import CutSettings, CutVideo, VideoEntry, cut_video_from_json, to_jsonable

CUT_RECORD = "cut.json"
# Bump when the cutter's output for the same inputs changes, so old work is redone.
CUTTER_VERSION = 2  # 2: single-threaded x264 in lanes (was 3 frame threads)


def work_key(entry: VideoEntry, settings: CutSettings) -> str:
    """What a cut depends on: the annotation entry, the settings and the cutter version."""
    payload = json.dumps(
        {"entry": to_jsonable(entry), "settings": asdict(settings), "cutter": CUTTER_VERSION},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class WorkDir:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.videos = self.root / "videos"
        self.videos.mkdir(parents=True, exist_ok=True)

    def video_dir(self, video_id: str) -> Path:
        return self.videos / video_id

    def new_temp_dir(self, video_id: str) -> Path:
        """A private folder to cut into; never read unless committed."""
        tmp = self.videos / f".tmp-{video_id}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        return tmp

    def commit(self, tmp: Path, video: CutVideo, key: str) -> CutVideo:
        """Record the cut with clip paths relative to its folder, then rename into place."""
        data = to_jsonable(video)
        for clip in data["clips"]:
            clip["path"] = Path(clip["path"]).relative_to(tmp).as_posix()
        data["key"] = key
        record = tmp / CUT_RECORD
        record.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        _fsync_dir(tmp)
        final = self.video_dir(video.entry.video_id)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        return self.load(video.entry.video_id)

    def load(self, video_id: str, key: str | None = None) -> CutVideo | None:
        """The committed cut of a video, or None if absent, unreadable or of another key."""
        folder = self.video_dir(video_id)
        try:
            data = json.loads((folder / CUT_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or (key is not None and data.get("key") != key):
            return None
        try:  # a record of another shape (hand-edited, older layout) is redone, not trusted
            for clip in data["clips"]:
                clip["path"] = str(folder / clip["path"])
            video = cut_video_from_json(data)
        except (KeyError, TypeError):
            return None
        if not all(c.path.is_file() for c in video.clips):
            return None
        return video

    def clean_temp(self) -> None:
        """Remove temporary folders left by interrupted workers."""
        for tmp in self.videos.glob(".tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)


def _fsync_dir(folder: Path) -> None:
    for path in folder.iterdir():
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
