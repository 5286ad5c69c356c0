"""Frames of a clip in the paper's two settings (Appendix A.2), decoded with PyAV.

The runner, the baselines and a user's own script sample the same frames: one rule, in
``sample_frames``, for every clip form a loaded SPLICE row can hold (a torchcodec decoder,
an undecoded ``{"bytes", "path"}`` dict, bytes or a path). ``FrameSpec`` is that rule's
settings as ``splice run --frames`` takes them and its prediction files record them.
"""

from __future__ import annotations

import bisect
import io
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from splice_dataset import PAPER_LONG_SIDE


@dataclass(frozen=True)
class FrameSpec:
    """How frames are sampled from a clip: the paper's two settings (Appendix A.2)."""

    fps: float | None = 1.0
    num_frames: int | None = None
    # Explicit, so that a prediction file's metadata says what the frames were.
    long_side: int | None = PAPER_LONG_SIDE

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``sample_frames``."""
        out: dict[str, Any] = {}
        if self.num_frames is not None:
            out["num_frames"] = self.num_frames
        else:
            out["fps"] = self.fps
        if self.long_side is not None:
            out["long_side"] = self.long_side
        return out


class Frames(NamedTuple):
    """Frames chosen from one clip: ``frames`` uint8 (T, H, W, 3) RGB; ``times`` float64
    (T,), each frame's presentation time in seconds from the clip's first frame."""

    frames: np.ndarray
    times: np.ndarray


def sample_frames(
    clip: Any,
    *,
    fps: float | None = None,
    num_frames: int | None = None,
    long_side: int | None = PAPER_LONG_SIDE,
) -> Frames:
    """Frames of one clip in the paper's two settings (Appendix A.2), decoded with PyAV.

    Which frames: a clip of duration D covers [0, D) (first frame at 0, D = end of the last
    frame). For a target time t the frame chosen is the one on screen at t: the last frame
    whose timestamp is <= t.

    * ``fps=f`` (default 1.0, Qwen2-VL / Gemini): targets t = 0, 1/f, 2/f, ... while t < D,
      so ceil(D * f) frames, at least one.
    * ``num_frames=T`` (16 for InternVL2.5 / LLaVA-OneVision): the centres of T equal bins,
      t_i = (i + 1/2) * D / T; always T frames (short clips repeat frames).

    ``long_side`` caps the LONGER side (the paper: "the highest image resolution was set to
    448 pixels, while the other dimension was automatically adjusted based on the aspect
    ratio"); the other side keeps the aspect ratio (rounded), and frames are never
    upscaled. ``None`` keeps the stored size. (The build caps the SHORT side at 448, so
    stored clips hold enough pixels for either reading.)

    Decodes only what is needed: packets are demuxed (cheap), and decoding starts at the
    keyframe before each wanted frame when that lies ahead of the decoder, and stops after
    the last wanted frame; only chosen frames are converted to RGB.

    ``clip`` may be a torchcodec ``VideoDecoder`` (what ``datasets.Video`` decodes to), a
    ``{"bytes", "path"}`` dict (undecoded ``datasets.Video``), raw bytes or a file path.
    """
    if fps is not None and num_frames is not None:
        raise ValueError("sample_frames: pass fps or num_frames, not both")
    if num_frames is not None:
        if int(num_frames) != num_frames or num_frames < 1:
            raise ValueError(f"sample_frames: num_frames must be a positive int, got {num_frames}")
        rule: tuple[str, Fraction] = ("bins", Fraction(int(num_frames)))
    else:
        fps = 1.0 if fps is None else fps
        if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
            raise ValueError(f"sample_frames: fps must be a positive number, got {fps!r}")
        rule = ("fps", Fraction(fps).limit_denominator(1_000_000))
    if long_side is not None and long_side < 1:
        raise ValueError(f"sample_frames: long_side must be positive or None, got {long_side}")

    source, name = _clip_source(clip)
    if source is None:  # a torchcodec decoder with no PyAV-readable source
        return _sample_with_decoder(clip, rule, long_side)
    return _sample_with_pyav(source, name, rule, long_side)


def _targets(rule: tuple[str, Fraction], duration: Fraction) -> list[Fraction]:
    kind, value = rule
    if kind == "bins":
        n = int(value)
        return [(2 * i + 1) * duration / (2 * n) for i in range(n)]
    count = max(1, math.ceil(duration * value))
    return [k / value for k in range(count)]


def scaled_size(width: int, height: int, long_side: int | None) -> tuple[int, int]:
    """The size frames are given at: the longer side capped at ``long_side``, the aspect
    ratio kept (rounded), never upscaled; ``None`` keeps the stored size."""
    longest = max(width, height)
    if long_side is None or longest <= long_side:
        return width, height
    scale = long_side / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def _clip_source(clip: Any) -> tuple[Any, str]:
    """(PyAV-openable source, name for errors); source None = use the torchcodec API."""
    if isinstance(clip, str | os.PathLike):
        path = os.fspath(clip)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"clip file not found: {path}")
        return path, path
    if isinstance(clip, bytes | bytearray | memoryview):
        return io.BytesIO(bytes(clip)), "<clip bytes>"
    if isinstance(clip, Mapping):
        data, path = clip.get("bytes"), clip.get("path")
        name = path or "<clip bytes>"
        if data is not None:
            return io.BytesIO(bytes(data)), name
        if path is not None:
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"clip {path}: no bytes embedded and no such local file (load the "
                    "dataset with embedded clips, or from the folder that holds them)"
                )
            return path, path
        raise ValueError(f"clip dict has neither 'bytes' nor 'path': keys {sorted(clip)}")
    if hasattr(clip, "get_frames_played_at") and hasattr(clip, "metadata"):
        return _decoder_source(clip)
    raise TypeError(
        f"sample_frames: unsupported clip type {type(clip).__name__}; expected a torchcodec "
        "VideoDecoder, a {'bytes', 'path'} dict, bytes or a path"
    )


def _decoder_source(decoder: Any) -> tuple[Any, str]:
    """Where a decoder's clip can be read with PyAV, through datasets' public API: the
    ``{"bytes", "path"}`` that ``Video.encode_example`` gives back for a decoder made by
    ``datasets.Video``, else the local file ``metadata.path`` names (datasets sets it).
    None when there is neither (a clip streamed from the Hub): then torchcodec reads it.
    Imported here: a decoder exists only once datasets is loaded, and reading a predictions
    file (which imports this module through ``probes``) must not pay for datasets."""
    import datasets  # noqa: PLC0415

    try:
        encoded = datasets.Video().encode_example(decoder)
    except (TypeError, ValueError, NotImplementedError):  # not one of datasets' decoders
        encoded = None
    if isinstance(encoded, Mapping):
        data, path = encoded.get("bytes"), encoded.get("path")
        if data is not None or (path is not None and os.path.isfile(path)):
            return _clip_source(encoded)
    path = getattr(decoder.metadata, "path", None)
    if isinstance(path, str) and os.path.isfile(path):
        return path, path
    return None, str(path or "<torchcodec decoder>")


def _sample_with_pyav(
    source: Any, name: str, rule: tuple[str, Fraction], long_side: int | None
) -> Frames:
    import av

    try:
        container = av.open(source)
    except av.error.FFmpegError as exc:
        raise ValueError(f"clip {name}: cannot open as video ({exc})") from exc
    try:
        if not container.streams.video:
            raise ValueError(f"clip {name}: has no video stream")
        stream = container.streams.video[0]
        if stream.time_base is None:
            raise ValueError(f"clip {name}: video stream has no time base")
        tb = Fraction(stream.time_base)
        packets = _demux(container, stream, name)
        first, chosen = _chosen_pts(stream, packets, rule)
        decoded = decode_wanted(stream, packets, sorted(set(chosen)), name).frames
        width, height = scaled_size(
            stream.codec_context.width, stream.codec_context.height, long_side
        )
        rgb = _to_rgb(decoded, width, height)
    except av.error.FFmpegError as exc:
        raise ValueError(f"clip {name}: decoding failed ({exc})") from exc
    finally:
        container.close()
    frames = np.stack([rgb[p] for p in chosen])
    times = np.array([float((p - first) * tb) for p in chosen], dtype=np.float64)
    return Frames(frames, times)


def _demux(container: Any, stream: Any, name: str) -> list[tuple[int, Any]]:
    """(timestamp, packet) of every non-empty packet, in decode order (demuxing is cheap)."""
    packets = []
    for packet in container.demux(stream):
        if packet.size == 0:
            continue
        ts = packet.pts if packet.pts is not None else packet.dts
        if ts is None:
            raise ValueError(f"clip {name}: packet without timestamps; cannot place frames")
        packets.append((ts, packet))
    if not packets:
        raise ValueError(f"clip {name}: video stream has no frames")
    return packets


def _chosen_pts(
    stream: Any, packets: list[tuple[int, Any]], rule: tuple[str, Fraction]
) -> tuple[int, list[int]]:
    """The clip's first pts and, per target time, the pts of the frame on screen then.

    The clip spans [first, end of the last frame): the last packet's duration, else the
    median frame step, else one frame at the stream's rate."""
    tb = Fraction(stream.time_base)
    pts_sorted = sorted({ts for ts, _ in packets})
    first = pts_sorted[0]
    last_packet = max(packets, key=lambda item: item[0])[1]
    if last_packet.duration:
        last_duration = last_packet.duration
    elif len(pts_sorted) > 1:
        last_duration = int(np.median(np.diff(pts_sorted)))
    else:
        rate = stream.average_rate or stream.base_rate or 1
        last_duration = max(1, round(1 / (Fraction(rate) * tb)))
    duration = (pts_sorted[-1] + last_duration - first) * tb
    seconds = [(p - first) * tb for p in pts_sorted]
    chosen = [
        pts_sorted[max(0, bisect.bisect_right(seconds, t) - 1)] for t in _targets(rule, duration)
    ]
    return first, chosen


def _to_rgb(frames: Mapping[int, Any], width: int, height: int) -> dict[int, np.ndarray]:
    """RGB arrays at (width, height); one reformatter for all frames reuses its scaler."""
    from av.video.reformatter import VideoReformatter

    reformatter = VideoReformatter()
    return {
        key: reformatter.reformat(frame, width, height, "rgb24", interpolation="AREA").to_ndarray()
        for key, frame in frames.items()
    }


class Decoded(NamedTuple):
    """What `decode_wanted` decoded: PyAV frames by pts, and how many packets it fed."""

    frames: dict[int, Any]
    packets_fed: int


def decode_wanted(
    stream: Any, packets: list[tuple[int, Any]], wanted: list[int], name: str
) -> Decoded:
    """Decode the frames whose pts are in ``wanted`` (sorted), skipping whole GOPs that
    hold none of them: the decoder jumps to the last keyframe at or before the next wanted
    frame whenever that keyframe lies ahead of what was already fed. ``packets`` are
    (timestamp, packet) in decode order, as demuxed from ``stream``; ``name`` names the
    clip in errors. Public so that the keyframe skipping can be checked on its own."""
    keyframes = sorted((ts, i) for i, (ts, p) in enumerate(packets) if p.is_keyframe)
    key_pts = [ts for ts, _ in keyframes]
    feed = _Feed(stream.codec_context, packets, set(wanted))
    out: dict[int, Any] = {}
    for w in wanted:
        k = bisect.bisect_right(key_pts, w) - 1
        start = max(i for _, i in keyframes[: k + 1]) if k >= 0 else 0
        if start > feed.pos:
            feed.seek(start)
        out[w] = feed.frame_at(w, name)
    return Decoded(out, feed.fed)


class _Feed:
    """The decoder's state between wanted frames: the next packet to feed, frames decoded
    but not yet matched (presentation order) and the last frame passed over."""

    def __init__(self, codec: Any, packets: list[tuple[int, Any]], wanted: set[int]) -> None:
        self.codec, self.packets, self.wanted = codec, packets, wanted
        self.pos = 0
        self.fed = 0
        self.flushed = False
        self.pending: list = []
        self.previous: Any = None  # fallback when a pts never shows up

    def seek(self, start: int) -> None:
        self.codec.flush_buffers()
        self.pos, self.pending, self.flushed, self.previous = start, [], False, None

    def frame_at(self, w: int, name: str) -> Any:
        """The frame on screen at pts ``w``, decoding packets until it shows up."""
        while True:
            found = self._match(w)
            if found is not None:
                return found
            if not self._decode_more():
                if self.previous is not None:
                    return self.previous
                raise ValueError(f"clip {name}: frame at pts {w} could not be decoded")

    def _match(self, w: int) -> Any:
        while self.pending:
            frame = self.pending.pop(0)
            fpts = frame.pts
            if fpts is None or fpts < w:
                self.previous = frame
            elif fpts == w:
                return frame
            else:  # skipped past w: keep what was on screen at w
                self.pending.insert(0, frame)
                return self.previous if self.previous is not None else frame
        return None

    def _decode_more(self) -> bool:
        if self.pos < len(self.packets):
            ts, packet = self.packets[self.pos]
            # A frame nobody wants that no other frame refers to need not be decoded.
            self.codec.skip_frame = "DEFAULT" if ts in self.wanted else "NONREF"
            self.pending.extend(self.codec.decode(packet))
            self.pos += 1
            self.fed += 1
            return True
        if not self.flushed:
            self.codec.skip_frame = "DEFAULT"
            self.pending.extend(self.codec.decode(None))
            self.flushed = True
            return True
        return False


def _sample_with_decoder(decoder: Any, rule: tuple[str, Fraction], long_side: int | None) -> Frames:
    """torchcodec path (no PyAV-readable source): ask the decoder for frames played at the
    same target times; duck-typed so torchcodec is never imported here."""
    import av

    meta = decoder.metadata
    begin = getattr(meta, "begin_stream_seconds", None) or 0.0
    end = getattr(meta, "end_stream_seconds", None)
    duration = (end - begin) if end is not None else meta.duration_seconds
    targets = [begin + float(t) for t in _targets(rule, Fraction(duration).limit_denominator())]
    batch = decoder.get_frames_played_at(seconds=targets)
    data = batch.data
    data = data.cpu().numpy() if hasattr(data, "cpu") else np.asarray(data)
    if data.shape[-1] != 3:  # NCHW (datasets' default) -> NHWC
        data = data.transpose(0, 2, 3, 1)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    height, width = data.shape[1:3]
    w, h = scaled_size(width, height, long_side)
    if (w, h) != (width, height):
        scaled = _to_rgb(
            {i: av.VideoFrame.from_ndarray(f, format="rgb24") for i, f in enumerate(data)}, w, h
        )
        data = np.stack([scaled[i] for i in range(len(data))])
    pts = batch.pts_seconds
    pts = pts.cpu().numpy() if hasattr(pts, "cpu") else np.asarray(pts)
    return Frames(data, np.asarray(pts, dtype=np.float64) - begin)


def clip_bytes(clip: Any) -> bytes:
    """The encoded MP4 bytes of a clip in any form `sample_frames` accepts."""
    source, name = _clip_source(clip)
    if source is None:
        raise ValueError(f"clip {name}: the decoder holds no readable bytes or local file")
    if isinstance(source, io.BytesIO):
        return source.getvalue()
    return Path(source).read_bytes()
