"""Stage 4, cut: one frame-exact H.264 clip per annotated step, from one decode pass.

Exactness rule (the issue's): a clip starts with the first source frame at or after its
step's start and holds no frame at or after its end; a step ending within ``ROUNDING`` of
where the next starts shares that one boundary (`frames.step_bounds`). Boundaries are
compared in pts as exact fractions (the start rounded up to a whole pts), never as float
seconds; so are the output slots, which end before the step's exact end even where they
fall between source ticks.

Output timing: clips are constant frame rate at the source's average rate (or the
requested ``fps``, never above the source's), with timestamps from 0. Each output slot k
at ``first + k / rate`` shows the source frame of the step nearest to it, so a constant
frame rate source maps one to one, a variable frame rate source is evened out (frames
repeated over its pauses, bursts thinned, a pause over the step's start filled with the
step's first frame), and slot 0 is always the step's first frame. A clip's duration is
therefore ``num_frames / rate``, within one frame of its segment whatever the source's frame
spacing (a sparse source at a nominal 15 fps whose frames come 0.4 s apart gets 15 fps clips
with each frame held), except where the source ends first (inside the probe's tolerance):
then its last frame is held for its actual frame interval and the clip ends there.
``splice_build.stages.clipcheck`` holds these promises; the worker checks every clip against
them before committing it, and ``splice validate`` checks the built folder the same way.

Each frame is decoded once: a video's steps are split into at most two lanes of
consecutive steps, each with its own decoder passing once over its steps (seeking over
gaps), run together when the worker has two cores to itself and in turn otherwise, with
the same bytes out either way (see `LANES`).

Memory stays bounded: frames stream from each lane's decoder through the scaler into the
encoder; at most the decoder's reorder window is held.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.reformatter import ColorRange, VideoReformatter

from splice_build.atomic import atomic_path
from splice_build.records import Clip, CutSettings, CutVideo, ProbedVideo, SkipVideo, Step
from splice_build.stages.frames import (
    DECODE_ERRORS,
    FALLBACK_RATE,
    Frame,
    FrameReader,
    exact_seconds,
    open_video,
    source_rate,
    step_bounds,
    to_seconds,
)

OUTPUT_PIX_FMT = "yuv420p"
# Clips are limited ("TV", MPEG) range and say so: what decoders assume of untagged H.264.
# Full-range sources (yuvj formats, phones and webcams tagging yuv420p as full range, MJPEG)
# are converted to it; written untouched, their samples read back as limited (RGB 20/230
# came out as 4/249).
OUTPUT_COLOR_RANGE = ColorRange.MPEG
# x264's macroblock-tree rate control gave different bytes for the same frames from run to
# run in the PyAV wheel's x264 (measured: 3-5 distinct outputs in 12 encodes, single- and
# multi-threaded; none with mbtree off). Two builds with the same seed must be identical,
# so it is off; the cost is a few percent of bitrate at the same CRF.
X264_REPRODUCIBLE = {"x264-params": "mbtree=0"}
# Downscaling filter; bicubic is also what ffmpeg's scale filter uses by default.
INTERPOLATION = "BICUBIC"
# x264's output depends on its thread count (measured: 1, 2, 3 and 4 threads give four
# different files), so the count is fixed, and fixed at 1: a single-threaded encoder is
# the cheapest per frame (measured 7.6 against 8.0 ms of CPU per 1054x448 frame with 3
# frame threads) and a worker gets its parallelism from lanes instead (below).
ENCODER_THREADS = 1
# A video's steps are split into at most LANES runs of consecutive steps, balanced by
# duration; each lane has its own decoder and encodes its clips in order. The split depends
# on the steps alone, and a worker's thread budget only decides whether the lanes run at
# the same time or one after the other, so the bytes never depend on --workers or on the
# machine. Sources that cannot seek exactly (MPEG-PS) get one lane: another lane would
# have to decode from the start.
LANES = 2


def clip_name(step_index: int) -> str:
    """File name of a clip inside the video's work folder (the writer renames it)."""
    return f"step{step_index:02d}.mp4"


def output_size(
    width: int, height: int, short_side: int, sample_aspect: Fraction | None = None
) -> tuple[int, int]:
    """Even (width, height) with the short side capped at short_side and never upscaled.

    Non-square pixels are squared by shrinking one side, so no side grows either.
    """
    if width < 2 or height < 2:
        raise ValueError(f"cannot scale a {width}x{height} frame")
    w, h = Fraction(width), Fraction(height)
    if sample_aspect and sample_aspect > 0 and sample_aspect != 1:
        if sample_aspect > 1:
            h = h / sample_aspect
        else:
            w = w * sample_aspect
    scale = min(Fraction(1), Fraction(short_side) / min(w, h))
    return _even(w * scale, width), _even(h * scale, height)


def _even(value: Fraction, cap: int) -> int:
    """Nearest even integer, at most cap (rounded down to even), at least 2."""
    return max(2, min(round(value / 2) * 2, cap // 2 * 2))


def output_rate(source: Fraction | None, requested: float | None) -> Fraction:
    """The clip frame rate: the source's, or the requested one when it is lower."""
    rate = source or FALLBACK_RATE
    if requested:
        wanted = Fraction(repr(float(requested))).limit_denominator(1001)
        if wanted <= 0:
            raise ValueError(f"fps must be positive, got {requested}")
        rate = min(rate, wanted)
    return rate


def cut_video(
    probed: ProbedVideo, out_dir: Path, settings: CutSettings, threads: int = 1
) -> CutVideo:
    """Cut every step of one probed video into ``out_dir``, each frame decoded once.

    ``threads`` is the worker's share of the cores: with 2 or more the lanes run at the
    same time (one decoder and one encoder each), with 1 one after the other; the clips
    are the same bytes either way. Raises ``SkipVideo("cut", reason)`` when decoding or
    encoding fails or a step has no frame; clips already written for the video are removed.
    """
    if settings.audio:
        raise ValueError("CutSettings.audio=True is not supported: clips are video only")
    entry, source = probed.entry, probed.source
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Clip] = []
    try:
        first = _open(probed)
        try:
            reader = FrameReader(*first)
            plan = _plan(reader, source, settings)
            lanes = split_steps(entry.steps, LANES if reader.can_seek else 1)
            concurrent = threads > 1 and len(lanes) > 1
            lane_threads = max(1, threads // len(lanes)) if concurrent else threads
            first[1].codec_context.thread_count = lane_threads
        except BaseException:
            first[0].close()
            raise
        job = _LaneJob(probed, plan, out_dir, settings, lane_threads, written)
        if concurrent:
            with ThreadPoolExecutor(len(lanes) - 1) as pool:
                others = [pool.submit(job.run, i, lane) for i, lane in enumerate(lanes) if i]
                job.run(0, lanes[0], reader)
                for future in others:
                    future.result()
        else:
            for i, lane in enumerate(lanes):
                job.run(i, lane, reader if i == 0 else None)
        job.raise_first_error()
    except SkipVideo:
        _remove(written)
        raise
    except DECODE_ERRORS as err:
        _remove(written)
        raise SkipVideo("cut", f"{source.path} ({entry.video_id}): {err}") from None
    return CutVideo(entry=entry, source=source, clips=tuple(sorted(written, key=_step_index)))


def split_steps(steps: tuple[Step, ...], lanes: int) -> list[list[tuple[int, Step]]]:
    """(index, step) runs of consecutive steps, at most ``lanes`` of them, the longest
    run as short as possible (the earliest such split on ties).

    Consecutive steps keep the decoder's single pass within a lane: adjacent segments
    share it, and a lane's first step costs at most one seek.
    """
    indexed = list(enumerate(steps))
    if lanes < 2 or len(indexed) < 2:
        return [indexed]
    if lanes > 2:
        raise ValueError(f"at most 2 lanes are supported, got {lanes}")
    total = sum(exact_seconds(s.end) - exact_seconds(s.start) for s in steps)
    best, best_cost, left = 1, None, Fraction(0)
    for cut_at in range(1, len(indexed)):
        step = steps[cut_at - 1]
        left += exact_seconds(step.end) - exact_seconds(step.start)
        cost = max(left, total - left)
        if best_cost is None or cost < best_cost:
            best, best_cost = cut_at, cost
    return [indexed[:best], indexed[best:]]


def _step_index(clip: Clip) -> int:
    return clip.step_index


def _open(probed: ProbedVideo, threads: int | None = None):
    path = probed.source.path
    try:
        return open_video(path, threads=threads)
    except (LookupError, *DECODE_ERRORS) as err:
        raise SkipVideo("cut", f"cannot open {path}: {err}") from None


def _plan(reader: FrameReader, source, settings: CutSettings) -> _Plan:
    stream = reader.stream
    sar = stream.sample_aspect_ratio
    stored = output_size(
        source.width, source.height, settings.short_side, Fraction(sar) if sar else None
    )
    turns = source.rotation % 4
    return _Plan(
        time_base=Fraction(stream.time_base),
        origin=reader.origin,
        rate=output_rate(source_rate(stream), settings.fps),
        size=stored[::-1] if turns % 2 else stored,
        turns=turns,
    )


class _LaneJob:
    """Runs lanes of one video and keeps what they wrote and how they failed.

    A failing lane stops only the lanes after it, and the error reported is the earliest
    lane's, so the skip reason is the same whether the lanes ran together or in turn.
    """

    def __init__(self, probed, plan, out_dir, settings, threads, written):
        self.probed, self.plan, self.out_dir = probed, plan, out_dir
        self.settings, self.threads, self.written = settings, threads, written
        self.bounds = step_bounds(probed.entry.steps)  # over all lanes' steps
        self.errors: dict[int, BaseException] = {}
        self._lock = threading.Lock()

    def run(
        self, lane: int, steps: list[tuple[int, Step]], reader: FrameReader | None = None
    ) -> None:
        try:
            if self._stopped(lane):
                return
            if reader is None:
                reader = FrameReader(*_open(self.probed, self.threads))
            with reader.container:
                for index, step in steps:
                    if self._stopped(lane):
                        return
                    bounds = self.bounds[index]
                    self.written.append(_cut_step(reader, self, index, step, bounds))
        except (SkipVideo, *DECODE_ERRORS) as err:
            with self._lock:
                self.errors[lane] = err

    def _stopped(self, lane: int) -> bool:
        with self._lock:
            return any(failed < lane for failed in self.errors)

    def raise_first_error(self) -> None:
        if self.errors:
            raise self.errors[min(self.errors)]


@dataclass(frozen=True)
class _Plan:
    time_base: Fraction
    origin: int
    rate: Fraction  # output frames per second
    size: tuple[int, int]  # of the clip, as displayed
    # Quarter turns counterclockwise from the display matrix, applied to the pixels: a
    # clip carries no matrix (players and models see the same picture), and scaling
    # happens before the turn, on the smaller picture.
    turns: int = 0

    @property
    def stored_size(self) -> tuple[int, int]:
        """The scaled picture before it is turned."""
        return self.size[::-1] if self.turns % 2 else self.size

    @property
    def slot_ticks(self) -> Fraction:
        """One output frame, in source pts ticks."""
        return 1 / (self.rate * self.time_base)


def _cut_step(
    reader: FrameReader, job: _LaneJob, index: int, step: Step, bounds: tuple[Fraction, Fraction]
) -> Clip:
    # The step's bounds stay exact (fractions of a tick): output slots fall between ticks when
    # the clip rate is not a whole number of ticks (15 fps on tree.avi's 1/14.99993 s ticks),
    # so they start less than a slot after the start and end before the end: the clip lasts
    # its step within one slot, as clipcheck requires, however the ticks round.
    plan, out_dir, settings, probed = job.plan, job.out_dir, job.settings, job.probed
    start = plan.origin + bounds[0] / plan.time_base  # `step_bounds`: exact, shared
    end = plan.origin + bounds[1] / plan.time_base
    path = out_dir / clip_name(index)
    with atomic_path(path) as partial:
        encoder = _ClipEncoder(partial, plan, settings)
        try:
            count, first, last = encoder.encode_all(_slots(reader, plan, start, end))
            encoder.close()
        except BaseException:
            encoder.abort()
            raise
        if count == 0:
            raise SkipVideo(
                "cut",
                f"step {index + 1} of {probed.entry.video_id} ({step.label!r}, "
                f"{step.start:g}-{step.end:g} s) has no frame in {probed.source.path}",
            )
    return Clip(
        step_index=index,
        path=path,
        duration=float(count / plan.rate),
        num_frames=count,
        first_time=to_seconds(first, plan.time_base, plan.origin),
        last_time=to_seconds(last, plan.time_base, plan.origin),
        width=plan.size[0],
        height=plan.size[1],
    )


def _slots(reader: FrameReader, plan: _Plan, start: Fraction, end: Fraction) -> Iterator[Frame]:
    """The source frame for each output slot of [start, end), in order (the step's exact
    bounds in pts).

    Slot k (at base + k * slot) takes the step's frame nearest to it: the pending frame
    is emitted for every slot up to the midpoint between it and the next frame. ``base``
    is the first frame's time less whole slots, the latest such time at or after the start.
    After the last frame, slots continue to the step's end when a later frame exists (the
    last one lasts until then). At the end of the stream the last frame is held for the
    source's actual frame interval there (up to half a slot before where its successor
    would come, never past the step's end): a sparse source's last frame, on screen for
    0.4 s, is held for that long, and a source that ends inside the coverage tolerance
    gives a clip that ends with its last frame.
    """
    slot = plan.slot_ticks
    pending: Frame | None = None
    interval = slot  # between the pending frame and the one before it
    base = 0  # pts of the step's first frame: slot 0
    k = 0
    limit: Fraction | None = None
    for item in reader.frames_from(math.ceil(start)):
        pts = item[0]
        if pts >= end:
            reader.push_back(item)
            limit = end
            break
        if pending is None:
            # A frame gap over the step's start: the grid reaches back over it, with the
            # step's first frame in the slots before it (the frame on screen at the start
            # belongs to the previous step), so the clip keeps the segment's timing. For a
            # constant rate the first frame is less than a slot after the start: no change.
            base = pts - math.floor((pts - start) / slot) * slot
        else:
            interval = Fraction(pts - pending[0])
            middle = Fraction(pending[0] + pts, 2)
            while base + k * slot < end and base + k * slot <= middle:
                yield pending
                k += 1
        pending = item
    if pending is None:
        return
    if limit is None:
        limit = min(end, pending[0] + max(slot, interval) - slot / 2)
    while base + k * slot < limit:
        yield pending
        k += 1


class _ClipEncoder:
    """Writes one clip: H.264 yuv420p in mp4 with the index first (+faststart)."""

    def __init__(self, path: Path, plan: _Plan, settings: CutSettings):
        self.path = path
        self.plan = plan
        self.container = av.open(
            str(path), mode="w", format="mp4", container_options={"movflags": "+faststart"}
        )
        stream = self.container.add_stream(
            "libx264",
            rate=plan.rate,
            options={"crf": str(settings.crf), "preset": settings.preset, **X264_REPRODUCIBLE},
        )
        stream.width, stream.height = plan.size
        stream.pix_fmt = OUTPUT_PIX_FMT
        stream.codec_context.time_base = 1 / plan.rate
        stream.codec_context.thread_type = "FRAME"
        stream.codec_context.thread_count = ENCODER_THREADS
        self.stream = stream
        self._tagged = False
        # One scaler per clip: frame.reformat() would rebuild the swscale context (and its
        # filter tables) for every frame, which measured 3x slower.
        self._scaler = VideoReformatter()

    def encode_all(self, slots: Iterator[Frame]) -> tuple[int, int, int]:
        """Encode the slots; returns (frames written, first source pts, last source pts)."""
        count, first, last = 0, 0, 0
        previous: Frame | None = None
        scaled: av.VideoFrame | None = None
        time_base = 1 / self.plan.rate
        for item in slots:
            if item is not previous:  # a repeated slot reuses the scaled frame
                scaled = self._scale(item[1])
                previous = item
                last = item[0]
                if count == 0:
                    first = item[0]
            scaled.pts = count
            scaled.time_base = time_base
            self._mux(self.stream.encode(scaled))
            count += 1
        return count, first, last

    def _scale(self, frame: av.VideoFrame) -> av.VideoFrame:
        if not self._tagged:
            self._copy_colour_tags(frame)
        width, height = self.plan.stored_size
        out = self._scaler.reformat(
            frame,
            width=width,
            height=height,
            format=OUTPUT_PIX_FMT,
            interpolation=INTERPOLATION,
            src_color_range=source_range(frame),
            dst_color_range=OUTPUT_COLOR_RANGE,
        )
        if self.plan.turns:
            out = turn(out, self.plan.turns)
        out.pict_type = av.video.frame.PictureType.NONE  # the encoder picks keyframes
        return out

    def _copy_colour_tags(self, frame: av.VideoFrame) -> None:
        """Keep a YUV source's colour description (BT.709 HD stays BT.709 when scaled), and
        say the range the samples are in (`OUTPUT_COLOR_RANGE`), whatever the source's."""
        self._tagged = True
        self.stream.codec_context.color_range = OUTPUT_COLOR_RANGE
        if frame.format.is_rgb:
            return
        context = self.stream.codec_context
        context.colorspace = frame.colorspace
        context.color_primaries = frame.color_primaries
        context.color_trc = frame.color_trc

    def _mux(self, packets) -> None:
        for packet in packets:
            self.container.mux(packet)

    def close(self) -> None:
        self._mux(self.stream.encode(None))
        self.container.close()

    def abort(self) -> None:
        try:
            self.container.close()
        except DECODE_ERRORS:
            pass
        self.path.unlink(missing_ok=True)


def source_range(frame: av.VideoFrame) -> ColorRange | None:
    """The range a decoded frame's samples are in: full for a yuvj format or a full-range
    tag, else limited (what an untagged YUV frame means to a player); None for RGB, which
    has no range to convert from."""
    if frame.format.is_rgb:
        return None
    full = frame.color_range == ColorRange.JPEG or frame.format.name.startswith("yuvj")
    return ColorRange.JPEG if full else ColorRange.MPEG


def turn(frame: av.VideoFrame, quarter_turns: int) -> av.VideoFrame:
    """A yuv420p frame turned counterclockwise by quarter turns, plane by plane (the
    chroma planes turn with the picture, so no sample is resampled)."""
    width, height = frame.width, frame.height
    flat = frame.to_ndarray().reshape(-1)  # Y, then U, then V, each row after row
    y = flat[: width * height].reshape(height, width)
    u = flat[width * height : width * height * 5 // 4].reshape(height // 2, width // 2)
    v = flat[width * height * 5 // 4 :].reshape(height // 2, width // 2)
    planes = [np.rot90(p, quarter_turns).reshape(-1) for p in (y, u, v)]
    new_height = width if quarter_turns % 2 else height
    out = av.VideoFrame.from_ndarray(
        np.concatenate(planes).reshape(new_height * 3 // 2, -1), format=OUTPUT_PIX_FMT
    )
    for attr in ("colorspace", "color_range"):
        setattr(out, attr, getattr(frame, attr))
    return out


def _remove(clips: list[Clip]) -> None:
    for clip in clips:
        clip.path.unlink(missing_ok=True)
