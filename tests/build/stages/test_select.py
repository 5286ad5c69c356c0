"""Selection on the real COIN annotations: step range, seeded subset, curation, limit."""

from __future__ import annotations

import csv
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from splice_build.records import VideoEntry
from splice_build.stages.ingest import load_annotations
from splice_build.stages.select import Selection, load_curation, select, subset_rank
from splice_dataset import MAX_CLIPS, MIN_CLIPS


@pytest.fixture(scope="module")
def entries(coin_json_path: Path) -> list[VideoEntry]:
    return load_annotations(coin_json_path).entries


@pytest.fixture(scope="module")
def expected_2_to_7(coin_dir: Path) -> set[str]:
    """Ids of the real file's videos with 2..7 steps, from COIN's own summary table."""
    with open(coin_dir / "coin_videos_all11827_summary.csv", newline="") as f:
        return {
            r["video_id"]
            for r in csv.DictReader(f)
            if r["has_timestamps_in_pdpp"] == "1" and MIN_CLIPS <= int(r["n_steps"]) <= MAX_CLIPS
        }


def _accounted(sel: Selection, entries: list[VideoEntry]) -> None:
    """Every video is either selected or skipped, exactly once."""
    chosen = [e.video_id for e in sel.selected]
    skipped = [s.video_id for s in sel.skips]
    assert chosen == sorted(chosen)
    assert sorted(chosen + skipped) == sorted(e.video_id for e in entries)
    assert all(s.stage == "select" for s in sel.skips)


def _curation(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "curation.csv"
    path.write_text("video_id,decision,reason\n" + "".join(r + "\n" for r in rows))
    return path


def test_step_range_on_the_real_file(entries: list[VideoEntry], expected_2_to_7: set[str]) -> None:
    sel = select(entries)
    _accounted(sel, entries)
    assert {e.video_id for e in sel.selected} == expected_2_to_7
    assert len(sel.selected) == 2729 + 2694 + 2070 + 1002 + 617 + 346
    by_id = {e.video_id: e for e in entries}
    for skip in sel.skips:
        n = by_id[skip.video_id].num_steps
        assert skip.reason == f"{n} steps, outside 2..7"


def test_seeded_subset_is_deterministic_and_seed_dependent(entries: list[VideoEntry]) -> None:
    a = select(entries, subset_size=3600, seed=0)
    shuffled = list(entries)
    random.Random(1).shuffle(shuffled)
    b = select(shuffled, subset_size=3600, seed=0)
    c = select(entries, subset_size=3600, seed=1)
    _accounted(a, entries)
    assert len(a.selected) == 3600
    assert a == b  # input order does not matter
    assert len({e.video_id for e in a.selected} & {e.video_id for e in c.selected}) < 3000
    drawn_out = [s for s in a.skips if s.reason.startswith("not drawn")]
    assert len(drawn_out) == 9458 - 3600
    assert drawn_out[0].reason == (
        "not drawn in the seeded subset of 3600 (seed 0) from 9458 videos with 2..7 steps"
    )
    # the subset is the 3600 smallest ranks among eligible videos
    ranks = sorted(subset_rank(0, e.video_id) for e in entries if 2 <= e.num_steps <= 7)
    assert max(subset_rank(0, e.video_id) for e in a.selected) == ranks[3599]


def test_seeded_subset_is_stable_when_videos_come_and_go(entries: list[VideoEntry]) -> None:
    full = {e.video_id for e in select(entries, subset_size=1000, seed=7).selected}
    half = [e for i, e in enumerate(entries) if i % 2 == 0]
    from_half = {e.video_id for e in select(half, subset_size=1000, seed=7).selected}
    # adding videos can only push drawn videos out, never pull an undrawn one in
    assert full & {e.video_id for e in half} <= from_half
    # dropping videos that were not drawn changes nothing
    kept = [e for i, e in enumerate(entries) if e.video_id in full or i % 3]
    assert {e.video_id for e in select(kept, subset_size=1000, seed=7).selected} == full


def test_seeded_subset_is_a_fair_sample(entries: list[VideoEntry]) -> None:
    """Per-domain shares of a 3,600 draw stay near those of all eligible videos."""
    eligible = [e for e in entries if 2 <= e.num_steps <= 7]
    drawn = select(entries, subset_size=3600, seed=0).selected
    share = Counter(e.domain for e in eligible)
    got = Counter(e.domain for e in drawn)
    chi2 = sum(
        (got[d] - 3600 * n / len(eligible)) ** 2 / (3600 * n / len(eligible))
        for d, n in share.items()
    )
    assert chi2 < 40  # 11 degrees of freedom: p < 1e-4 for a fair draw


def test_subset_larger_than_eligible_keeps_all(entries: list[VideoEntry]) -> None:
    assert len(select(entries, subset_size=20000).selected) == 9458


def test_curation_on_top_of_the_draw(tmp_path: Path, entries: list[VideoEntry]) -> None:
    base = select(entries, subset_size=100, seed=0)
    drawn = [e.video_id for e in base.selected]
    undrawn = next(s.video_id for s in base.skips if s.reason.startswith("not drawn"))
    too_long = next(e.video_id for e in entries if e.num_steps == 9)
    path = _curation(
        tmp_path,
        [
            f'{drawn[0]},exclude,"shaky, hands only"',
            f"{undrawn},include,clear steps",
            f"{drawn[1]},include,already in",
            f"{too_long},include,wanted",
            "XXXXXXXXXXX,exclude,not in this file",
        ],
    )
    sel = select(entries, subset_size=100, seed=0, curation=path)
    _accounted(sel, entries)
    chosen = {e.video_id for e in sel.selected}
    assert chosen == set(drawn) - {drawn[0]} | {undrawn}
    reasons = {s.video_id: s.reason for s in sel.skips}
    assert reasons[drawn[0]] == "curation exclude (line 2): shaky, hands only"
    assert reasons[too_long] == "9 steps, outside 2..7"
    assert sel.warnings == [
        f"curation line 5: include of {too_long} ignored: 9 steps, outside 2..7",
        "curation line 6: XXXXXXXXXXX (exclude) is not among the ingested videos",
    ]
    # a decision mapping works as well as a path
    assert select(entries, subset_size=100, seed=0, curation=load_curation(path)) == sel


def test_curation_exclude_without_subset(tmp_path: Path, entries: list[VideoEntry]) -> None:
    first = select(entries).selected[0].video_id
    sel = select(entries, curation=_curation(tmp_path, [f"{first},exclude,duplicate upload"]))
    assert first not in {e.video_id for e in sel.selected}
    assert len(sel.selected) == 9458 - 1


def test_limit_keeps_the_first_by_id(entries: list[VideoEntry]) -> None:
    full = select(entries, subset_size=500, seed=3)
    sel = select(entries, subset_size=500, seed=3, limit=10)
    _accounted(sel, entries)
    assert sel.selected == full.selected[:10]
    limited = [s for s in sel.skips if s.reason == "beyond --limit 10"]
    assert [s.video_id for s in limited] == [e.video_id for e in full.selected[10:]]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id,decision,reason\n", "line 1: header must be video_id,decision,reason"),
        ("", "line 1: header must be"),
        ("video_id,decision,reason\nabc,maybe,x\n", "line 2: decision 'maybe' is not include"),
        ("video_id,decision,reason\n\nabc,exclude,\n", "line 3: abc: a reason is required"),
        ("video_id,decision,reason\nabc,exclude\n", "line 2: expected 3 fields"),
        ("video_id,decision,reason\nabc,exclude,a,b\n", "line 2: expected 3 fields"),
        ("video_id,decision,reason\n,exclude,a\n", "line 2: empty video_id"),
        (
            "video_id,decision,reason\nabc,exclude,a\nabc,include,b\n",
            "line 3: abc already listed on line 2",
        ),
    ],
)
def test_bad_curation_file_names_file_and_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "my_curation.csv"
    path.write_text(body)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        load_curation(path)
    assert "my_curation.csv" in str(info.value)


def test_bad_arguments_are_refused(entries: list[VideoEntry]) -> None:
    with pytest.raises(ValueError, match="min_steps"):
        select(entries, min_steps=5, max_steps=3)
    with pytest.raises(ValueError, match="subset_size"):
        select(entries, subset_size=-1)
    with pytest.raises(ValueError, match="limit"):
        select(entries, limit=-1)
    with pytest.raises(ValueError, match=entries[0].video_id):
        select([entries[0], entries[0]])
