"""A row's clips made into the task that judges them (`output.clip_verdict`), and the
task's findings named by column (both where the row's part is checked, `parts`).

Checked here, from the row alone: every clip has bytes, is named
``clip_file_name(video_id, label)``, and (in a build's own validation) the row holds as
many clips as its worker checked."""

from __future__ import annotations

from typing import Any

from splice_build.output.clip_verdict import (
    ClipResult,
    ClipRule,
    ClipTask,
    OneClip,
    VerifiedClip,
)
from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_dataset import ANSWER, CLIP_DURATIONS, CLIPS, VIDEO_ID, clip_file_name


def clip_task(
    index: int,
    row: dict[str, Any],
    rule: ClipRule,
    imported: tuple[ImportedClip, ...] | None = None,
    checked: tuple[VerifiedClip, ...] | None = None,
) -> tuple[list[tuple[str, str]], ClipTask]:
    """(column, what) problems seen in the row itself, and the task for its clips; those
    of an imported build (``imported``: what the import recorded) are judged against that
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
    judged: list[OneClip | None] = []
    for label, clip in enumerate(clips, start=1):
        col = column(label - 1)
        if clip is None or not clip.get("bytes"):
            out.append((col, "no embedded bytes"))
            judged.append(None)
            continue
        if clip.get("path") != clip_file_name(vid, label):
            out.append(
                (col, f"file name {clip.get('path')!r} is not {clip_file_name(vid, label)!r}")
            )
        seg = segments[label - 1] if label <= len(segments) and imported is None else None
        judged.append(
            OneClip(
                data=clip["bytes"],
                segment=(seg.get("start"), seg.get("end")) if seg else None,
                recorded=durations[label - 1] if label <= len(durations) else None,
                last_end=last_end,
                imported=imported[label - 1] if imported and label <= len(imported) else None,
            )
        )
    return out, ClipTask(index, tuple(judged), rule, checked)


def column(k: int) -> str:
    return f"{CLIPS}[{k}]"


def named(result: ClipResult) -> list[tuple[str, str]]:
    """A task's findings as (column, what)."""
    return [(column(k), what) for k, what in result.problems]
