"""The per-video work (probe, cut, clip check, commit), the same for every executor, and
the driver's one look at the work folder before it (`reuse`).

A task carries only plain values so it pickles to a process pool or a Ray worker; its
result is small (an outcome and the cut's record, not clips), so the driver's memory stays
bounded: clips stay on disk in the work folder until the writer streams them into shards.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import traceback
from dataclasses import dataclass, replace
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


@dataclass(frozen=True)
class VideoTask:
    entry: VideoEntry
    videos_dir: Path
    work_root: Path
    settings: CutSettings
    sources: SourceCandidates  # from the driver's one index of videos_dir
    key: str = ""  # the work key (`reuse`); "" for a video with no source: the probe skips it
    note: str = ""  # what `reuse` found wrong with the work entry of this key, for the report


@dataclass(frozen=True)
class Outcome:
    video_id: str
    ok: bool
    num_clips: int = 0
    seconds: float = 0.0  # seconds of clips produced, for progress rates
    stage: str = ""
    reason: str = ""
    note: str = ""  # something the report should say although the video made it
    cut: Lookup | None = None  # the committed cut (its record: paths, durations, check)


def reuse(task: VideoTask, work: WorkDir) -> Outcome | VideoTask:
    """The driver's one look at the work folder for a video: the outcome of its whole cut
    of this key (every clip's size and sha256 as recorded, its check sealed), or the task
    for a worker, carrying the key and why the entry of this key was not reused (damage:
    a note in the report). A rerun that has nothing to cut hands no cut to the executor
    (only its final validation's parts), and no worker looks again."""
    if not task.sources.paths:
        return task  # the probe skips it, naming what was looked for
    key = work_key(task.entry, task.settings, candidates_stamp(task.videos_dir, task.sources))
    found = work.lookup(task.entry.video_id, key)
    if found.video is not None:
        return _ok(found)
    note = f"video {task.entry.video_id}: work entry damaged ({found.damage}): cut again"
    return replace(task, key=key, note=note if found.damage else "")


def process_video(task: VideoTask, threads: int = 1) -> Outcome:
    """Probe and cut one video into the work folder under ``task.key``, check its clips and
    commit them; any failure skips only this video.

    ``threads`` is this worker's share of the cores (see `thread_budget`); it changes the
    speed of the cut, never its bytes.
    """
    entry = task.entry
    work = WorkDir(task.work_root)
    tmp = None
    try:
        probed = probe.probe(entry, task.videos_dir, task.settings.tolerance, task.sources)
        tmp = work.new_temp_dir(entry.video_id)
        video = cut.cut_video(probed, tmp, task.settings, threads=threads)
        checked = check_clips(video, task.settings.tolerance)
        committed = work.commit(tmp, video, task.key, checked)
        tmp = None
        return _ok(committed, task.note)
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


def _ok(cut: Lookup, note: str = "") -> Outcome:
    video: CutVideo = cut.video
    return Outcome(
        video.entry.video_id,
        True,
        num_clips=len(video.clips),
        seconds=sum(c.duration for c in video.clips),
        note=note,
        cut=cut,
    )
