"""Stage 3, probe: open a video's local source (found by `sources`) and make sure it can be cut.

A source that is missing, empty, not a video, audio only, damaged or too short for its
last annotated step is skipped here with a reason that names the file, so that the cut
stage only ever sees sources that decode. Coverage is checked by decoding a frame near the
last step's end, not by trusting the header: a truncated download keeps its full-length
header but has no frames at the end.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import av.container
import av.stream

from splice_build.errors import os_error_words
from splice_build.records import (
    COVERAGE_TOLERANCE,
    MIN_FPS,
    MIN_SIDE,
    ProbedVideo,
    SkipVideo,
    SourceCandidates,
    SourceInfo,
    VideoEntry,
)
from splice_build.stages.frames import (
    DECODE_ERRORS,
    FrameReader,
    error_words,
    open_video,
    source_rate,
    to_pts,
    to_seconds,
)
from splice_build.stages.sources import candidates_for, index_sources, not_found_reason


def probe(
    entry: VideoEntry,
    videos_dir: Path,
    tolerance: float = COVERAGE_TOLERANCE,
    candidates: SourceCandidates | None = None,
) -> ProbedVideo:
    """Check that the source of one entry opens and covers its last step, to within
    ``tolerance`` seconds (`CutSettings.tolerance`).

    ``candidates`` come from the build's one index of the folder (without them the folder is
    walked here). They are tried in order: a broken ``<id>.mp4`` left by a failed merge must
    not hide a good ``<id>.webm``. Raises ``SkipVideo("probe", reason)`` when none will do.
    """
    videos_dir = Path(videos_dir)
    if candidates is None:
        candidates = candidates_for(index_sources(videos_dir), entry)
    if not candidates.paths:
        raise SkipVideo("probe", not_found_reason(candidates))
    failures: list[SkipVideo] = []
    for rel in candidates.paths:
        try:
            return _probe_path(entry, videos_dir / rel, tolerance)
        except SkipVideo as skip:
            failures.append(skip)
    if len(failures) == 1:
        raise failures[0]
    tried = "; ".join(f.reason for f in failures)  # each names its file
    raise SkipVideo("probe", f"none of the {len(failures)} source files opens: {tried}")


def _probe_path(entry: VideoEntry, path: Path, tolerance: float) -> ProbedVideo:
    try:
        size = path.stat().st_size
    except OSError as err:  # gone or unreadable since the folder was indexed
        raise SkipVideo("probe", f"source video {path}: {os_error_words(err)}") from None
    if size == 0:
        raise SkipVideo("probe", f"source video {path} is empty (0 bytes)")
    try:
        container, stream = open_video(path)
    except LookupError as err:
        audio = _audio_only(path)
        raise SkipVideo("probe", f"{err}{' (audio only)' if audio else ''}") from None
    except DECODE_ERRORS as err:
        raise SkipVideo("probe", f"cannot open {path} as a video: {error_words(err)}") from None
    with container:
        reader = FrameReader(container, stream, exact_seek=False)  # any frame will do
        time_base = reader.time_base
        header_duration = _header_duration(container, stream, reader.origin)
        last_end = entry.steps[-1].end if entry.steps else 0.0
        needed = max(0.0, last_end - tolerance)
        # Decoding decides, not the header: MPEG-PS/TS headers estimate the duration from
        # the bitrate and mp4 edit lists can understate it.
        try:
            found = next(reader.frames_from(to_pts(needed, time_base, reader.origin)), None)
        except DECODE_ERRORS as err:
            raise SkipVideo("probe", f"cannot decode {path}: {error_words(err)}") from None
        if found is None:
            if header_duration is not None and header_duration < needed:
                raise SkipVideo(
                    "probe",
                    f"source video {path} is {header_duration:.2f} s long but the last step "
                    f"of {entry.video_id} ends at {last_end:.2f} s (tolerance {tolerance:g} s)",
                )
            said = f"its header says {header_duration:.2f} s but " if header_duration else ""
            raise SkipVideo(
                "probe",
                f"source video {path} is truncated or damaged: {said}no frame at or after "
                f"{needed:.2f} s decodes (the last step of {entry.video_id} ends at "
                f"{last_end:.2f} s)",
            )
        pts, frame = found
        reached = to_seconds(pts, time_base, reader.origin)
        rate = source_rate(stream)
        _check_least(path, frame.width, frame.height, rate)
        info = SourceInfo(
            path=path,
            container=container.format.name,
            codec=stream.codec_context.name,
            width=frame.width,
            height=frame.height,
            fps=float(rate) if rate else 0.0,
            duration=max(header_duration or 0.0, reached),
            start_time=to_seconds(reader.origin, time_base, 0),
            has_audio=bool(container.streams.audio),
            rotation=quarter_turns(frame.rotation),
        )
    return ProbedVideo(entry=entry, source=info)


def quarter_turns(degrees: float) -> int:
    """A display matrix's rotation (FFmpeg's counterclockwise degrees, -180..180) as
    quarter turns 0..3; phones only write multiples of 90, others round to the nearest."""
    return round(degrees / 90) % 4


def _check_least(path: Path, width: int, height: int, rate: Fraction | None) -> None:
    """Refuse a source whose clips could only be below the least a clip may be (the cutter
    never upscales nor raises the frame rate), which `splice validate` would reject."""
    if min(width, height) < MIN_SIDE:
        raise SkipVideo(
            "probe", f"source video {path} is {width}x{height}: under {MIN_SIDE} px on a side"
        )
    if rate and rate < MIN_FPS:
        raise SkipVideo(
            "probe",
            f"source video {path} has {float(rate):.3g} frames per second, under {MIN_FPS:g}",
        )


def _header_duration(
    container: av.container.InputContainer, stream: av.stream.Stream, origin: int
) -> float | None:
    """Where the header says the video stream ends, in seconds from ``origin`` (None when
    it does not say): a video that starts late ends late by as much."""
    time_base = Fraction(stream.time_base)
    if stream.duration:
        begins = stream.start_time if stream.start_time is not None else origin
        return float((begins - origin + stream.duration) * time_base)
    if container.duration:
        container_start = Fraction(container.start_time or 0, av.time_base)
        ends = container_start + Fraction(container.duration, av.time_base)
        return float(ends - origin * time_base)
    return None


def _audio_only(path: Path) -> bool:
    try:
        with av.open(str(path)) as container:
            return bool(container.streams.audio)
    except DECODE_ERRORS:
        return False
