"""A row's clips, held to the rule the cutter's workers apply before they commit a cut
(``splice_build.stages.clipcheck``), or, for a build imported from the authors' release, to
what its manifest recorded of each clip.

A clip whose bytes, segment and duration are those its worker checked (``VerifiedClips``,
handed over by the build) is proven by its sha256; any other is decoded frame by frame,
unless the rule says not to decode (``--quick``: names, bytes and digests only). The work
is one `ClipTask` per row, run by `check_clip_task` in whatever process the executor
chooses, so a standalone ``splice validate`` decodes on every worker."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import av

from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_build.output.validate.verified import VerifiedClip
from splice_build.stages.clipcheck import ROUNDING, ClipProbe, clip_problems, probe_clip
from splice_dataset import ANSWER, CLIP_DURATIONS, CLIPS, VIDEO_ID, clip_file_name


@dataclass(frozen=True)
class ClipRule:
    """How one run of ``splice validate`` holds clips to ``clipcheck``."""

    tolerance: float  # seconds: the coverage tolerance the card says the build probed with
    tolerance_frames: float  # frame durations a clip may differ from its segment
    decode: bool = True  # decode every clip not proven by digest (False: ``--quick``)


@dataclass(frozen=True)
class ClipTask:
    """One row's clips to check, with what they are checked against (picklable)."""

    index: int  # the row's place in the full config, for putting problems back in order
    row: dict[str, Any]  # video_id, clips, answer.segments, clip_durations
    rule: ClipRule
    imported: tuple[ImportedClip, ...] | None = None  # an import's manifest record
    checked: tuple[VerifiedClip, ...] | None = None  # what the build's worker checked of it


@dataclass(frozen=True)
class ClipResult:
    index: int
    problems: tuple[tuple[str, str], ...]  # (column, what)
    clips: int  # clips looked at
    decoded: int  # of which decoded (the rest proven by digest)


def clip_task(
    index: int,
    row: dict[str, Any],
    rule: ClipRule,
    imported: tuple[ImportedClip, ...] | None = None,
    checked: tuple[VerifiedClip, ...] | None = None,
) -> ClipTask:
    """A task holding only the columns the clip checks read."""
    answer = row.get(ANSWER) or {}
    slim = {
        VIDEO_ID: row.get(VIDEO_ID),
        CLIPS: row.get(CLIPS),
        CLIP_DURATIONS: row.get(CLIP_DURATIONS),
        ANSWER: {"segments": answer.get("segments")},
    }
    return ClipTask(index, slim, rule, imported, checked)


def check_clip_task(task: ClipTask, threads: int = 1) -> ClipResult:
    """The executors' form of `check_clips` (``threads`` unused: one decode per clip)."""
    found, decoded = check_clips(task.row, task.rule, task.imported, task.checked)
    return ClipResult(task.index, tuple(found), len(task.row.get(CLIPS) or []), decoded)


def check_clips(
    row: dict[str, Any],
    rule: ClipRule,
    imported: tuple[ImportedClip, ...] | None = None,
    checked: tuple[VerifiedClip, ...] | None = None,
) -> tuple[list[tuple[str, str]], int]:
    """(column, what) problems of a row's clips, and how many were decoded; those of an
    imported build (``imported``: what the import recorded) are checked against that record
    instead of COIN's segment times, which the release does not give.

    ``checked``: the clips the build's worker checked for this video (None: it has no such
    record). A clip that is not one of them is a problem by itself (the writer embeds the
    work folder's bytes verbatim, so it can only be damage or a swap) and is decoded too."""
    out: list[tuple[str, str]] = []
    clips = row.get(CLIPS) or []
    if imported is not None and len(imported) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but {MANIFEST} records {len(imported)}"))
    vid = row[VIDEO_ID]
    segments = (row.get(ANSWER) or {}).get("segments") or []
    durations = row.get(CLIP_DURATIONS) or []
    ends = [s["end"] for s in segments if s and s.get("end") is not None]
    last_end = max(ends) if ends else 0.0
    if checked is not None and len(checked) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but its worker checked {len(checked)}"))
        checked = None  # the allowance at the source's end depends on them all
    decoded = 0
    for label, clip in enumerate(clips, start=1):
        col = f"{CLIPS}[{label - 1}]"
        if clip is None or not clip.get("bytes"):
            out.append((col, "no embedded bytes"))
            continue
        if clip.get("path") != clip_file_name(vid, label):
            out.append(
                (col, f"file name {clip.get('path')!r} is not {clip_file_name(vid, label)!r}")
            )
        seg = segments[label - 1] if label <= len(segments) and imported is None else None
        one = OneClip(
            data=clip["bytes"],
            segment=(seg.get("start"), seg.get("end")) if seg else None,
            recorded=durations[label - 1] if label <= len(durations) else None,
            last_end=last_end,
            imported=imported[label - 1] if imported and label <= len(imported) else None,
        )
        found, was_decoded = check_one(one, rule, checked)
        out += [(col, w) for w in found]
        decoded += was_decoded
    return out, decoded


@dataclass(frozen=True)
class OneClip:
    """One clip's bytes and what its row says of it."""

    data: bytes
    segment: tuple[float, float] | None  # None: an imported clip (no segment times)
    recorded: float | None  # its clip_durations entry
    last_end: float  # end of the row's last segment
    imported: ImportedClip | None = None  # the import's manifest record of it


def check_one(
    clip: OneClip, rule: ClipRule, checked: tuple[VerifiedClip, ...] | None = None
) -> tuple[list[str], bool]:
    """What is wrong with one clip, and whether it was decoded: not when it is the very
    bytes its worker decoded and checked, for this segment and duration, nor under
    ``--quick`` (then only the digests are compared)."""
    sha = hashlib.sha256(clip.data).hexdigest()
    found = []
    if checked is not None:
        seen = VerifiedClip(sha, clip.segment or (None, None), clip.recorded)
        if seen in checked:
            return [], False
        found.append("bytes, segment or duration differ from every clip its worker checked")
    record = clip.imported
    if not rule.decode:
        if record is not None and sha != record.sha256:
            found.append(f"bytes differ from the clip {MANIFEST} records")
        return found, False
    try:
        probe = probe_clip(clip.data, full=True)
    except (av.FFmpegError, ValueError, OSError) as exc:
        return [*found, f"does not decode: {exc}"], True
    found += clip_problems(
        probe,
        segment=clip.segment,
        last_end=clip.last_end,
        recorded=clip.recorded,
        tolerance=rule.tolerance,
        tolerance_frames=rule.tolerance_frames,
    )
    if record is not None:
        found += check_imported(sha, probe, record)
    return found, True


def check_imported(sha256: str, probe: ClipProbe, recorded: ImportedClip) -> list[str]:
    """What is wrong with an imported clip against its manifest entry."""
    out = []
    if sha256 != recorded.sha256:
        out.append(f"bytes differ from the clip {MANIFEST} records")
    if probe.frames != recorded.frames:
        out.append(f"{probe.frames} frames but {MANIFEST} records {recorded.frames}")
    if abs(probe.duration - recorded.duration) > ROUNDING:
        out.append(f"lasts {probe.duration:.3f} s but {MANIFEST} records {recorded.duration:.3f} s")
    return out
