"""What a cut clip must be: the one rule the cutter's worker (before it commits a cut) and
``splice validate`` (on a built folder) both apply, so whatever the cutter accepts, the
validator accepts, and a clip that breaks the rule is caught where it is made.

The cutter promises (see ``splice_build.stages.cut``): an H.264 yuv420p mp4 of even size, time
from 0, no metadata beyond the muxer's, no display matrix (the pixels are turned as the
source is displayed), at a constant rate; it lasts its segment within one frame, except
where the source ends first.

One of the clip's own frames is the right tolerance for every source the probe accepts,
however sparse: the cutter's slots start less than a slot after the segment's start and run
to its end, each holding the source frame nearest to it, so the source's actual frame
interval decides which frame fills a slot (up to one interval from the one a player shows
there), never how many slots there are. The probe lets a source end up to the coverage
tolerance before the last step's end, so a clip may fall short of its segment by the part
of it past that point (the source's last frame ends it); and ``clip_durations`` records the
clip as cut (frames / rate), to the rounding of timestamps.

Imports PyAV only: cut workers never load ``datasets``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from splice_build.records import MIN_FPS, MIN_SIDE, ROUNDING
from splice_build.stages.frames import open_video

TOLERANCE_FRAMES = 1.0
# mp4 metadata the muxer writes by itself; anything else could carry source information.
CONTAINER_KEYS = frozenset({"major_brand", "minor_version", "compatible_brands", "encoder"})
STREAM_KEYS = frozenset({"language", "handler_name", "vendor_id", "encoder"})
# A clip is checked on one decoder thread: every caller (a cut worker, a validation
# worker) checks many clips side by side, one per process, so parallelism comes from the
# processes. FFmpeg's automatic count (0) starts a thread per core for every clip and
# measured 2.3x slower on the scale bench's clips and 1.2x on a 448x252 20 s one.
CHECK_THREADS = 1


@dataclass(frozen=True)
class ClipProbe:
    """What decoding one clip learned."""

    duration: float  # last frame time - first frame time + one frame
    first_time: float
    frame_duration: float
    frames: int
    codec: str
    pix_fmt: str
    width: int
    height: int
    extra_metadata: dict[str, str]  # keys outside the muxer's own
    rotation: int = 0  # of a display matrix on the decoded frames (0 when only packets are read)


def probe_clip(data: bytes, *, full: bool = True) -> ClipProbe:
    """Decode a clip from its bytes (all frames if ``full``, else read its packets)."""
    try:
        container, stream = open_video(io.BytesIO(data), threads=CHECK_THREADS, format="mp4")
    except LookupError:
        raise ValueError("no video stream") from None
    with container:
        extra = {k: v for k, v in container.metadata.items() if k not in CONTAINER_KEYS}
        for s in container.streams:
            extra.update(
                {f"stream{s.index}:{k}": v for k, v in s.metadata.items() if k not in STREAM_KEYS}
            )
        tb = stream.time_base
        times: list[float] = []
        rotation = 0
        if full:
            for frame in container.decode(stream):
                if frame.pts is not None:
                    times.append(float(frame.pts * tb))
                rotation = rotation or round(frame.rotation)
        else:
            for packet in container.demux(stream):
                if packet.pts is not None:
                    times.append(float(packet.pts * tb))
        if not times:
            raise ValueError("no frame decodes")
        rate = stream.average_rate or stream.guessed_rate
        if not rate:
            raise ValueError("the video stream has no frame rate")
        frame_duration = 1 / float(rate)
        ctx = stream.codec_context
        return ClipProbe(
            duration=max(times) - min(times) + frame_duration,
            first_time=min(times),
            frame_duration=frame_duration,
            frames=len(times),
            codec=ctx.name,
            pix_fmt=str(ctx.pix_fmt),
            width=ctx.width,
            height=ctx.height,
            extra_metadata=extra,
            rotation=rotation,
        )


def clip_problems(
    probe: ClipProbe,
    *,
    segment: tuple[float, float] | None,
    last_end: float,
    recorded: float | None,
    tolerance: float,
    tolerance_frames: float = TOLERANCE_FRAMES,
) -> list[str]:
    """What is wrong with one probed clip, against its ``segment`` (start, end), the end of
    the video's last segment, the duration ``recorded`` for it and the coverage
    ``tolerance`` the build probed its source with (`CutSettings.tolerance`, seconds)."""
    out = _format_problems(probe)
    if segment is not None:
        out += _segment_problems(probe, segment, last_end, tolerance, tolerance_frames)
    # The cutter records a clip's duration as cut (frames / rate): exact, to rounding.
    if recorded is not None and abs(probe.duration - recorded) > ROUNDING:
        out.append(f"lasts {probe.duration:.4f} s but clip_durations says {recorded:.4f} s")
    return out


def _format_problems(probe: ClipProbe) -> list[str]:
    """What the cutter promises of every clip whatever its segment: codec, size, time
    from 0, no metadata or display matrix, at least the least size and rate."""
    out: list[str] = []
    if probe.codec != "h264" or probe.pix_fmt != "yuv420p":
        out.append(f"is {probe.codec}/{probe.pix_fmt}, not h264/yuv420p")
    if probe.width % 2 or probe.height % 2:
        out.append(f"odd size {probe.width}x{probe.height}")
    if abs(probe.first_time) > ROUNDING:
        out.append(f"first frame at {probe.first_time:.3f} s, not 0: it carries source time")
    if probe.extra_metadata:
        out.append(f"mp4 metadata beyond the muxer's: {probe.extra_metadata}")
    if min(probe.width, probe.height) < MIN_SIDE:
        out.append(f"short side of {probe.width}x{probe.height} is under {MIN_SIDE} px")
    # Too slow to follow; the frame tolerance below would also grow with its long frames.
    if probe.frame_duration > 1 / MIN_FPS + ROUNDING:
        out.append(f"frame rate {1 / probe.frame_duration:.3g} fps is under {MIN_FPS:g} fps")
    if probe.rotation:  # the cutter turns the pixels; a matrix would turn them again
        out.append(f"carries a display matrix (rotation {probe.rotation}): players turn it")
    return out


def _segment_problems(
    probe: ClipProbe,
    segment: tuple[float, float],
    last_end: float,
    tolerance: float,
    tolerance_frames: float,
) -> list[str]:
    """A clip lasts its segment to ``tolerance_frames`` frames, but may lack the part of
    it past where the source may end (``tolerance`` before ``last_end``)."""
    allowed = tolerance_frames * probe.frame_duration + ROUNDING
    start, end = segment
    length = end - start
    # The part of the segment the source may lack (it ends inside the tolerance).
    missing = min(length, max(0.0, end - (last_end - tolerance)))
    if length - missing - allowed <= probe.duration <= length + allowed:
        return []
    short = f", or {missing:.3f} s less where the source may end" if missing else ""
    return [
        f"lasts {probe.duration:.3f} s but its segment lasts {length:.3f} s "
        f"(more than {tolerance_frames:g} frame of {probe.frame_duration:.4f} s{short})"
    ]
