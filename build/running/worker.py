"""The per-video work (probe, then cut), the same for every executor.

A task carries only plain values so it pickles to a process pool or a Ray worker; its
result is small (an outcome, not clips), so the driver's memory stays bounded: clips stay
on disk in the work folder until the writer streams them into shards.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

import av

from splice_build.records import CutSettings, CutVideo, SkipVideo, SourceCandidates, VideoEntry
from splice_build.running.report import portable
from splice_build.running.workdir import (
    CheckedCut,
    Lookup,
    WorkDir,
    candidates_stamp,
    work_key,
)
from splice_build.stages import clipcheck, cut, probe
from splice_build.stages.sources import candidates_for, index_sources


@dataclass(frozen=True)
class VideoTask:
    entry: VideoEntry
    videos_dir: Path
    work_root: Path
    settings: CutSettings
    sources: SourceCandidates | None = None  # from the driver's one index of videos_dir


@dataclass(frozen=True)
class Outcome:
    video_id: str
    ok: bool
    num_clips: int = 0
    seconds: float = 0.0  # seconds of clips produced, for progress rates
    stage: str = ""
    reason: str = ""
    key: str = ""  # the work key it was committed under (the writer loads it by this key)
    note: str = ""  # something the report should say although the video made it


def process_video(task: VideoTask, threads: int = 1) -> Outcome:
    """Probe and cut one video into the work folder; any failure skips only this video.

    ``threads`` is this worker's share of the cores (see `thread_budget`); it changes the
    speed of the cut, never its bytes.
    """
    entry = task.entry
    work = WorkDir(task.work_root)
    tmp = None
    try:
        note = ""
        candidates = task.sources or candidates_for(index_sources(task.videos_dir), entry)
        key = ""  # a video with no source is skipped by the probe: no key to compute
        if candidates.paths:
            key = work_key(entry, task.settings, candidates_stamp(task.videos_dir, candidates))
            found = work.lookup(entry.video_id, key)
            if found.video is not None:
                return _ok(found.video, key)
            if found.damage:
                note = f"video {entry.video_id}: work entry damaged ({found.damage}): cut again"
        probed = probe.probe(entry, task.videos_dir, task.settings.tolerance, candidates)
        tmp = work.new_temp_dir(entry.video_id)
        video = cut.cut_video(probed, tmp, task.settings, threads=threads)
        checked = check_clips(video, task.settings.tolerance)
        committed = work.commit(tmp, video, key, checked)
        tmp = None
        return _ok(committed, key, note)
    except SkipVideo as exc:
        return Outcome(entry.video_id, False, stage=exc.stage, reason=_portable(exc.reason, task))
    except Exception as exc:  # one broken video must never stop the build
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(last.filename).name}:{last.lineno}"
        reason = _portable(f"{type(exc).__name__}: {exc} ({where})", task)
        return Outcome(entry.video_id, False, stage="cut", reason=reason)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def reused(task: VideoTask) -> tuple[Outcome, Lookup] | None:
    """The video's outcome and its cut if the work folder holds a whole cut of its key
    (every clip's sha256 verified, as `process_video` does), else None: the driver asks
    this first, so a rerun that has nothing to cut hands no cut to the executor (only its
    final validation's parts).

    Anything else (no source, another key, a damaged entry) is None and goes to a worker,
    whose `process_video` gives the same skip, cut or note as it always did."""
    candidates = task.sources
    if candidates is None or not candidates.paths:
        return None
    try:
        key = work_key(task.entry, task.settings, candidates_stamp(task.videos_dir, candidates))
        found = WorkDir(task.work_root).lookup(task.entry.video_id, key)
    except OSError:
        return None
    return (_ok(found.video, key), found) if found.video is not None else None


def check_clips(video: CutVideo, tolerance: float) -> CheckedCut:
    """Hold every clip to the rule ``splice validate`` applies (``clipcheck``), decoding
    every frame, so that a clip the validator would reject never enters the work folder;
    raises ``SkipVideo("validate", ...)`` naming the step.

    The full decode is done here, in parallel across the workers, once per cut: what it
    returns (the digests of the bytes it decoded) is recorded with the cut, and the build's
    final validation trusts clips of those digests instead of decoding them again."""
    steps = video.entry.steps
    last_end = max(s.end for s in steps)
    digests = []
    for clip in video.clips:
        step = steps[clip.step_index]
        span = f"{step.start:g}-{step.end:g} s"
        where = f"clip of step {clip.step_index + 1} ({step.label!r}, {span})"
        try:
            data = clip.path.read_bytes()
            probed = clipcheck.probe_clip(data, full=True)
        except (av.FFmpegError, ValueError, OSError) as exc:
            raise SkipVideo("validate", f"{where} does not read back: {exc}") from None
        problems = clipcheck.clip_problems(
            probed,
            segment=(step.start, step.end),
            last_end=last_end,
            recorded=clip.duration,
            tolerance=tolerance,
        )
        if problems:
            raise SkipVideo("validate", f"{where} {'; '.join(problems)}")
        digests.append(hashlib.sha256(data).hexdigest())
    return CheckedCut(tuple(digests), tolerance, clipcheck.TOLERANCE_FRAMES)


def thread_budget(workers: int, cores: int | None = None) -> int:
    """Threads per worker: the cores shared evenly, at least one (``--workers`` at or above
    the core count gives single-threaded workers, fewer workers get the spare cores)."""
    cores = cores or os.cpu_count() or 1
    return max(1, cores // max(1, workers))


def _portable(reason: str, task: VideoTask) -> str:
    """Reasons name files by the folder's role (``<videos>/x.mp4``): the report is published
    with the build, must not reveal local paths, and must be the same on every machine."""
    return portable(reason, {"<videos>": task.videos_dir, "<work>": task.work_root})


def _ok(video: CutVideo, key: str, note: str = "") -> Outcome:
    return Outcome(
        video.entry.video_id,
        True,
        num_clips=len(video.clips),
        seconds=sum(c.duration for c in video.clips),
        key=key,
        note=note,
    )
