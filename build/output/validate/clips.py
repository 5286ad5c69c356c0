"""A row's clips, decoded and held to the rule the cutter's workers apply before they
commit a cut (``splice_build.stages.clipcheck``), or, for a build imported from the
authors' release, to what its manifest recorded of each clip."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import av

from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_build.stages.clipcheck import ROUNDING, ClipProbe, clip_problems, probe_clip
from splice_dataset import ANSWER, CLIP_DURATIONS, CLIPS, VIDEO_ID, clip_file_name


@dataclass(frozen=True)
class ClipRule:
    """How one run of ``splice validate`` holds clips to ``clipcheck``."""

    tolerance: float  # seconds: the coverage tolerance the card says the build probed with
    tolerance_frames: float  # frame durations a clip may differ from its segment
    full: bool  # decode every frame (False: read packets only, ``--quick``)


def check_clips(
    row: dict[str, Any], rule: ClipRule, imported: tuple[ImportedClip, ...] | None = None
) -> list[tuple[str, str]]:
    """(column, what) problems of a row's clips; those of an imported build (``imported``:
    what the import recorded) are checked against that record instead of COIN's segment
    times, which the release does not give."""
    out: list[tuple[str, str]] = []
    clips = row.get(CLIPS) or []
    if imported is not None and len(imported) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but {MANIFEST} records {len(imported)}"))
    vid = row[VIDEO_ID]
    segments = (row.get(ANSWER) or {}).get("segments") or []
    durations = row.get(CLIP_DURATIONS) or []
    ends = [s["end"] for s in segments if s and s.get("end") is not None]
    last_end = max(ends) if ends else 0.0
    for label, clip in enumerate(clips, start=1):
        col = f"{CLIPS}[{label - 1}]"
        if clip is None or not clip.get("bytes"):
            out.append((col, "no embedded bytes"))
            continue
        if clip.get("path") != clip_file_name(vid, label):
            out.append(
                (col, f"file name {clip.get('path')!r} is not {clip_file_name(vid, label)!r}")
            )
        try:
            probe = probe_clip(clip["bytes"], full=rule.full)
        except (av.FFmpegError, ValueError, OSError) as exc:
            out.append((col, f"does not decode: {exc}"))
            continue
        seg = segments[label - 1] if label <= len(segments) and imported is None else None
        what = clip_problems(
            probe,
            segment=(seg["start"], seg["end"]) if seg else None,
            last_end=last_end,
            recorded=durations[label - 1] if label <= len(durations) else None,
            tolerance=rule.tolerance,
            tolerance_frames=rule.tolerance_frames,
        )
        out += [(col, w) for w in what]
        if imported is not None and label <= len(imported):
            out += check_imported(col, clip["bytes"], probe, imported[label - 1])
    return out


def check_imported(
    col: str, data: bytes, probe: ClipProbe, recorded: ImportedClip
) -> list[tuple[str, str]]:
    """(column, what) problems of an imported clip against its manifest entry."""
    out = []
    if hashlib.sha256(data).hexdigest() != recorded.sha256:
        out.append((col, f"bytes differ from the clip {MANIFEST} records"))
    if probe.frames != recorded.frames:
        out.append((col, f"{probe.frames} frames but {MANIFEST} records {recorded.frames}"))
    if abs(probe.duration - recorded.duration) > ROUNDING:
        out.append(
            (col, f"lasts {probe.duration:.3f} s but {MANIFEST} records {recorded.duration:.3f} s")
        )
    return out
