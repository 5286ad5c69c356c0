"""Which of a video's formats to fetch: the cutter caps the clips' short side, so anything
much larger is wasted bandwidth and anything smaller is upscaled. Pure functions of
yt-dlp's format list, so the choice is testable without a network."""

from __future__ import annotations

from typing import Any


def format_short_side(fmt: dict[str, Any]) -> int | None:
    width, height = fmt.get("width"), fmt.get("height")
    if width and height:
        return min(width, height)
    return height or None


def _size(fmt: dict[str, Any]) -> float:
    return fmt.get("filesize") or fmt.get("filesize_approx") or fmt.get("tbr") or float("inf")


def choose_format(
    formats: list[dict[str, Any]], short_side: int, audio: bool = False, can_merge: bool = False
) -> str | None:
    """A yt-dlp format spec for the cutter: the smallest format whose short side is at least
    ``short_side`` (the clips' cap: a smaller one would be upscaled), else the best below it.

    Video only unless ``audio``; with audio, a format that carries sound, or the chosen
    video plus the best audio when ffmpeg can merge them. A format of unknown size (a
    mirror's direct file) is taken as it is. Any container and codec PyAV decodes will do.
    """
    video = [f for f in formats if f.get("vcodec") != "none" and f.get("ext") != "mhtml"]
    if not video:
        return None
    if not audio:
        pool = [f for f in video if f.get("acodec") == "none"] or video
    elif can_merge:
        pool = video
    else:
        pool = [f for f in video if f.get("acodec") != "none"] or video
    known = [f for f in pool if format_short_side(f)]
    above = [f for f in known if format_short_side(f) >= short_side]
    if above:
        chosen = min(above, key=lambda f: (format_short_side(f), _size(f)))
    elif known:
        chosen = max(known, key=lambda f: (format_short_side(f), -_size(f)))
    else:
        chosen = pool[-1]  # yt-dlp lists formats worst first
    spec = str(chosen["format_id"])
    if audio and can_merge and chosen.get("acodec") == "none":
        spec += "+bestaudio"
    return spec
