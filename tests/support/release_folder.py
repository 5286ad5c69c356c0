"""A folder in the layout of the authors' Hub release (``<id>_part_<k>.mp4`` under the
segments folder), written with PyAV, for `splice import-release` and the runs that import it
(the import's tests, the Ray executor's, the installed wheel's).

Each part of a video is a solid colour with its own frame count, so a test can tell which
release file ended up as which clip by looking at the clip, not at the import's records.
The ids are real COIN ids of the bundled annotations (the first eight below are ids seen
in the release's file listing), and `11YgWtB-VwY` is one the release holds but the
bundled annotations do not.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from splice_build.remote.release.scan import SEGMENTS_DIR

PALETTE = [
    (220, 30, 30),
    (30, 200, 30),
    (30, 30, 220),
    (230, 230, 30),
    (220, 30, 220),
    (30, 220, 220),
    (128, 128, 128),
    (240, 140, 20),
]
SIZE = (64, 48)
FPS = 10


def frames_of(part: int) -> int:
    return 4 + 3 * part  # 7, 10, 13, ...: every part of a video has its own count


def write_part(
    path: Path,
    part: int,
    *,
    audio: bool = True,
    codec: str = "libx264",
    b_frames: int | None = None,
    first_pts: int = 0,
    keyint: int | None = None,
    drop: int = 0,
) -> Path:
    """Part ``part`` of a video: PALETTE[part - 1] for frames_of(part) frames, with audio.

    ``first_pts`` starts the timestamps later (a clip cut with its source times kept);
    ``keyint`` and ``drop`` make a clip that starts ``drop`` packets into a GOP, on a
    frame that cannot be decoded alone (a cut that missed the keyframe)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = np.zeros((SIZE[1], SIZE[0], 3), np.uint8)
    image[:] = PALETTE[part - 1]
    with av.open(str(path), "w", format="mp4") as out:
        stream = _video_stream(out, codec, b_frames, keyint)
        packets = 0

        def mux(encoded) -> None:
            nonlocal packets
            for packet in encoded:
                if packets >= drop:
                    out.mux(packet)
                packets += 1

        out.metadata["title"] = f"{path.stem}"  # the release's names carry the order
        sound = out.add_stream("aac", rate=8000) if audio else None
        for i in range(frames_of(part)):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p")
            frame.pts, frame.time_base = first_pts + i, Fraction(1, FPS)
            mux(stream.encode(frame))
        mux(stream.encode(None))
        if sound is not None:
            _write_silence(out, sound, 8000 * frames_of(part) // FPS)
    return path


def _video_stream(out, codec: str, b_frames: int | None, keyint: int | None):
    stream = out.add_stream(codec, rate=FPS)
    stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
    if b_frames is not None:
        stream.codec_context.max_b_frames = b_frames
    if keyint is not None:
        stream.codec_context.max_b_frames = 0
        stream.options = {"x264-params": f"keyint={keyint}:min-keyint={keyint}:scenecut=0"}
    return stream


def _write_silence(out, sound, samples: int) -> None:
    tone = np.zeros((1, samples), np.float32)
    for offset in range(0, tone.shape[1], 1024):
        chunk = av.AudioFrame.from_ndarray(
            tone[:, offset : offset + 1024], format="fltp", layout="mono"
        )
        chunk.sample_rate, chunk.pts = 8000, offset
        for packet in sound.encode(chunk):
            out.mux(packet)
    for packet in sound.encode(None):
        out.mux(packet)


def write_audio_only(path: Path) -> Path:
    with av.open(str(path), "w", format="mp4") as out:
        sound = out.add_stream("aac", rate=8000)
        frame = av.AudioFrame.from_ndarray(
            np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
        )
        frame.sample_rate, frame.pts = 8000, 0
        for packet in [*sound.encode(frame), *sound.encode(None)]:
            out.mux(packet)
    return path


SPREAD = "0urCWWYE3F0"  # 5 steps, parts in folders 00 and 01, repeated step labels
BFRAMES = "12UiaKVkjEY"  # 4 steps, B-frames
REENCODED = "1JK9hR_Y8Mc"  # 5 steps, part 2 is MPEG-4 Part 2: cannot be remuxed
MISSING = "06NsSFYAPJQ"  # 5 steps, parts 1 and 3 only (as in the release's 00/)
FEWER = "0IfvdV2McQs"  # 5 steps, parts 1..4
UNKNOWN = "11YgWtB-VwY"  # not in the bundled annotations
EMPTY = "1H7_Nl_U7rw"  # 5 steps, part 3 has 0 bytes
NO_VIDEO = "-4IHddE4D5w"  # 6 steps, part 4 is audio only
OFFSET = "-41H11OPNWQ"  # 2 steps, part 2's timestamps start at 2 s
NOT_ON_KEY = "-0bbAfOuh-M"  # 3 steps, part 1 starts 2 frames before a keyframe
EIGHT = "-9YRqcF6fdQ"  # 8 steps: all 8 parts there, but SPLICE takes 2..7
GARBAGE = "-287EWnKCKk"  # 3 steps, part 2 is not a video file
POINTER = "-3C-VGhs2mo"  # 3 steps, part 1 is a Git LFS pointer (a clone without LFS)
IMPORTED = {SPREAD, BFRAMES, REENCODED, OFFSET, NOT_ON_KEY}
KEYINT = 4  # NOT_ON_KEY's part 1: packets 2, 3 dropped with nothing to decode them from


def make_release(root: Path) -> Path:
    seg = root / SEGMENTS_DIR
    _write_importable(seg)
    _write_unusable(seg)
    return root


def _write_importable(seg: Path) -> None:
    for k in range(1, 6):
        write_part(seg / ("00" if k in (1, 2, 4) else "01") / f"{SPREAD}_part_{k}.mp4", k)
    for k in range(1, 5):
        write_part(seg / "03" / f"{BFRAMES}_part_{k}.mp4", k, b_frames=2)
    for k in range(1, 6):
        codec = "mpeg4" if k == 2 else "libx264"
        write_part(seg / "02" / f"{REENCODED}_part_{k}.mp4", k, codec=codec)
    for k in (1, 2):
        write_part(seg / "06" / f"{OFFSET}_part_{k}.mp4", k, first_pts=20 if k == 2 else 0)
    for k in (1, 2, 3):
        write_part(
            seg / "06" / f"{NOT_ON_KEY}_part_{k}.mp4",
            k,
            **({"keyint": KEYINT, "drop": 2} if k == 1 else {}),
        )


def _write_unusable(seg: Path) -> None:
    for k in (1, 3):
        write_part(seg / "00" / f"{MISSING}_part_{k}.mp4", k)
    for k in range(1, 5):
        write_part(seg / "01" / f"{FEWER}_part_{k}.mp4", k, audio=False)
    for k in range(1, 6):
        write_part(seg / "04" / f"{UNKNOWN}_part_{k}.mp4", k)
    for k in range(1, 6):
        path = seg / "04" / f"{EMPTY}_part_{k}.mp4"
        write_part(path, k) if k != 3 else path.write_bytes(b"")
    for k in range(1, 7):
        path = seg / "05" / f"{NO_VIDEO}_part_{k}.mp4"
        write_audio_only(path) if k == 4 else write_part(path, k)
    for k in range(1, 9):
        write_part(seg / "07" / f"{EIGHT}_part_{k}.mp4", k)
    (seg / "07" / "notes.txt").write_text("not a clip", "utf-8")
    for k in (1, 2, 3):
        path = seg / "08" / f"{GARBAGE}_part_{k}.mp4"
        path.write_bytes(b"not a video " * 100) if k == 2 else write_part(path, k)
        path = seg / "08" / f"{POINTER}_part_{k}.mp4"
        pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 2000000\n"
        path.write_text(pointer, "utf-8") if k == 1 else write_part(path, k)
