"""Test helpers: tiny videos made with PyAV (good and broken) and ways to read them back.

Every generated frame carries its own index as a row of black/white bars (a binary
number), big enough to survive H.264 and downscaling, so a test can tell exactly which
source frame ended up in a clip instead of trusting the cutter's own bookkeeping.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from splice_build.records import Step, VideoEntry

INDEX_BITS = 8  # frames 0..255


def index_image(index: int, width: int, height: int) -> np.ndarray:
    """An RGB frame whose vertical bars spell ``index`` in binary (most significant left)."""
    if not 0 <= index < 2**INDEX_BITS:
        raise ValueError(f"frame index {index} does not fit in {INDEX_BITS} bits")
    image = np.zeros((height, width, 3), np.uint8)
    edges = np.linspace(0, width, INDEX_BITS + 1).astype(int)
    for bit in range(INDEX_BITS):
        if index >> (INDEX_BITS - 1 - bit) & 1:
            image[:, edges[bit] : edges[bit + 1]] = 255
    return image


def read_index(frame: av.VideoFrame) -> int:
    """The index drawn by `index_image`, read from the centre of each bar."""
    gray = frame.to_ndarray(format="gray").astype(float)
    height, width = gray.shape
    edges = np.linspace(0, width, INDEX_BITS + 1)
    value = 0
    for bit in range(INDEX_BITS):
        lo, hi = (
            int(edges[bit] + 0.3 * (edges[bit + 1] - edges[bit])),
            int(edges[bit] + 0.7 * (edges[bit + 1] - edges[bit])),
        )
        level = gray[height // 4 : 3 * height // 4, lo : max(hi, lo + 1)].mean()
        value = value << 1 | int(level > 128)
    return value


def write_video(
    path: Path,
    *,
    n_frames: int = 30,
    fps: Fraction | int = 10,
    size: tuple[int, int] = (64, 48),
    codec: str = "libx264",
    pix_fmt: str = "yuv420p",
    fmt: str | None = None,
    pts: Sequence[int] | None = None,
    time_base: Fraction | None = None,
    b_frames: int | None = None,
    gop: int | None = None,
    audio: bool = False,
    container_options: dict[str, str] | None = None,
) -> Path:
    """Encode ``n_frames`` index frames; ``pts``/``time_base`` make it variable frame rate."""
    width, height = size
    options = container_options or {}
    with av.open(str(path), mode="w", format=fmt, container_options=options) as container:
        stream = container.add_stream(codec, rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        if time_base is not None:
            stream.codec_context.time_base = time_base
        if b_frames is not None:
            stream.codec_context.max_b_frames = b_frames
        if gop is not None:
            stream.codec_context.gop_size = gop
        audio_stream = container.add_stream("aac", rate=8000) if audio else None
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(index_image(i, width, height), format="rgb24")
            frame.pts = pts[i] if pts is not None else i
            frame.time_base = time_base if time_base is not None else 1 / Fraction(fps)
            for packet in stream.encode(frame.reformat(format=pix_fmt)):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
        if audio_stream is not None:
            _write_tone(container, audio_stream, seconds=n_frames / float(fps))
    return path


def write_audio_only(path: Path, seconds: float = 3.0, fmt: str | None = None) -> Path:
    """A file with one AAC stream and no video (what a downloader leaves as .m4a)."""
    with av.open(str(path), mode="w", format=fmt) as container:
        stream = container.add_stream("aac", rate=8000)
        _write_tone(container, stream, seconds)
    return path


def _write_tone(container, stream, seconds: float) -> None:
    rate = stream.codec_context.sample_rate
    samples = int(seconds * rate)
    t = np.arange(samples) / rate
    tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    frame_size = 1024
    for offset in range(0, samples, frame_size):
        chunk = tone[offset : offset + frame_size][None, :]
        frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = rate, offset
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)


def truncate(path: Path, fraction: float) -> Path:
    """Cut a file down to a fraction of its bytes, like an interrupted download."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def write_not_video(path: Path) -> Path:
    path.write_text("<html><body>This video is unavailable.</body></html>\n" * 40)
    return path


def mp4_top_level_boxes(path: Path) -> list[str]:
    """Names of the top-level boxes of an mp4, in file order (to check +faststart)."""
    names = []
    with open(path, "rb") as f:
        while header := f.read(8):
            size, name = struct.unpack(">I4s", header)
            names.append(name.decode("latin-1"))
            if size == 1:
                size = struct.unpack(">Q", f.read(8))[0] - 8
            elif size == 0:
                break
            f.seek(size - 8, 1)
    return names


def source_frames(path: Path) -> list[tuple[Fraction, av.VideoFrame]]:
    """Every frame of a source in presentation order with its time on a player's timeline:
    the frame's time minus the container's start (where playback starts, whichever stream
    starts it; a video that starts after its audio is shown from its own start time).

    Times are the stream's own timestamps, sorted: the decoder emits frames in
    presentation order even when a container (AVI) labels them in decode order.
    """
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        time_base = Fraction(stream.time_base)
        start = Fraction(container.start_time or 0, av.time_base)
        frames = list(container.decode(stream))
    stamps = sorted(f.pts if f.pts is not None else f.dts for f in frames)
    return [(pts * time_base - start, f) for pts, f in zip(stamps, frames, strict=True)]


def clip_frames(path: Path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(container.streams.video[0]))


def entry(
    video_id: str, segments: Sequence[tuple[float, float]], duration: float = 10.0
) -> VideoEntry:
    """A VideoEntry with made-up labels for the given chronological segments."""
    steps = tuple(Step(i + 1, f"step {i + 1}", s, e) for i, (s, e) in enumerate(segments))
    return VideoEntry(
        video_id=video_id,
        task="TestTask",
        domain="TestDomain",
        recipe_type=1,
        subset="testing",
        duration=duration,
        video_url=f"https://www.youtube.com/embed/{video_id}",
        steps=steps,
    )


CORNER = (220, 30, 30)  # the marked corner's colour (red), on grey


def write_corner_video(
    path: Path, *, n_frames: int = 30, fps: int = 10, size: tuple[int, int] = (96, 64)
) -> Path:
    """Grey frames with a red block in the top-left corner of the stored picture, so a
    test can tell which way a clip is turned."""
    width, height = size
    image = np.full((height, width, 3), 128, np.uint8)
    image[: height // 4, : width // 4] = CORNER
    with av.open(str(path), mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            for packet in stream.encode(frame.reformat(format="yuv420p")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def set_display_rotation(path: Path, degrees: int) -> Path:
    """Give an mp4's video track a display matrix, as phones write for portrait video.

    ``degrees`` is what FFmpeg reports as the rotation (``frame.rotation``): the angle a
    player turns the stored picture counterclockwise; a phone held upright records -90
    (turn clockwise). The matrix is the track header's (``tkhd``), written in place.
    """
    one = 1 << 16
    cos, sin = {0: (1, 0), 90: (0, 1), 180: (-1, 0), -90: (0, -1), 270: (0, -1)}[degrees]
    # ISO 14496-12 matrix {a, b, u, c, d, v, x, y, w}: FFmpeg reads a=cos, b=-sin, c=sin.
    matrix = [cos * one, -sin * one, 0, sin * one, cos * one, 0, 0, 0, 1 << 30]
    data = bytearray(path.read_bytes())
    at = data.find(b"tkhd")
    if at < 0 or data[at + 4] != 0:
        raise ValueError(f"{path}: no version-0 tkhd box")
    start = at + 4 + 4 + 20 + 8 + 8  # version/flags, times/id/duration, reserved, layer..
    data[start : start + 36] = struct.pack(">9i", *matrix)
    path.write_bytes(bytes(data))
    return path


LEVELS = (20, 230)  # RGB grey levels near both ends of the range, where ranges differ most


def write_levels_video(
    path: Path,
    *,
    codec: str = "libx264",
    pix_fmt: str = "yuv420p",
    full_range: bool = False,
    n_frames: int = 20,
    fps: int = 10,
    size: tuple[int, int] = (64, 48),
) -> Path:
    """Frames whose left half is grey `LEVELS[0]` and right half `LEVELS[1]`, encoded as
    full-range YUV when ``full_range`` (or when ``pix_fmt`` is a yuvj format), as phones,
    webcams and MJPEG cameras write them."""
    width, height = size
    image = np.empty((height, width, 3), np.uint8)
    image[:, : width // 2], image[:, width // 2 :] = LEVELS
    full = full_range or pix_fmt.startswith("yuvj")
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        if full:
            stream.codec_context.color_range = av.video.reformatter.ColorRange.JPEG
        for i in range(n_frames):
            rgb = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame = rgb.reformat(format=pix_fmt, dst_color_range="JPEG" if full else None)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            if full:
                frame.color_range = av.video.reformatter.ColorRange.JPEG
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def grey_levels(frame: av.VideoFrame) -> tuple[float, float]:
    """The mean RGB level of a frame's left and right quarter-inner parts (see
    `write_levels_video`), as a player converts it (by the frame's own range tag)."""
    rgb = frame.to_ndarray(format="rgb24").astype(float)
    height, width = rgb.shape[:2]
    rows = slice(height // 4, 3 * height // 4)
    left = rgb[rows, width // 8 : 3 * width // 8].mean()
    right = rgb[rows, 5 * width // 8 : 7 * width // 8].mean()
    return left, right


def write_sparse_avi(path: Path, *, seconds: float = 40.0, seed: int = 20) -> Path:
    """A Cinepak AVI at a nominal 15 fps whose frames sit 6 or 7 ticks (0.4-0.47 s) apart:
    the AVI muxer writes empty chunks for the ticks between, as old capture tools did, so
    the header's rate says 15 while a frame really lasts about 0.44 s."""
    rng = np.random.default_rng(seed)
    pts = [0]
    while pts[-1] < 15 * seconds:
        pts.append(pts[-1] + int(rng.choice([6, 7])))
    return write_video(
        path,
        fmt="avi",
        codec="cinepak",
        pix_fmt="rgb24",
        fps=15,
        n_frames=len(pts),
        pts=pts,
        time_base=Fraction(1, 15),
        size=(160, 120),
    )


def still_image_packet(codec: str, size: tuple[int, int] = (64, 48)) -> bytes:
    """One encoded still picture (a cover or thumbnail), flat grey, as bytes."""
    width, height = size
    pix_fmt = {"png": "rgb24", "mjpeg": "yuvj420p"}[codec]
    context = av.CodecContext.create(codec, "w")
    context.width, context.height, context.pix_fmt = width, height, pix_fmt
    context.time_base = Fraction(1, 1)
    image = av.VideoFrame.from_ndarray(np.full((height, width, 3), 200, np.uint8), "rgb24")
    packets = [*context.encode(image.reformat(format=pix_fmt)), *context.encode(None)]
    return b"".join(bytes(p) for p in packets)


def write_with_still(
    path: Path,
    *,
    fmt: str,
    still: str,
    attached_pic: bool,
    n_frames: int = 100,
    fps: int = 10,
    size: tuple[int, int] = (64, 48),
    audio: bool = False,
    attachment: bool = False,
) -> Path:
    """An index-bar H.264 video whose first stream is a one-frame still picture (``still``:
    png or mjpeg), as thumbnail embedders and cover-art taggers leave: with the
    ``attached_pic`` disposition where the container keeps it (mp4 moves it last), a bare
    one-frame track otherwise. ``attachment`` adds a PNG file attachment too (Matroska), which
    FFmpeg also reads as an attached-picture video stream."""
    width, height = size
    with av.open(str(path), mode="w", format=fmt) as container:
        if attachment:
            container.add_attachment("cover.png", "image/png", still_image_packet("png", size))
        picture = container.add_stream(still, rate=1)
        picture.width, picture.height = width, height
        picture.pix_fmt = {"png": "rgb24", "mjpeg": "yuvj420p"}[still]
        if attached_pic:
            picture.disposition = av.stream.Disposition.attached_pic
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        audio_stream = container.add_stream("aac", rate=8000) if audio else None
        packet = av.Packet(still_image_packet(still, size))
        packet.stream, packet.pts, packet.dts = picture, 0, 0
        packet.time_base, packet.is_keyframe = Fraction(1, 1), True
        container.mux(packet)
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(index_image(i, width, height), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            for out in video.encode(frame.reformat(format="yuv420p")):
                container.mux(out)
        for out in video.encode(None):
            container.mux(out)
        if audio_stream is not None:
            _write_tone(container, audio_stream, seconds=n_frames / fps)
    return path


def move_tags_first(path: Path) -> Path:
    """Move an mp4's ``udta`` box (its tags, cover art included) to the front of its
    ``moov``, as tag editors do, so FFmpeg lists the cover before the tracks (stream 0).

    Only boxes inside ``moov`` move and ``moov`` keeps its size, so the sample offsets into
    ``mdat`` (written before ``moov`` here, without +faststart) stay right."""
    data = bytearray(path.read_bytes())
    at = 0
    while at < len(data):
        size, name = struct.unpack(">I4s", data[at : at + 8])
        if name == b"moov":
            children, inner = [], at + 8
            while inner < at + size:
                child_size = struct.unpack(">I", data[inner : inner + 4])[0]
                children.append(bytes(data[inner : inner + child_size]))
                inner += child_size
            tags = [c for c in children if c[4:8] == b"udta"]
            if not tags:
                raise ValueError(f"{path} has no udta box to move")
            rest = [c for c in children if c[4:8] != b"udta"]
            data[at + 8 : at + size] = rest[0] + tags[0] + b"".join(rest[1:])  # after mvhd
            path.write_bytes(bytes(data))
            return path
        at += size
    raise ValueError(f"{path} has no moov box")
