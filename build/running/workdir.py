"""The resumable work folder: one finished folder per cut video, committed atomically.

A video's clips are cut into a private temporary folder and renamed into place only once
complete, with a ``cut.json`` naming the key of what was cut and the size and sha256 of
every clip. After an interruption (even SIGKILL) a rerun finds either a complete folder
whose key matches and whose files are what the record says, which it reuses, or
something else, which it redoes; a half-written temporary folder is never read.

The key covers everything the clips depend on: the annotation entry, the cut settings
(their coverage tolerance too: it decides whether the video is cut at all), the cutter version
and the source file, as its size and modification time. Not a hash of its content: on
11,000 sources of tens of MB a hash means reading the whole collection on every run,
resumes included (hundreds of GB), where a stat costs nothing; a replaced or
re-downloaded file, or another ``--videos`` folder, changes size or mtime (``bench/cut.py``
prints both costs). The clips, small and read anyway, are the ones hashed.

A record also says which clips the worker held to the clip rule (`clipcheck`, every frame
decoded) before committing: ``checked`` names the rule's tolerances and seals them with the
key and the clips' digests. The build's final validation trusts a clip of the shards whose
sha256 is one of these (`CheckedCut`) instead of decoding it again; a record without a seal
that matches (hand-edited) is not trusted: it is cut again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from splice_build.records import (
    CutSettings,
    CutVideo,
    SourceCandidates,
    VideoEntry,
    cut_video_from_json,
    to_jsonable,
)

CUT_RECORD = "cut.json"
# Bump when the cutter's output for the same inputs changes, so old work is redone.
# 2: single-threaded x264 in lanes (was 3 frame threads); 3: the display matrix applied,
# a frame gap at a step's start filled with its first frame, clip checksums recorded;
# 4: time from the container's start (a video starting after its audio), full-range
# sources converted to the clips' limited range and clips tagged limited; 5: output slots end
# before the step's exact end (not its end rounded up to a tick: a slot too many on sources
# whose ticks are not a whole number of slots, as tree.avi).
CUTTER_VERSION = 5


def source_stamp(path: Path) -> dict[str, int]:
    """What the work key knows of a source file (see the module docstring for why)."""
    stat = Path(path).stat()
    return {"bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def candidates_stamp(videos_dir: Path, candidates: SourceCandidates) -> list[dict]:
    """The stamps of every candidate file of a video, in the order the probe tries them:
    which one is cut depends on all of them (a broken first one hands over to the next), so
    replacing, adding or removing any of them must change the key.

    A candidate that can no longer be read (its link broken since the folder was indexed)
    is stamped as such, not raised: the probe hands over to the next one, like for a file
    that does not open."""
    stamps: list[dict] = []
    for rel in candidates.paths:
        try:
            stamps.append({"path": rel, **source_stamp(Path(videos_dir) / rel)})
        except OSError:
            stamps.append({"path": rel, "unreadable": True})
    return stamps


def work_key(entry: VideoEntry, settings: CutSettings, source: dict | list[dict]) -> str:
    """What a cut depends on (see the module docstring)."""
    payload = json.dumps(
        {
            "entry": to_jsonable(entry),
            "settings": to_jsonable(settings),
            "source": source,
            "cutter": CUTTER_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def file_digest(path: Path) -> dict[str, object]:
    """Size and sha256 of one file, as a work record keeps them."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"bytes": size, "sha256": digest.hexdigest()}


@dataclass(frozen=True)
class CheckedCut:
    """What the worker proved of a committed cut: each clip (record order, chronological)
    met `clipcheck` at these tolerances, decoded frame by frame, and had this sha256."""

    sha256: tuple[str, ...]
    tolerance: float  # seconds: the coverage tolerance the check allowed
    tolerance_frames: float  # frame durations a clip could differ from its step


def check_seal(key: str, files: dict, tolerance: float, tolerance_frames: float) -> str:
    """The digest binding a check to the cut it was made of: an edit of one recorded sha256
    (or of the rule) without it no longer matches, so the check is not trusted."""
    payload = json.dumps(
        {"key": key, "files": files, "rule": [tolerance, tolerance_frames]}, sort_keys=True
    )
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class Lookup:
    """A committed cut ready for reuse, or None with why it cannot be reused: ``damage``
    is empty when nothing was committed for this key (absent, or made by other inputs),
    and names what is wrong when an entry of this key is not what its record says."""

    video: CutVideo | None
    damage: str = ""
    checked: CheckedCut | None = None  # None: the record does not say its clips were checked


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

    def commit(
        self, tmp: Path, video: CutVideo, key: str, checked: CheckedCut | None = None
    ) -> Lookup:
        """Record the cut (clip paths relative to its folder, with their sizes and
        sha256), then rename into place; return it as a `lookup` of it would. ``checked``
        is what the worker's check found (the digests of the bytes it decoded): a file that
        no longer has them raises."""
        data = to_jsonable(video)
        files = {}
        for i, clip in enumerate(data["clips"]):
            name = Path(clip["path"]).relative_to(tmp).as_posix()
            clip["path"] = name
            files[name] = file_digest(tmp / name)
            if checked is not None and checked.sha256[i] != files[name]["sha256"]:
                raise RuntimeError(f"clip {name} changed after its check")
        data["key"] = key
        data["files"] = files
        if checked is not None:
            rule = (checked.tolerance, checked.tolerance_frames)
            data["checked"] = {
                "tolerance": rule[0],
                "tolerance_frames": rule[1],
                "seal": check_seal(key, files, *rule),
            }
        record = tmp / CUT_RECORD
        record.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        _fsync_dir(tmp)
        final = self.video_dir(video.entry.video_id)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        clips = tuple(replace(c, path=final / c.path.relative_to(tmp)) for c in video.clips)
        return Lookup(replace(video, clips=clips), checked=checked)

    def lookup(self, video_id: str, key: str | None = None) -> Lookup:
        """The committed cut of a video if its record is whole and of this key and every
        clip has its recorded size and sha256."""
        folder = self.video_dir(video_id)
        if not folder.is_dir():
            return Lookup(None)
        try:
            data = json.loads((folder / CUT_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            what = "missing" if isinstance(exc, FileNotFoundError) else "unreadable"
            return Lookup(None, f"{CUT_RECORD} {what}")
        if not isinstance(data, dict):
            return Lookup(None, f"{CUT_RECORD} is not a record")
        if key is not None and data.get("key") != key:
            return Lookup(None)  # cut from other inputs: redone, nothing is damaged
        try:  # a record of another shape (hand-edited) is redone, not trusted
            files = data["files"]
            for clip in data["clips"]:
                name = clip["path"]
                damage = _check_file(os.path.join(folder, name), name, files[name])
                if damage:
                    return Lookup(None, damage)
                clip["path"] = os.path.join(folder, name)
            video = cut_video_from_json(data)
            checked = _checked(data)
        except (KeyError, TypeError, ValueError):
            return Lookup(None, f"{CUT_RECORD} is not a cut record")
        if checked is False:
            return Lookup(None, f"{CUT_RECORD} was edited: its check seal does not match")
        return Lookup(video, checked=checked if isinstance(checked, CheckedCut) else None)

    def clean_temp(self) -> None:
        """Remove temporary folders left by interrupted workers."""
        for tmp in self.videos.glob(".tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)


def _checked(data: dict) -> CheckedCut | bool:
    """The record's check (True: none recorded; False: one whose seal does not match)."""
    check = data.get("checked")
    if check is None:
        return True
    rule = (float(check["tolerance"]), float(check["tolerance_frames"]))
    if check["seal"] != check_seal(data["key"], data["files"], *rule):
        return False
    digests = tuple(str(data["files"][Path(c["path"]).name]["sha256"]) for c in data["clips"])
    return CheckedCut(digests, *rule)


def _check_file(path: str, name: str, recorded: dict) -> str:
    """What is wrong with one recorded clip ``name`` at ``path`` ('' if nothing); names are
    relative."""
    if not isinstance(name, str) or "/" in name or name.startswith("."):
        raise ValueError(f"clip path {name!r}")
    try:
        size = os.stat(path).st_size
    except OSError:
        return f"clip {name} is missing"
    if size != recorded["bytes"]:
        return f"clip {name} is {size} bytes, its record says {recorded['bytes']}"
    try:
        sha256 = file_digest(path)["sha256"]
    except OSError as exc:
        return f"clip {name} does not read: {exc.strerror or exc}"
    return f"clip {name} does not match its recorded sha256" if sha256 != recorded["sha256"] else ""


def _fsync_dir(folder: Path) -> None:
    for path in folder.iterdir():
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
