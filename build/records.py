"""Typed records passed between the pipeline's stages.

Each stage takes the previous stage's record and returns the next one; nothing else
crosses a stage boundary. Records are frozen so a stage cannot change what an earlier one
decided, and they hold plain values so they pickle to worker processes (and Ray tasks)
and serialise to the work folder's JSON for resumable builds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Step:
    """One annotated step: a segment of the source video, in seconds."""

    # the source's own integer step id (COIN's taxonomy "Action Id", CrossTask's task-card
    # step number, HT-Step's global_step_index, YouCook2's annotation id), else
    # `sources.base.stable_step_id`
    step_id: int
    label: str  # the step's caption, the one models see in video_text/text
    start: float
    end: float


@dataclass(frozen=True)
class VideoEntry:
    """One validated annotation entry of any source (ingest's output, `splice_build.sources`)."""

    video_id: str
    task: str  # the source's task (COIN: current task name, 2019 aliases resolved)
    domain: str  # the source's domain, else the source's named default
    recipe_type: int | None  # COIN's taxonomy "Target Id"; None for every other source
    subset: str | None  # COIN's official "training" / "testing"; None for every other source
    duration: float
    video_url: str
    steps: tuple[Step, ...]  # chronological, validated non-overlapping

    @property
    def num_steps(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class Skip:
    """Why a video is not in the build: the stage that dropped it and a readable reason."""

    video_id: str
    stage: str  # "ingest", "select", "probe", "cut", ...
    reason: str


class SkipVideo(Exception):
    """Raised by a per-video stage to drop that one video; the build goes on."""

    def __init__(self, stage: str, reason: str):
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


@dataclass(frozen=True)
class SourceInfo:
    """What probing learned about a local source video."""

    path: Path
    container: str  # demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "mpeg", "avi"
    codec: str
    width: int
    height: int
    fps: float  # average frame rate
    duration: float  # seconds covered by the video stream
    start_time: float  # where playback starts (the container's start), s on the video clock
    has_audio: bool
    # Quarter turns counterclockwise a player gives the stored picture (the display matrix
    # of phone videos: 3 for a phone held upright); width and height are the stored ones.
    rotation: int = 0


@dataclass(frozen=True)
class SourceCandidates:
    """The files that may hold one video's source, from the build's one walk of the videos
    folder (`sources.index_sources`): what the probe tries, in order, and what it tells the
    user when there is nothing to try."""

    video_id: str
    paths: tuple[str, ...]  # POSIX paths relative to the videos folder, preferred first
    files: int  # files the walk saw in the whole folder
    folders: int  # folders it walked, the videos folder included
    partial: tuple[str, ...] = ()  # this video's partial downloads, never candidates
    # Files named for this video that cannot be read (a dangling link, no permission), each
    # with why in words: never candidates, said when nothing else will do.
    unreadable: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceIndex:
    """Every source file of a videos folder by video id, from one walk of it."""

    root: Path
    by_id: dict[str, tuple[str, ...]]  # video id -> relative paths, preferred first
    partial: dict[str, tuple[str, ...]]  # video id -> its partial downloads
    files: int
    folders: int
    unreadable: dict[str, tuple[str, ...]] = field(default_factory=dict)  # id -> files, why
    misnamed: tuple[str, ...] = ()  # names that are not UTF-8 (skipped), bytes spelled out

    def lookup(self, video_id: str) -> SourceCandidates:
        return SourceCandidates(
            video_id,
            self.by_id.get(video_id, ()),
            self.files,
            self.folders,
            self.partial.get(video_id, ()),
            self.unreadable.get(video_id, ()),
        )


@dataclass(frozen=True)
class ProbedVideo:
    entry: VideoEntry
    source: SourceInfo


# Least a clip may be: 16 px on its short side (one H.264 macroblock; below it nothing is
# recognisable), and 1 frame per second (COIN's segments are whole seconds, at least 1 s, so
# every step keeps a frame and no frame outlasts its step). `splice build` refuses options
# below them, the probe refuses sources below them, `splice validate` rejects such clips.
MIN_SIDE = 16
MIN_FPS = 1.0

# Seconds a source may fall short of its last step's end: COIN marks most times in whole
# seconds, so a segment ending up to a second after the file's last frame is still whole
# (`CutSettings.tolerance`'s default, the build's ``--tolerance``).
COVERAGE_TOLERANCE = 1.0

# Seconds of float rounding in step boundaries and timestamps: JSON written by other tools
# holds 2.9000000000000004 where 2.9 was meant. Two steps touch when one ends within it of
# where the next starts. THE tolerance of every comparison of step boundaries (ingest's
# overlap and order checks, validate's segments) and of clip timestamps (clipcheck).
ROUNDING = 1e-4


def _paper_short_side() -> int:
    from splice_dataset import CLIP_SHORT_SIDE

    return CLIP_SHORT_SIDE


@dataclass(frozen=True)
class CutSettings:
    """Which sources are cut and how their clips are encoded: the probe's coverage rule and
    the encoder's settings. Part of the build's identity (changing any of it redoes the cut)."""

    # Cap on the clips' SHORT side, never upscaled (`splice_dataset.CLIP_SHORT_SIDE`; the
    # paper's 448 is the LONG side of the frames models see). Read lazily: the schema
    # module imports `datasets` (about 150 MB), which cut workers never need.
    short_side: int = field(default_factory=_paper_short_side)
    fps: float | None = None  # None keeps the source frame rate
    crf: int = 23
    preset: str = "veryfast"
    audio: bool = False
    # Coverage tolerance, in seconds: how far a source may end before its last step's end
    # and still be cut (the probe's rule); a clip of a step past that point may be short by
    # the part the source lacks (the clip rule, `clipcheck`). The card records it for
    # `splice validate` as ``splice_build.tolerance``.
    tolerance: float = COVERAGE_TOLERANCE

    def encoding(self) -> dict[str, Any]:
        """The encoder's settings alone, as the card and the reports list "cut settings"
        (the tolerance has an entry of its own there, absent from imports, which probe
        nothing)."""
        return {k: v for k, v in asdict(self).items() if k != "tolerance"}


@dataclass(frozen=True)
class Clip:
    """One cut clip on disk, in chronological step order (step_index 0 is the first step)."""

    step_index: int
    path: Path
    duration: float  # seconds of the encoded clip
    num_frames: int
    first_time: float  # source time (s, from the container's start) of the first frame kept
    last_time: float  # source time of the last frame kept
    width: int
    height: int


@dataclass(frozen=True)
class CutVideo:
    entry: VideoEntry
    source: SourceInfo
    clips: tuple[Clip, ...]  # chronological


@dataclass(frozen=True)
class ShuffledVideo:
    """Clips in shuffled (label) order: ``clips[k - 1]`` is "Video k" of the prompts."""

    entry: VideoEntry
    clips: tuple[Clip, ...]
    steps: tuple[Step, ...]  # aligned with clips (label order)
    order: tuple[int, ...]  # chronological sequence of labels: the metric's reference


@dataclass(frozen=True)
class DownloadOutcome:
    """What `splice download` did for one selected video (a row of download_report.json)."""

    video_id: str
    recipe_type: int
    # "downloaded", "present" (already there and whole), "unavailable" (the source says so:
    # not retried), "failed" (transient errors on every attempt) or "not-tried" (the run
    # stopped before it: no network, Ctrl-C; a rerun tries it)
    status: str
    # unavailable: removed, private, age-restricted, geo-blocked, copyright, other;
    # failed: network, timeout, incomplete, throttled, server, local (this machine: disk, ...)
    category: str = ""
    reason: str = ""
    file: str = ""  # POSIX path relative to the output folder
    format: str = ""  # the format taken, as yt-dlp describes it
    bytes: int = 0
    attempts: int = 0
    url: str = ""  # without user info or query (a mirror's token stays private)


def to_jsonable(record: Any) -> Any:
    """A record as JSON-ready data: a record's fields in order as `dataclasses.asdict` gives
    them (without its deep copies: a rerun computes one per video for its work key), tuples
    as lists, Paths as strings."""
    if is_dataclass(record) and not isinstance(record, type):
        return {f.name: to_jsonable(getattr(record, f.name)) for f in fields(record)}
    if isinstance(record, Path):
        return str(record)
    if isinstance(record, dict):
        return {k: to_jsonable(v) for k, v in record.items()}
    if isinstance(record, list | tuple):
        return [to_jsonable(v) for v in record]
    return record


def entry_from_json(data: dict[str, Any]) -> VideoEntry:
    return VideoEntry(**{**data, "steps": tuple(Step(**s) for s in data["steps"])})


def cut_video_from_json(data: dict[str, Any]) -> CutVideo:
    return CutVideo(
        entry=entry_from_json(data["entry"]),
        source=SourceInfo(**{**data["source"], "path": Path(data["source"]["path"])}),
        clips=tuple(Clip(**{**c, "path": Path(c["path"])}) for c in data["clips"]),
    )


__all__ = [
    "COVERAGE_TOLERANCE",
    "ROUNDING",
    "Clip",
    "CutSettings",
    "CutVideo",
    "DownloadOutcome",
    "ProbedVideo",
    "ShuffledVideo",
    "Skip",
    "SkipVideo",
    "SourceCandidates",
    "SourceIndex",
    "SourceInfo",
    "Step",
    "VideoEntry",
    "cut_video_from_json",
    "entry_from_json",
    "to_jsonable",
]
