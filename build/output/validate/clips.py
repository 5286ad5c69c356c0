"""A row's clips judged where the row's part is checked (`parts`), each by
`output.clip_verdict`, the findings named by column.

Checked here, from the row alone: every clip has bytes, is named
``clip_file_name(video_id, label)``, and (in a build's own validation) the row holds as
many clips as its worker checked."""

from __future__ import annotations

from typing import Any

from splice_build.output.clip_verdict import ClipRule, OneClip, VerifiedClip, check_one
from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_dataset import ANSWER, CLIP_DURATIONS, CLIPS, VIDEO_ID, clip_file_name


def check_clips(
    row: dict[str, Any],
    rule: ClipRule,
    imported: tuple[ImportedClip, ...] | None = None,
    checked: tuple[VerifiedClip, ...] | None = None,
) -> tuple[list[tuple[str, str]], int, int]:
    """The (column, what) problems of the row's clips, the clips looked at and how many of
    them were decoded (the rest proven by digest, `clip_verdict.check_one`); those of an
    imported build (``imported``: what the import recorded) are judged against that
    record instead of COIN's segment times, which the release does not give."""
    out: list[tuple[str, str]] = []
    clips = row.get(CLIPS) or []
    if imported is not None and len(imported) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but {MANIFEST} records {len(imported)}"))
    if checked is not None and len(checked) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but its worker checked {len(checked)}"))
        checked = None  # the allowance at the source's end depends on them all: decode each
    vid = row[VIDEO_ID]
    segments = (row.get(ANSWER) or {}).get("segments") or []
    durations = row.get(CLIP_DURATIONS) or []
    ends = [s["end"] for s in segments if s and s.get("end") is not None]
    last_end = max(ends) if ends else 0.0
    verdicts: list[tuple[str, str]] = []  # after the row's own problems, as always
    decoded = 0
    for label, clip in enumerate(clips, start=1):
        col = column(label - 1)
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
        what, was_decoded = check_one(one, rule, checked)
        verdicts += [(col, w) for w in what]
        decoded += was_decoded
    return out + verdicts, len(clips), decoded


def column(k: int) -> str:
    return f"{CLIPS}[{k}]"
