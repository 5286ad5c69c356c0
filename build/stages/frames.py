"""Decoded video frames with trustworthy timestamps, for probe and cut.

Annotation times are seconds from the start of playback, while a local file counts time
in integer ticks of its stream's time base from some origin: the container's start
(non-zero for MPEG-PS/TS, earlier than the video's first frame when audio starts first;
see `stream_origin`). Everything that compares a frame with a segment boundary goes through
`to_pts`, so the comparison is done on integers (start rounded up) and never on floats.

`FrameReader` decodes one source once, front to back, for all its segments: it seeks only
over gaps long enough to be worth it, re-seeks earlier when a demuxer without an index
lands past the target, and repairs timestamps that come out of the decoder out of order
(AVI stores no pts, so B-frames get their decode-order times).

An AVI with B-frames keeps the decoder's reorder delay in its timeline: its first frame
comes out labelled one frame late, so frame k is at (k + 1) / fps. That is what every
FFmpeg-based player and ``ffmpeg -ss`` show (PyAV's frame times say the same), and the
timing truth here is the player's: such sources are cut on that timeline, one frame
"early" against the encoder's intent (k / fps), which the file no longer records
(tests/build/stages/test_cut.py, test_avi_with_b_frames_follows_the_players_timeline).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO

import av
import av.container
import av.stream

from splice_build.errors import os_error_words
from splice_build.records import ROUNDING, Step

# When the container's index lists the keyframes (mp4, AVI), seek over a gap whenever a
# keyframe lies more than SEEK_MARGIN_SECONDS past the decoder's position and before the
# next start: everything before that keyframe need not be decoded (a seek costs about as
# much as decoding a few frames). Without such an index, seek only over gaps longer than
# SEEK_GAP_SECONDS: the seek restarts at an unknown earlier keyframe (YouTube places them
# 2-5 s apart), so shorter gaps are cheaper to decode through.
SEEK_MARGIN_SECONDS = 1.0
SEEK_GAP_SECONDS = 4.0
# Decoder threads when the caller gives none (0: as many as FFmpeg likes). Decoding is
# exact whatever the count, so the cutter sizes it to its worker's share of the cores.
DECODER_THREADS = 0
# Frames held back to repair out-of-order timestamps: more than any B-frame reorder depth
# (H.264 allows 16 reference frames, real encoders reorder at most 2-4).
REORDER_WINDOW = 8
# Demuxers whose frames keep their exact timestamps after a seek. MPEG-PS (and raw
# elementary streams) re-derive timestamps from PES packets that do not start on frame
# boundaries: after a seek, frames come out labelled one frame late (measured here on
# MPEG-2 PS), so those sources are decoded straight through their gaps instead.
SEEK_SAFE_FORMATS = frozenset(
    {"mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "avi", "flv", "mpegts", "asf", "ogg"}
)
# Demuxers that load a complete keyframe index when opening (Matroska reads its cues only
# on the first seek, FLV indexes what it has read so far).
FULL_INDEX_FORMATS = frozenset({"mov,mp4,m4a,3gp,3g2,mj2", "avi"})
# How far the first re-seek steps back when a seek overshoots; doubled on each retry.
RESEEK_STEP_SECONDS = 1.0
# Frame rate assumed only for streams that state none at all (one nominal frame for
# repairing timestamps here, the clip rate in cut).
FALLBACK_RATE = Fraction(25)

# Errors a damaged or unsupported source raises while opening, demuxing or decoding.
DECODE_ERRORS = (av.FFmpegError, OSError, EOFError, ValueError)

Frame = tuple[int, av.VideoFrame]  # (pts in the stream's time base, frame)


def open_video(
    source: Path | BinaryIO, threads: int | None = None, format: str | None = None
) -> tuple[av.container.InputContainer, av.stream.Stream]:
    """Open a source (a path, or a clip's bytes with its ``format``) and its real video
    stream (`video_stream`), with ``threads`` decoder threads (default `DECODER_THREADS`).

    Raises ``LookupError`` when the file has no video stream to cut and PyAV's errors when
    it cannot be opened.
    """
    container = av.open(_name(source), mode="r", format=format)
    try:
        index, scanned = video_stream(container, source)
        if scanned:  # the scan read packets: start again from the top, unseeked
            container.close()
            if not isinstance(source, (str, Path)):
                source.seek(0)
            container = av.open(_name(source), mode="r", format=format)
        stream = container.streams[index]
        stream.codec_context.thread_type = "AUTO"  # measured: much faster than the default
        stream.codec_context.thread_count = DECODER_THREADS if threads is None else threads
    except BaseException:
        container.close()
        raise
    return container, stream


def video_stream(
    container: av.container.InputContainer, source: Path | BinaryIO = Path("the file")
) -> tuple[int, bool]:
    """The index of the stream that is the video, and whether packets had to be read to
    tell.

    A file may hold still pictures as video streams beside the real one: cover art and
    Matroska image attachments (the ``attached_pic`` disposition; FFmpeg refuses to seek
    them) and thumbnail tracks of one frame. The video is the longest stream that has a
    decoder and is not such a picture. When there is more than one, the first
    `SCAN_PACKETS` packets tell a still (one packet) from a video, and the header's
    durations (else what those packets cover) which is longest. Raises ``LookupError``
    naming the file when no stream qualifies.
    """
    named = source if isinstance(source, (str, Path)) else "the clip"
    pictures = av.stream.Disposition.attached_pic
    videos = [s for s in container.streams.video if not s.disposition & pictures]
    if not videos:
        still = container.streams.video and " (only a still picture: cover art or a thumbnail)"
        raise LookupError(f"{named} has no video stream{still or ''}")
    decodable = [s for s in videos if s.codec_context is not None]
    if not decodable:
        raise LookupError(f"{named}: no decoder for its video stream")
    moving = [s for s in decodable if s.frames != 1]
    if not moving:
        if len(decodable) == 1:  # the only video, of one frame: what it holds is judged later
            return decodable[0].index, False
        raise LookupError(f"{named} has no video stream (only still pictures of one frame)")
    if len(moving) == 1:
        return moving[0].index, False
    packets, spans = _scan(container, moving)
    stated = {s.index: _header_seconds(s) for s in moving}
    lengths = spans if None in stated.values() else stated
    # The longest of those with more than one frame; on a tie the first, as FFmpeg picks.
    best = max(moving, key=lambda s: (packets[s.index] > 1, lengths[s.index], -s.index))
    return best.index, True


# Packets read to tell the video streams apart when a file has several: a real video has
# many frames within its first few hundred packets, a still picture one.
SCAN_PACKETS = 400


def _header_seconds(stream: av.stream.Stream) -> Fraction | None:
    """The stream's length as its header states it: its duration, or the DURATION tag
    FFmpeg's Matroska muxer writes per track."""
    if stream.duration:
        return stream.duration * Fraction(stream.time_base)
    tag = stream.metadata.get("DURATION", "")
    hours, _, rest = tag.partition(":")
    minutes, _, seconds = rest.partition(":")
    try:
        return (int(hours) * 60 + int(minutes)) * 60 + Fraction(seconds)
    except ValueError:
        return None


def _scan(
    container: av.container.InputContainer, streams: list[av.stream.Stream]
) -> tuple[dict[int, int], dict[int, Fraction]]:
    """Packets of each stream within the file's first `SCAN_PACKETS` packets, and the
    seconds from its first to its last one there (0 for a stream of one packet)."""
    counts = {s.index: 0 for s in streams}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for seen, packet in enumerate(container.demux(streams)):
        if seen >= SCAN_PACKETS:
            break
        index = packet.stream.index
        counts[index] += packet.size > 0  # the demuxer's end-of-stream packets are empty
        stamp = packet.pts if packet.pts is not None else packet.dts
        if stamp is not None:
            first.setdefault(index, stamp)
            last[index] = stamp
    spans = {
        s.index: (last.get(s.index, 0) - first.get(s.index, 0)) * Fraction(s.time_base)
        for s in streams
    }
    return counts, spans


def _name(source: Path | BinaryIO) -> str | BinaryIO:
    return str(source) if isinstance(source, (str, Path)) else source


def error_words(err: BaseException) -> str:
    """What went wrong reading a source, in words for the build report: FFmpeg's own
    description (without its error number or the path it repeats) or, for the file system,
    what the user can check; never an exception's class name or an errno text."""
    if isinstance(err, av.FFmpegError):
        text = (err.strerror or "").strip()
        return f"FFmpeg says: {text[:1].lower()}{text[1:]}" if text else "FFmpeg cannot read it"
    if isinstance(err, OSError):
        return os_error_words(err)
    return str(err) or "it cannot be read"


def stream_origin(container: av.container.InputContainer, stream: av.stream.Stream) -> int:
    """The pts (stream time base) of source time 0: the container's start.

    Annotations count from the start of playback, which is the container's start (the
    earliest stream's first timestamp), not the video stream's own: an mp4 whose video
    starts 2 s after its audio (an empty edit) shows its first frame 2 s into playback, as
    players and ``ffmpeg -ss`` do. MPEG-PS/TS start at an arbitrary clock value; a file
    whose video is its earliest stream starts at its first frame. The container's start is
    in microseconds: when it is the video stream's own start, that exact pts is taken.
    """
    time_base = Fraction(stream.time_base)
    own = stream.start_time
    if container.start_time is None:
        return int(own) if own is not None else 0
    start = Fraction(container.start_time, av.time_base)
    if own is not None and abs(own * time_base - start) <= Fraction(1, av.time_base):
        return int(own)
    return round(start / time_base)


def source_rate(stream: av.stream.Stream) -> Fraction | None:
    """The stream's average frame rate, with sane denominators (30000/1001 survives)."""
    for rate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if rate:
            rate = Fraction(rate).limit_denominator(1001)
            if 0 < rate <= 1000:
                return rate
    return None


def exact_seconds(seconds: float) -> Fraction:
    """A float annotation time as the decimal it was written as (0.04 is 1/25, not more).

    Without this, ``0.04 * 12800`` is 512.0000000001 and rounding up would drop the frame
    that starts exactly at the boundary.
    """
    return Fraction(repr(float(seconds)))


def step_bounds(steps: Sequence[Step]) -> list[tuple[Fraction, Fraction]]:
    """Each step's exact (start, end) in source seconds, adjacent steps sharing one boundary.

    A step that ends within `ROUNDING` of where the next starts touches it (as ingest and
    validate judge): written 2.0000001 and 2.0, the two are float noise of one boundary, and
    as two they would give the frame between them to both clips. The earlier of the two is
    the boundary, so a frame on it opens the later step, as if it had been written exactly.
    Computed over the whole video before its steps are split into lanes.
    """
    bounds = [[exact_seconds(s.start), exact_seconds(s.end)] for s in steps]
    for here, after in zip(bounds, bounds[1:], strict=False):
        if abs(here[1] - after[0]) <= ROUNDING:
            here[1] = after[0] = min(here[1], after[0])
    return [(start, end) for start, end in bounds]


def to_pts(seconds: float, time_base: Fraction, origin: int) -> int:
    """First integer pts at or after a source time: the start of a half-open range."""
    return origin + math.ceil(exact_seconds(seconds) / Fraction(time_base))


def to_seconds(pts: int, time_base: Fraction, origin: int) -> float:
    """Source time of a pts, for records and messages only (never for comparisons)."""
    return float((pts - origin) * Fraction(time_base))


class FrameReader:
    """Frames of one video stream in presentation order, with monotonic integer pts.

    Use `frames_from(start_pts)` once per segment, in chronological order, and hand the
    first frame past a segment's end back with `push_back`, so adjacent segments share
    one pass of the decoder.
    """

    def __init__(
        self,
        container: av.container.InputContainer,
        stream: av.stream.Stream,
        exact_seek: bool = True,
    ):
        """``exact_seek=False`` allows seeking where timestamps may then be off by a frame
        (fine for probing); by default only `SEEK_SAFE_FORMATS` seek."""
        self.container = container
        self.stream = stream
        self.time_base = Fraction(stream.time_base)
        self.origin = stream_origin(container, stream)
        rate = source_rate(stream) or FALLBACK_RATE
        self._tick = max(1, round(1 / (rate * self.time_base)))  # one nominal frame
        self.can_seek = not exact_seek or container.format.name in SEEK_SAFE_FORMATS
        # The thresholds in ticks, read at construction so that tests can lower them.
        self._seek_gap = to_pts(SEEK_GAP_SECONDS, self.time_base, 0)
        self._seek_margin = to_pts(SEEK_MARGIN_SECONDS, self.time_base, 0)
        self._reseek_step = to_pts(RESEEK_STEP_SECONDS, self.time_base, 0)
        self._keyframes = _indexed_keyframes(container, stream)
        self._frames: Iterator[Frame] = self._decode()
        self._held: Frame | None = None
        # Every frame with pts <= _floor is behind the reader; None: nothing read yet.
        self._floor: int | None = None
        self._floor_before: int | None = None
        self.seeks = 0  # how many seeks were made (for tests and benchmarks)

    def push_back(self, item: Frame) -> None:
        """Return the frame just taken so that the next `frames_from` starts with it."""
        self._held = item
        self._floor = self._floor_before

    def frames_from(self, start_pts: int) -> Iterator[Frame]:
        """Frames with pts >= start_pts up to the end of the stream (stop when done)."""
        if self._floor is not None and start_pts <= self._floor:
            # Behind us: only a seek goes back (to the start where seeks are inexact).
            self._seek(start_pts if self.can_seek else self.origin)
        elif self.can_seek and self._far(start_pts):
            self._seek(start_pts)
        while (item := self._next()) is not None:
            if item[0] >= start_pts:
                yield item

    def _far(self, start_pts: int) -> bool:
        """Whether decoding up to start_pts would cost more than seeking to it."""
        ahead: int
        if self._floor is None and self._held is None:  # at the origin
            ahead = self.origin
        else:
            ahead = self._held[0] if self._held is not None else self._floor
        if self._keyframes:
            # The index may list decode times (mp4 with B-frames starts below zero); the
            # margin absorbs that shift.
            at = bisect.bisect_right(self._keyframes, start_pts) - 1
            return at >= 0 and self._keyframes[at] > ahead + self._seek_margin
        return start_pts - ahead > self._seek_gap

    def _seek(self, target: int) -> None:
        """Seek to the last keyframe at or before target, backing off on overshoot."""
        back = 0
        while True:
            seek_to = target - back
            at_origin = seek_to <= self.origin
            self.seeks += 1
            self.container.seek(max(seek_to, self.origin), stream=self.stream, backward=True)
            self._frames = self._decode()
            self._held = None
            item = next(self._frames, None)
            if item is not None and (item[0] <= target or at_origin):
                self._held = item
                self._floor = item[0] - 1
                return
            if item is None and at_origin:
                self._floor = None
                return  # an empty stream: callers see no frames
            # Landed past the target (an index-less demuxer guessed a byte offset, or the
            # data there is gone): step back further and decode forward again.
            back = max(2 * back, self._reseek_step)

    def _next(self) -> Frame | None:
        if self._held is not None:
            item, self._held = self._held, None
        else:
            item = next(self._frames, None)
        if item is not None:
            self._floor_before, self._floor = self._floor, item[0]
        return item

    def _decode(self) -> Iterator[Frame]:
        # The generator must not refer to the reader: a reader <-> generator cycle keeps
        # the decoder's frames alive until a full garbage collection (measured: about
        # 45 MB left behind per video, 400 MB after five videos in one worker).
        return _decode_frames(self.container, self.stream, self.origin, self._tick)


def _decode_frames(
    container: av.container.InputContainer, stream: av.stream.Stream, origin: int, tick: int
) -> Iterator[Frame]:
    """Decoded frames, re-labelled with their window's smallest pending timestamps.

    The decoder emits frames in presentation order; when the container stored no pts
    (AVI) the labels come in decode order. Giving each frame the smallest timestamp
    among the frames held back restores the right labels, and is a no-op for a
    well-formed stream.
    """
    window: deque[av.VideoFrame] = deque()
    stamps: list[int] = []
    last_in: int | None = None
    last_out: int | None = None

    def emit() -> Frame:
        nonlocal last_out
        pts = heapq.heappop(stamps)
        if last_out is not None and pts <= last_out:
            pts = last_out + tick  # duplicate or broken stamp: keep time moving
        last_out = pts
        return pts, window.popleft()

    for packet in container.demux(stream):
        for frame in packet.decode():
            pts = frame.pts if frame.pts is not None else frame.dts
            if pts is None:
                pts = origin if last_in is None else last_in + tick
            last_in = pts
            window.append(frame)
            heapq.heappush(stamps, pts)
            if len(window) > REORDER_WINDOW:
                yield emit()
    while window:
        yield emit()


def _indexed_keyframes(
    container: av.container.InputContainer, stream: av.stream.Stream
) -> list[int]:
    """Keyframe timestamps from the demuxer's index, when it has a full one (mp4, AVI)."""
    if container.format.name not in FULL_INDEX_FORMATS:
        return []
    try:
        keys = sorted(e.timestamp for e in stream.index_entries if e.is_keyframe)
    except (AttributeError, TypeError):
        return []
    return keys if len(keys) >= 2 else []
