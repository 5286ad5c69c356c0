"""The derived question formats of SPLICE: the same built videos asked as pairwise "which
came first?" questions or as multiple choice over candidate orders.

Pure and standard-library only, so the loader (``splice_dataset``), the model side
(``splice_eval``) and the lmms-eval task all derive the same questions from a row, and any
language with SHA-256 can recompute them. A question depends on (seed, video_id, the
video's answer order) alone: never on the set it is asked in, the machine or the Python
version. Random numbers come from SHA-256 in counter mode, as the build's shuffle::

    block(c) = sha256(f"splice-questions/v1\\n{format}\\n{purpose}\\n{seed}\\n{video_id}\\n{c}")

read as big-endian 64-bit words, an integer in 0..m-1 drawn by rejection.

``pairwise``: with n clips, every pair (i < j, chronological positions) for n <= 4; for
n > 4, n pairs: the first/last pair, then pairs covering each clip not yet covered (taken
in a seeded order), then further pairs in that order. The pairs are asked in a seeded
order, and exactly half of a video's pairs (for an odd count, the extra one decided by
the video's own draw) show the earlier clip first; option 1 is the clip shown first.

``choice``: k = min(4, n!) candidate orders: the truth, its reverse, one adjacent swap of
the truth (at a seeded position), and the reverse of that swap; duplicates (n = 2: the
swap is the reverse) are dropped keeping the first. The fourth option is the reverse of
the swap rather than an arbitrary permutation so that the option set is closed under
reversal and every option has one reversed and one adjacent-swap partner among the
others: the truth cannot be singled out by how the options relate (with a random fourth
option it is the only one with both partners present). The truth's position is the
video's draw from 0..k-1 (balanced across any large set: each letter within sampling
error of 1/k), the distractors fill the other places in a seeded order.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

ORDER = "order"
PAIRWISE = "pairwise"
CHOICE = "choice"
FORMATS = (ORDER, PAIRWISE, CHOICE)
QUESTION_FORMATS = (PAIRWISE, CHOICE)
DEFAULT_SEED = 0
CHOICE_OPTIONS = 4  # k, fewer when n! < k
ALL_PAIRS_UP_TO = 4  # every pair asked for n <= this; n sampled pairs above
LETTERS = "ABCDEFGH"
QUESTION_SEPARATOR = "/"  # a pairwise question id is f"{video_id}/p{index}"

_WORD = 8
_SPAN = 1 << (8 * _WORD)


@dataclass(frozen=True)
class Question:
    """One question about one video. ``options`` are label sequences in the row's label
    space (clip ``k`` is the row's clip labelled ``k``): for ``pairwise`` two one-clip
    options in the order shown, ``((a,), (b,))``; for ``choice`` candidate chronological
    orders. ``answer`` is the 1-based number of the right option."""

    format: str
    question_id: str
    video_id: str
    options: tuple[tuple[int, ...], ...]
    answer: int

    @property
    def shown(self) -> tuple[int, ...]:
        """The labels of the clips the question shows, in the order shown."""
        if self.format == PAIRWISE:
            return tuple(option[0] for option in self.options)
        return tuple(sorted(self.options[0]))

    @property
    def chance(self) -> float:
        return 1.0 / len(self.options)


class _Draws:
    """Integers drawn from one SHA-256 stream (see the module docstring)."""

    def __init__(self, fmt: str, purpose: str, seed: int, video_id: str) -> None:
        self._words = self._stream(f"splice-questions/v1\n{fmt}\n{purpose}\n{seed}\n{video_id}")

    @staticmethod
    def _stream(prefix: str) -> Iterator[int]:
        for counter in itertools.count():
            digest = hashlib.sha256(f"{prefix}\n{counter}".encode()).digest()
            for k in range(0, len(digest), _WORD):
                yield int.from_bytes(digest[k : k + _WORD], "big")

    def below(self, m: int) -> int:
        limit = _SPAN - _SPAN % m
        while (word := next(self._words)) >= limit:
            pass
        return word % m

    def shuffled(self, items: Sequence) -> list:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def _check(video_id: str, order: Sequence[int]) -> tuple[int, ...]:
    labels = tuple(int(x) for x in order)
    if sorted(labels) != list(range(1, len(labels) + 1)) or len(labels) < 2:
        raise ValueError(f"video {video_id!r}: answer order {list(order)} is not a permutation")
    return labels


def pair_positions(seed: int, video_id: str, n: int) -> list[tuple[int, int]]:
    """The chronological position pairs (i < j) asked about a video of ``n`` clips."""
    every = list(itertools.combinations(range(n), 2))
    if n <= ALL_PAIRS_UP_TO:
        return every
    draws = _Draws(PAIRWISE, "pairs", seed, video_id)
    ranked = draws.shuffled([p for p in every if p != (0, n - 1)])
    chosen, covered = [(0, n - 1)], {0, n - 1}
    for pair in ranked:
        if not set(pair) <= covered:
            chosen.append(pair)
            covered |= set(pair)
    chosen += [p for p in ranked if p not in chosen][: max(0, n - len(chosen))]
    return sorted(chosen)


def pairwise_questions(seed: int, video_id: str, order: Sequence[int]) -> list[Question]:
    """A video's pairwise questions, in the order asked (see the module docstring)."""
    labels = _check(video_id, order)
    draws = _Draws(PAIRWISE, "ask", seed, video_id)
    pairs = draws.shuffled(pair_positions(seed, video_id, len(labels)))
    earlier_first = len(pairs) // 2 + (len(pairs) % 2 and draws.below(2))
    flags = draws.shuffled([True] * earlier_first + [False] * (len(pairs) - earlier_first))
    questions = []
    for index, ((i, j), first) in enumerate(zip(pairs, flags, strict=True)):
        a, b = (labels[i], labels[j]) if first else (labels[j], labels[i])
        qid = f"{video_id}{QUESTION_SEPARATOR}p{index}"
        questions.append(Question(PAIRWISE, qid, video_id, ((a,), (b,)), 1 if first else 2))
    return questions


def choice_question(
    seed: int, video_id: str, order: Sequence[int], k: int = CHOICE_OPTIONS
) -> Question:
    """A video's multiple-choice question (see the module docstring)."""
    truth = _check(video_id, order)
    n = len(truth)
    k = min(k, math.factorial(n))
    draws = _Draws(CHOICE, "options", seed, video_id)
    p = draws.below(n - 1)
    swap = (*truth[:p], truth[p + 1], truth[p], *truth[p + 2 :])
    candidates = [truth, truth[::-1], swap, swap[::-1]]
    distinct = list(dict.fromkeys(candidates))[:k]
    position = _Draws(CHOICE, "position", seed, video_id).below(len(distinct))
    others = draws.shuffled(distinct[1:])
    options = (*others[:position], truth, *others[position:])
    return Question(CHOICE, video_id, video_id, tuple(options), position + 1)


def questions(fmt: str, seed: int, video_id: str, order: Sequence[int]) -> list[Question]:
    """The questions of ``fmt`` about one video."""
    if fmt == PAIRWISE:
        return pairwise_questions(seed, video_id, order)
    if fmt == CHOICE:
        return [choice_question(seed, video_id, order)]
    raise ValueError(f"format {fmt!r} is not a question format ({', '.join(QUESTION_FORMATS)})")


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def video_of(question_id: str) -> str:
    """The video a question id belongs to (a choice question's id is its video's)."""
    return question_id.split(QUESTION_SEPARATOR, 1)[0]
