"""Per-video scores stored compactly in ``score.json``, so ranking a thousand entries reads
a few kilobytes each instead of their prediction files. Every paper metric of one video is
a small whole number once multiplied by its clip count where it is a share (Hamming: clips
in place; LCS: its length) or as it is (binary, edit distance): one byte per video. A row
whose values are not whole (the random row's expectations) is stored as float32.
"""

from __future__ import annotations

import base64

import numpy as np

# metric -> whether its per-video value is a share of the video's clips
_PER_CLIP = {
    "binary_accuracy": False,
    "hamming_accuracy": True,
    "lcs_ratio": True,
    "edit_distance": False,
}


def encode(metric: str, values: np.ndarray, num_clips: np.ndarray) -> dict[str, str]:
    scaled = values * num_clips if _PER_CLIP[metric] else values
    whole = np.rint(scaled)
    if (
        np.all(np.abs(scaled - whole) < 1e-6)
        and whole.min(initial=0) >= 0
        and whole.max(initial=0) <= 255
    ):
        data, dtype = whole.astype(np.uint8).tobytes(), "u1"
    else:
        data, dtype = np.asarray(values, dtype="<f4").tobytes(), "f4"
    return {"dtype": dtype, "data": base64.b64encode(data).decode("ascii")}


def decode(metric: str, stored: dict[str, str], num_clips: np.ndarray) -> np.ndarray:
    raw = base64.b64decode(stored["data"])
    if stored["dtype"] == "f4":
        values = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    elif stored["dtype"] == "u1":
        values = np.frombuffer(raw, dtype=np.uint8).astype(np.float32)
        if _PER_CLIP[metric]:
            values = values / num_clips
    else:
        raise ValueError(f"unknown per-video encoding {stored['dtype']!r}")
    if len(values) != len(num_clips):
        raise ValueError(f"{len(values)} per-video values for {len(num_clips)} videos")
    return values
