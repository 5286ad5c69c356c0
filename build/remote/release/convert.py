"""One release video's parts made into clips: remuxed when the release's pictures can be
kept as they are, re-encoded by the build's cutter otherwise.

A part is remuxed without re-encoding (audio and container metadata dropped, timestamps
from 0, index first) when its video stream is H.264 yuv420p with an even size and starts
on a keyframe with nothing shown before it, and the remuxed clip decodes frame for frame;
otherwise it is re-encoded by `cut.cut_video` with the build's settings. `import_one` is
the per-video function the executors run (a local process or a Ray worker), so this module
imports only what converting needs.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import av

from splice_build.output.release_manifest import ImportedClip
from splice_build.records import (
    Clip,
    CutSettings,
    CutVideo,
    ProbedVideo,
    Skip,
    SkipVideo,
    SourceInfo,
    Step,
    VideoEntry,
)
from splice_build.remote.release.scan import STAGE, ReleasePart, chronological_parts
from splice_build.stages import cut
from splice_build.stages.clipcheck import STREAM_KEYS, ClipProbe, clip_problems, probe_clip
from splice_build.stages.frames import DECODE_ERRORS, source_rate

LFS_POINTER = b"version https://git-lfs"
REMUX, REENCODE = "remux", "re-encode"
# Past any frame of a part: a re-encoded part's one step ends with its stream.
_WHOLE_PART_END = 1e6


@dataclass(frozen=True)
class ImportedVideo:
    cut: CutVideo  # clips in chronological order
    methods: tuple[str, ...]  # REMUX or REENCODE per chronological clip
    reasons: tuple[str, ...]  # why each re-encoded clip could not be remuxed
    # Each chronological clip as this worker decoded it in full and held it to the clip
    # rule (frames, duration, sha256 of the bytes checked): the import's final validation
    # proves the clips by these, and compares them with the manifest.
    checked: tuple[ImportedClip, ...] = ()

    @property
    def video_id(self) -> str:
        return self.cut.entry.video_id


@dataclass(frozen=True)
class PartStream:
    """What the remux decision needs to know about one part's video stream."""

    source: SourceInfo
    blockers: tuple[str, ...]  # why the packets cannot be copied as they are
    packets: int


@dataclass(frozen=True)
class ImportTask:
    """One video of the release to import: plain values, so it pickles to a worker."""

    video_id: str
    entry: VideoEntry | None  # None: not usable by the annotations' selection (``unusable``)
    unusable: str
    parts: tuple[ReleasePart, ...]
    out_dir: Path
    settings: CutSettings


def import_one(task: ImportTask, threads: int = 1) -> ImportedVideo | Skip:
    """Import one video; a ``Skip`` (not the exception, which does not pickle) otherwise.

    ``threads`` is the worker's share of the cores (the executors' convention), given to
    the cutter for a part it re-encodes: it changes the speed, never the bytes."""
    try:
        if task.entry is None:
            raise SkipVideo(STAGE, task.unusable)
        return import_video(task.entry, task.parts, task.out_dir, task.settings, threads=threads)
    except SkipVideo as skip:
        shutil.rmtree(task.out_dir, ignore_errors=True)
        return Skip(task.video_id, STAGE, skip.reason)


def import_video(
    entry: VideoEntry,
    parts: tuple[ReleasePart, ...],
    out_dir: Path,
    settings: CutSettings,
    *,
    threads: int = 1,
) -> ImportedVideo:
    """One video's parts as clips in ``out_dir`` (chronological), or ``SkipVideo``."""
    ordered = chronological_parts(parts, entry.num_steps)
    for part in ordered:
        check_file(part)
    out_dir.mkdir(parents=True, exist_ok=True)
    clips, methods, reasons, sources, digests = [], [], [], [], []
    for part in ordered:
        info = inspect_part(part)
        sources.append(info.source)
        path = out_dir / cut.clip_name(part.part - 1)
        why = "; ".join(info.blockers)
        if not why:
            remux(part.path, path)
            why, probe, sha = _check_remuxed(path, info.packets)
        if why:
            path.unlink(missing_ok=True)
            made = reencode_part(part, info.source, entry, out_dir, settings, threads=threads)
            path = made.rename(path)
            reasons.append(why)
            probe, sha = _checked(path, part)
        methods.append(REENCODE if why else REMUX)
        clips.append(_clip(part, path, probe))
        digests.append(ImportedClip(probe.frames, probe.duration, sha))
    # A release video has one file per clip; the record's one source is its first part's
    # (nothing downstream reads it: shuffle and write use the entry and the clips).
    cut_video = CutVideo(entry=entry, source=sources[0], clips=tuple(clips))
    return ImportedVideo(cut_video, tuple(methods), tuple(reasons), tuple(digests))


def _clip(part: ReleasePart, path: Path, probe: ClipProbe) -> Clip:
    return Clip(
        step_index=part.part - 1,
        path=path,
        duration=probe.duration,
        num_frames=probe.frames,
        first_time=0.0,
        last_time=probe.duration - probe.frame_duration,
        width=probe.width,
        height=probe.height,
    )


def check_file(part: ReleasePart) -> None:
    """``SkipVideo`` for a part that cannot be a video: empty, or a Git LFS pointer."""
    size = part.path.stat().st_size
    if size == 0:
        raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) is empty (0 bytes)")
    with open(part.path, "rb") as fh:
        head = fh.read(len(LFS_POINTER))
    if head == LFS_POINTER:
        raise SkipVideo(
            STAGE,
            f"part {part.part} ({part.rel}) is a Git LFS pointer, not the video "
            "(fetch the LFS objects)",
        )


def _scrub(message: str, part: ReleasePart) -> str:
    """A reason without local paths: the report and card are the same on every machine."""
    return str(message).replace(str(part.path), part.rel)


def inspect_part(part: ReleasePart) -> PartStream:
    """Open a part and read its video packets (no decoding), or ``SkipVideo``."""
    try:
        container = av.open(str(part.path))
    except DECODE_ERRORS as err:
        reason = _scrub(f"part {part.part} ({part.rel}) does not open: {err}", part)
        raise SkipVideo(STAGE, reason) from None
    with container:
        if not container.streams.video:
            raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) has no video stream")
        stream = container.streams.video[0]
        blockers = _format_blockers(stream.codec_context)
        try:
            count, packet_blockers = _read_packets(container, stream)
        except DECODE_ERRORS as err:
            raise SkipVideo(
                STAGE, _scrub(f"part {part.part} ({part.rel}) does not demux: {err}", part)
            ) from None
        if count == 0:
            raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) has no video frame")
        source = _source_info(part, container, stream)
    found = tuple(dict.fromkeys([*blockers, *packet_blockers]))
    return PartStream(source=source, blockers=found, packets=count)


def _format_blockers(ctx) -> list[str]:
    """What of the stream's format a clip may not have (clipcheck's rule: even H.264)."""
    blockers = []
    if ctx.name != "h264" or str(ctx.format.name if ctx.format else "") != "yuv420p":
        fmt = ctx.format.name if ctx.format else "?"
        blockers.append(f"{ctx.name}/{fmt}, not h264/yuv420p")
    if ctx.width % 2 or ctx.height % 2:
        blockers.append(f"odd size {ctx.width}x{ctx.height}")
    return blockers


def _read_packets(container, stream) -> tuple[int, list[str]]:
    """(video packets, what of their timing stops a copy): a copied clip must start on a
    keyframe and show nothing before it, and every packet needs its timestamps."""
    blockers = []
    count, first_key, min_pts = 0, None, None
    for packet in container.demux(stream):
        if packet.size == 0:
            continue
        if packet.pts is None or packet.dts is None:
            blockers.append("a packet without timestamps")
            break
        if packet.is_discard or packet.is_corrupt:
            blockers.append("discarded or corrupt packets (an edit list or damage)")
            break
        if count == 0:
            if not packet.is_keyframe:
                blockers.append("does not start on a keyframe")
            first_key = packet.pts
        min_pts = packet.pts if min_pts is None else min(min_pts, packet.pts)
        count += 1
    if first_key is not None and min_pts is not None and min_pts < first_key:
        blockers.append("frames shown before its first keyframe")
    return count, blockers


def _source_info(part: ReleasePart, container, stream) -> SourceInfo:
    ctx = stream.codec_context
    rate = source_rate(stream)
    time_base = Fraction(stream.time_base)
    duration = float(stream.duration * time_base) if stream.duration else 0.0
    return SourceInfo(
        path=part.path,
        container=container.format.name,
        codec=ctx.name,
        width=ctx.width,
        height=ctx.height,
        fps=float(rate) if rate else 0.0,
        duration=duration,
        start_time=float((stream.start_time or 0) * time_base),
        has_audio=bool(container.streams.audio),
    )


def remux(src: Path, dst: Path) -> None:
    """Copy the video packets of ``src`` into a fresh mp4: no audio, no metadata beyond the
    muxer's own, the first shown frame at time 0, the index first (+faststart)."""
    with av.open(str(src)) as inp:
        stream = inp.streams.video[0]
        packets = [p for p in inp.demux(stream) if p.size]
        shift = min(p.pts for p in packets)
        with av.open(
            str(dst), "w", format="mp4", container_options={"movflags": "+faststart"}
        ) as out:
            copy = out.add_stream_from_template(stream)
            for key in list(copy.metadata):
                if key not in STREAM_KEYS:
                    del copy.metadata[key]
            for packet in packets:
                packet.pts -= shift
                packet.dts -= shift
                packet.stream = copy
                out.mux(packet)


def reencode_part(
    part: ReleasePart,
    source: SourceInfo,
    entry: VideoEntry,
    out_dir: Path,
    settings: CutSettings,
    *,
    threads: int = 1,
) -> Path:
    """The whole part through the build's cutter: one step from the first frame to the end."""
    step = entry.steps[part.part - 1]
    whole = replace(entry, steps=(Step(step.step_id, step.label, 0.0, _WHOLE_PART_END),))
    work = out_dir / f"reencode{part.part:02d}"
    try:
        result = cut.cut_video(ProbedVideo(whole, source), work, settings, threads=threads)
    except SkipVideo as err:
        reason = _scrub(f"part {part.part} ({part.rel}): {err.reason}", part)
        raise SkipVideo(STAGE, reason) from None
    return result.clips[0].path


def _checked(path: Path, part: ReleasePart) -> tuple[ClipProbe, str]:
    """A re-encoded clip decoded frame by frame and held to the clip rule an imported clip
    is validated by (`imported_clip_problems`): its probe and the sha256 of the bytes
    checked, or ``SkipVideo`` naming the part."""
    data = path.read_bytes()
    try:
        probe = probe_clip(data, full=True)
    except (*DECODE_ERRORS, ValueError) as err:
        raise SkipVideo(
            STAGE, _scrub(f"part {part.part} ({part.rel}) does not decode: {err}", part)
        ) from None
    what = imported_clip_problems(probe)
    if what:
        reason = f"part {part.part} ({part.rel}) re-encoded: {'; '.join(what)}"
        raise SkipVideo(STAGE, _scrub(reason, part))
    return probe, hashlib.sha256(data).hexdigest()


def imported_clip_problems(probe: ClipProbe) -> list[str]:
    """The clip rule (`clipcheck`) as it applies to an imported clip: no segment to last
    (the release's cut times are unknown), its recorded duration its own."""
    return clip_problems(probe, segment=None, last_end=0.0, recorded=None, tolerance=0.0)


def _check_remuxed(path: Path, packets: int) -> tuple[str, ClipProbe | None, str]:
    """(why the remuxed clip is not clean, or "", its probe, and the sha256 of the bytes
    checked): decoded frame by frame and held to `imported_clip_problems`."""
    data = path.read_bytes()
    try:
        probe = probe_clip(data, full=True)
    except (*DECODE_ERRORS, ValueError) as err:
        return f"the remuxed clip does not decode: {err}", None, ""
    if probe.frames != packets:
        return f"{probe.frames} of its {packets} frames decode when remuxed", probe, ""
    return "; ".join(imported_clip_problems(probe)), probe, hashlib.sha256(data).hexdigest()
