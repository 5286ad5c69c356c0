"""The derived question formats (``splice_formats``) over the real bundled annotations:
deterministic, balanced, and giving nothing away through option position, the clip shown
first or how the options relate."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter

import pytest

import splice_formats as sf
from splice_build.stages.ingest import load_annotations
from splice_build.stages.shuffle import answer_order, permutation
from tests.support.paths import REPO

SEED = 0  # the build's default seed and the questions' default seed


@pytest.fixture(scope="module")
def videos() -> list[tuple[str, tuple[int, ...]]]:
    """(video id, answer order) of every bundled video with 2..7 steps, shuffled as a build
    with the default seed shuffles it."""
    entries = load_annotations(REPO / "build/data/coin/COIN_public_10070.json").entries
    out = []
    for e in entries:
        n = len(e.steps)
        if 2 <= n <= 7:
            out.append((e.video_id, answer_order(permutation(SEED, e.video_id, n))))
    assert len(out) > 5000
    return out


def chi_square_p(counts: list[int], expected: list[float]) -> float:
    """Upper tail of the chi-square statistic (Wilson-Hilferty), enough for a bound."""
    stat = sum((c - e) ** 2 / e for c, e in zip(counts, expected, strict=True))
    df = len(counts) - 1
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def test_pairwise_pairs_cover_every_clip_and_the_first_last_pair(videos):
    for vid, order in videos:
        n = len(order)
        pairs = sf.pair_positions(SEED, vid, n)
        assert len(set(pairs)) == len(pairs)
        if n <= sf.ALL_PAIRS_UP_TO:
            assert len(pairs) == n * (n - 1) // 2
        else:
            assert len(pairs) == n and (0, n - 1) in pairs
            assert {i for p in pairs for i in p} == set(range(n))


def test_pairwise_answers_are_right_and_the_first_shown_clip_is_balanced(videos):
    by_answer = Counter()
    per_video_gap = 0
    for vid, order in videos:
        qs = sf.pairwise_questions(SEED, vid, order)
        position = {label: i for i, label in enumerate(order)}
        firsts = 0
        for q in qs:
            (a,), (b,) = q.options
            assert q.answer == (1 if position[a] < position[b] else 2)
            firsts += q.answer == 1
            by_answer[q.answer] += 1
        per_video_gap = max(per_video_gap, abs(2 * firsts - len(qs)))
    assert per_video_gap <= 1  # exactly half of each video's pairs, one off for odd counts
    total = sum(by_answer.values())
    assert abs(by_answer[1] / total - 0.5) < 0.01
    assert chi_square_p([by_answer[1], by_answer[2]], [total / 2] * 2) > 1e-3


def test_choice_options_follow_the_fixed_rules(videos):
    for vid, order in videos:
        q = sf.choice_question(SEED, vid, order)
        n = len(order)
        assert len(q.options) == min(4, math.factorial(n))
        assert len(set(q.options)) == len(q.options)
        assert q.options[q.answer - 1] == order
        assert tuple(order[::-1]) in q.options
        assert all(sorted(o) == sorted(order) for o in q.options)


def _adjacent_swap(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1


def test_the_truth_cannot_be_told_by_how_the_options_relate(videos):
    """Every option has the same partners (its reverse, an adjacent swap) among the others,
    so a guesser reading only the options is at chance."""
    for vid, order in videos:
        q = sf.choice_question(SEED, vid, order)
        shapes = {
            (
                tuple(o[::-1]) in q.options,
                sum(_adjacent_swap(o, p) for p in q.options),
            )
            for o in q.options
        }
        assert len(shapes) == 1, (vid, q.options)


@pytest.mark.parametrize("k", [2, 4])
def test_the_true_letter_is_balanced(videos, k):
    positions = Counter()
    for vid, order in videos:
        q = sf.choice_question(SEED, vid, order)
        if len(q.options) == k:
            positions[q.answer] += 1
    total = sum(positions.values())
    assert total > 500
    for letter in range(1, k + 1):
        assert abs(positions[letter] / total - 1 / k) < 0.03, positions
    assert chi_square_p([positions[i] for i in range(1, k + 1)], [total / k] * k) > 1e-3


def test_labels_and_position_are_independent_of_the_answer(videos):
    """Which label the right option or the first-shown clip carries, against the answer."""
    table = Counter()
    for vid, order in videos:
        for q in sf.pairwise_questions(SEED, vid, order):
            table[(q.options[0][0] < q.options[1][0], q.answer)] += 1
    total = sum(table.values())
    rows = [table[(True, 1)], table[(True, 2)], table[(False, 1)], table[(False, 2)]]
    low_first = (rows[0] + rows[1]) / total
    ans1 = (rows[0] + rows[2]) / total
    expected = [total * x * y for x in (low_first, 1 - low_first) for y in (ans1, 1 - ans1)]
    assert chi_square_p(rows, expected) > 1e-3


def _all_rows(seed: int) -> str:
    from splice_build.stages.ingest import BUNDLED_ANNOTATIONS

    out = []
    for e in load_annotations(BUNDLED_ANNOTATIONS).entries:
        if 2 <= len(e.steps) <= 7:
            order = answer_order(permutation(seed, e.video_id, len(e.steps)))
            for fmt in sf.QUESTION_FORMATS:
                out += [q.__dict__ for q in sf.questions(fmt, seed, e.video_id, order)]
    return json.dumps(out)


def test_two_runs_give_byte_identical_questions():
    code = "import sys, tests.test_splice_formats as t; sys.stdout.write(t._all_rows(0))"
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            capture_output=True,
            check=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(h)},
        ).stdout
        for h in (1, 2)
    ]
    assert runs[0] == runs[1] and len(runs[0]) > 10_000


def test_small_videos():
    q = sf.choice_question(SEED, "v", (2, 1))
    assert sorted(q.options) == [(1, 2), (2, 1)]
    assert [len(x.options) for x in sf.pairwise_questions(SEED, "v", (2, 1))] == [2]
    with pytest.raises(ValueError, match="video 'v'"):
        sf.choice_question(SEED, "v", (1, 1))


def test_the_standalone_metric_keeps_the_formats_names_and_letters() -> None:
    """splice_metric stands alone (evaluate copies its own files only, and the Space ships
    them), so it keeps copies of the format names and answer letters: they must agree."""
    from splice_metric import questions

    assert questions.QUESTION_CONFIGS == sf.QUESTION_FORMATS
    assert questions.LETTERS == sf.LETTERS
