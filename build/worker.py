"""The per-video work (probe, then cut), the same for every executor.

A task carries only plain values so it pickles to a process pool or a Ray worker; its
result is small (an outcome, not clips), so the driver's memory stays bounded: clips stay
on disk in the work folder until the writer streams them into shards.
"""

from __future__ import annotations

import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import cut, probe
from .records import CutSettings, CutVideo, SkipVideo, VideoEntry
from .report import portable
from .workdir import WorkDir, work_key


@dataclass(frozen=True)
class VideoTask:
    entry: VideoEntry
    videos_dir: Path
    work_root: Path
    settings: CutSettings
    tolerance: float = probe.COVERAGE_TOLERANCE


@dataclass(frozen=True)
class Outcome:
    video_id: str
    ok: bool
    num_clips: int = 0
    seconds: float = 0.0  # seconds of clips produced, for progress rates
    stage: str = ""
    reason: str = ""


def process_video(task: VideoTask, threads: int = 1) -> Outcome:
    """Probe and cut one video into the work folder; any failure skips only this video.

    ``threads`` is this worker's share of the cores (see `thread_budget`); it changes the
    speed of the cut, never its bytes.
    """
    entry = task.entry
    work = WorkDir(task.work_root)
    key = work_key(entry, task.settings)
    done = work.load(entry.video_id, key)
    if done is not None:
        return _ok(done)
    tmp = None
    try:
        probed = probe.probe(entry, task.videos_dir, tolerance=task.tolerance)
        tmp = work.new_temp_dir(entry.video_id)
        video = cut.cut_video(probed, tmp, task.settings, threads=threads)
        committed = work.commit(tmp, video, key)
        tmp = None
        return _ok(committed)
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


def thread_budget(workers: int, cores: int | None = None) -> int:
    """Threads per worker: the cores shared evenly, at least one (``--workers`` at or above
    the core count gives single-threaded workers, fewer workers get the spare cores)."""
    cores = cores or os.cpu_count() or 1
    return max(1, cores // max(1, workers))


def _portable(reason: str, task: VideoTask) -> str:
    """Reasons name files by the folder's role (``<videos>/x.mp4``): the report is published
    with the build, must not reveal local paths, and must be the same on every machine."""
    return portable(reason, {"<videos>": task.videos_dir, "<work>": task.work_root})


def _ok(video: CutVideo) -> Outcome:
    return Outcome(
        video.entry.video_id,
        True,
        num_clips=len(video.clips),
        seconds=sum(c.duration for c in video.clips),
    )
