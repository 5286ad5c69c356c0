"""Per-video shuffles: reproducible, independent of other videos, uniform, consistent."""

from __future__ import annotations

import hashlib
from collections import Counter
from itertools import permutations
from pathlib import Path

import pytest

from splice_build.records import Clip, CutVideo, SourceInfo, VideoEntry
from splice_build.stages.ingest import load_annotations
from splice_build.stages.shuffle import permutation, shuffle


@pytest.fixture(scope="module")
def entries(coin_json_path: Path) -> list[VideoEntry]:
    return [e for e in load_annotations(coin_json_path).entries if 2 <= e.num_steps <= 7]


def _cut(entry: VideoEntry) -> CutVideo:
    """A CutVideo as cut.py returns it; shuffle never opens the files, so none are made."""
    source = SourceInfo(
        path=Path(f"videos/{entry.video_id}.mp4"),
        container="mov,mp4,m4a,3gp,3g2,mj2",
        codec="h264",
        width=640,
        height=360,
        fps=25.0,
        duration=entry.duration,
        start_time=0.0,
        has_audio=False,
    )
    clips = tuple(
        Clip(
            step_index=i,
            path=Path(f"work/{entry.video_id}/step{i}.mp4"),
            duration=s.end - s.start,
            num_frames=round(25 * (s.end - s.start)),
            first_time=s.start,
            last_time=s.end - 0.04,
            width=640,
            height=360,
        )
        for i, s in enumerate(entry.steps)
    )
    return CutVideo(entry=entry, source=source, clips=clips)


def _reference_permutation(seed: int, video_id: str, n: int) -> list[int]:
    """The algorithm as the module docstring specifies it, written out independently."""
    stream = b"".join(
        hashlib.sha256(f"splice-shuffle/v1\n{seed}\n{video_id}\n{c}".encode()).digest()
        for c in range(8)
    )
    words = [int.from_bytes(stream[k : k + 8], "big") for k in range(0, len(stream), 8)]
    perm, w = list(range(n)), 0
    for i in reversed(range(1, n)):
        while words[w] >= 2**64 - 2**64 % (i + 1):
            w += 1
        j, w = words[w] % (i + 1), w + 1
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def test_permutation_follows_its_specification(entries: list[VideoEntry]) -> None:
    for e in entries[:2000]:
        for seed in (0, 42):
            assert list(permutation(seed, e.video_id, e.num_steps)) == _reference_permutation(
                seed, e.video_id, e.num_steps
            )


def test_permutation_is_reproducible_and_a_permutation() -> None:
    for n in range(0, 10):
        p = permutation(3, "4MiubN1oQkg", n)
        assert sorted(p) == list(range(n))
        assert p == permutation(3, "4MiubN1oQkg", n)
    assert permutation(0, "4MiubN1oQkg", 7) == (
        5,
        0,
        1,
        3,
        4,
        2,
        6,
    )  # pinned: published shuffles must never change


def test_seed_and_video_id_both_matter(entries: list[VideoEntry]) -> None:
    ids = [e.video_id for e in entries[:500]]
    same_seed_diff = sum(permutation(0, v, 7) != permutation(1, v, 7) for v in ids)
    assert same_seed_diff > 450  # 1/5040 chance of equality each
    assert len({permutation(0, v, 7) for v in ids}) > 400


def test_uniform_over_the_six_orders_of_three() -> None:
    ids = [f"video{i:05d}" for i in range(6000)]
    counts = Counter(permutation(0, v, 3) for v in ids)
    assert set(counts) == set(permutations(range(3)))
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 25  # 5 degrees of freedom: p ~ 1e-4 for a uniform shuffle


def test_every_position_is_uniform_for_seven(entries: list[VideoEntry]) -> None:
    n, trials = 7, len(entries)
    where = Counter()
    for e in entries:
        for label_index, chrono in enumerate(permutation(5, e.video_id, n)):
            where[(chrono, label_index)] += 1
    expected = trials / n
    chi2 = sum((where[(c, k)] - expected) ** 2 / expected for c in range(n) for k in range(n))
    # 49 cells of Binomial(trials, 1/7): the statistic has mean 49 * 6/7 = 42 and, measured
    # against random.shuffle, a standard deviation near 10; 90 is about 5 of them above.
    assert chi2 < 90


def test_shuffle_unchanged_when_other_videos_are_added(entries: list[VideoEntry]) -> None:
    small = entries[:50]
    large = entries[:50] + entries[3000:3500]
    first = {e.video_id: shuffle(_cut(e), seed=9) for e in small}
    again = {e.video_id: shuffle(_cut(e), seed=9) for e in reversed(large)}
    assert all(first[v] == again[v] for v in first)


def test_shuffled_video_is_consistent(entries: list[VideoEntry]) -> None:
    for e in entries[:1000]:
        cut = _cut(e)
        video = shuffle(cut, seed=0)
        n = e.num_steps
        assert video.entry is e
        assert sorted(video.order) == list(range(1, n + 1))
        # label order -> chronological via order
        assert tuple(video.steps[label - 1] for label in video.order) == e.steps
        assert tuple(video.clips[label - 1] for label in video.order) == cut.clips
        # label k shows the clip of permutation()[k - 1]
        perm = permutation(0, e.video_id, n)
        assert tuple(c.step_index for c in video.clips) == perm
        assert all(video.steps[k] == e.steps[c.step_index] for k, c in enumerate(video.clips))


def test_shuffle_refuses_mismatched_clips(entries: list[VideoEntry]) -> None:
    e = next(x for x in entries if x.num_steps == 4)
    cut = _cut(e)
    with pytest.raises(ValueError, match=f"{e.video_id}: 3 clips for 4 steps"):
        shuffle(CutVideo(entry=e, source=cut.source, clips=cut.clips[:3]), seed=0)
    swapped = (cut.clips[1], cut.clips[0], *cut.clips[2:])
    with pytest.raises(ValueError, match="not in chronological step order"):
        shuffle(CutVideo(entry=e, source=cut.source, clips=swapped), seed=0)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        permutation("0", "abc", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="abc"):
        permutation(0, "abc", -1)
