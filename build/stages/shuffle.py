"""Stage 5: give each video's clips their shuffled labels ("Video 1" ... "Video n").

The permutation of a video must depend on (seed, video id) alone, so that adding or
dropping videos, the worker that cut it, the Python or NumPy version and the order of the
build never change it. It is therefore spelled out here instead of borrowed from a
library whose stream may change: a Fisher-Yates shuffle whose random numbers come from
SHA-256 in counter mode,

    block(c) = sha256(f"splice-shuffle/v1\\n{seed}\\n{video_id}\\n{c}"), c = 0, 1, ...

read as consecutive big-endian 64-bit words. For i = n-1 down to 1, j is drawn uniformly
from 0..i by rejection (words >= the largest multiple of i+1 below 2**64 are discarded) and
positions i and j are swapped. Any language with SHA-256 can recompute a SPLICE shuffle.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from splice_build.records import CutVideo, ShuffledVideo

_WORD = 8  # bytes per random word
_SPAN = 1 << (8 * _WORD)


def _words(seed: int, video_id: str) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(f"splice-shuffle/v1\n{seed}\n{video_id}\n{counter}".encode())
        digest = block.digest()
        for k in range(0, len(digest), _WORD):
            yield int.from_bytes(digest[k : k + _WORD], "big")
        counter += 1


def permutation(seed: int, video_id: str, n: int) -> tuple[int, ...]:
    """A uniform random permutation of ``range(n)`` determined by (seed, video_id).

    ``perm[k]`` is the chronological index (0-based) of the clip shown as label ``k + 1``.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if n < 0:
        raise ValueError(f"video {video_id}: cannot permute {n} clips")
    perm = list(range(n))
    words = _words(seed, video_id)
    for i in range(n - 1, 0, -1):
        bound = _SPAN - _SPAN % (i + 1)  # accept words below the largest multiple of i+1
        word = next(words)
        while word >= bound:
            word = next(words)
        j = word % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def answer_order(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The labels of the clips in chronological order (the metric's reference) for a
    `permutation`: ``order[perm[k]] == k + 1``. Scorers that shuffle without cutting
    (the taxonomy-prior baseline) must derive the answer the same way as the build."""
    order = [0] * len(perm)
    for label_index, chrono in enumerate(perm):
        order[chrono] = label_index + 1
    return tuple(order)


def shuffle(cut: CutVideo, seed: int) -> ShuffledVideo:
    """Relabel a video's chronological clips in the order of its permutation.

    ``clips`` and ``steps`` of the result are in label order (``clips[k - 1]`` is "Video
    k"); ``order[i]`` is the label of the i-th chronological clip, the metric's reference.
    """
    entry = cut.entry
    n = len(cut.clips)
    if n != entry.num_steps:
        raise ValueError(f"video {entry.video_id}: {n} clips for {entry.num_steps} steps")
    indices = [c.step_index for c in cut.clips]
    if indices != list(range(n)):
        raise ValueError(
            f"video {entry.video_id}: clips not in chronological step order: {indices}"
        )
    perm = permutation(seed, entry.video_id, n)
    return ShuffledVideo(
        entry=entry,
        clips=tuple(cut.clips[p] for p in perm),
        steps=tuple(entry.steps[p] for p in perm),
        order=answer_order(perm),
    )


__all__ = ["answer_order", "permutation", "shuffle"]
