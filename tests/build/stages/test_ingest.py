"""Ingest on the real COIN annotations, and every skip reason on real entries made broken."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from splice_build.errors import UserError
from splice_build.output.validate.rows import check_answer
from splice_build.records import ROUNDING, Step
from splice_build.stages import taxonomy
from splice_build.stages.ingest import SEGMENT_TOLERANCE, IngestResult, load_annotations
from splice_dataset import ANSWER

BASE = "4MiubN1oQkg"  # a real ArcWeld video: 3 steps with gaps between them, 180.02 s
OTHERS = ("cam-KNnddec", "-LhNzREgSIU")  # real entries that must survive any corruption


@pytest.fixture(scope="module")
def real(coin_json_path: Path) -> IngestResult:
    return load_annotations(coin_json_path)


@pytest.fixture(scope="module")
def raw_db(coin_json_path: Path) -> dict[str, Any]:
    return json.loads(coin_json_path.read_text())["database"]


@pytest.fixture(scope="module")
def summary(coin_dir: Path) -> dict[str, dict[str, str]]:
    with open(coin_dir / "coin_videos_all11827_summary.csv", newline="") as f:
        return {r["video_id"]: r for r in csv.DictReader(f)}


def _write(tmp_path: Path, database: dict[str, Any], name: str = "coin.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"database": database}))
    return path


# --- the real file ------------------------------------------------------------------------


def test_real_file_ingests_completely(real: IngestResult, coin_json_path: Path) -> None:
    assert len(real.entries) == 10070
    assert real.skips == []
    assert real.sha256 == hashlib.sha256(coin_json_path.read_bytes()).hexdigest()
    ids = [e.video_id for e in real.entries]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_step_counts_match_the_coin_summary(
    real: IngestResult, summary: dict[str, dict[str, str]]
) -> None:
    with_times = {v: r for v, r in summary.items() if r["has_timestamps_in_pdpp"] == "1"}
    assert {e.video_id for e in real.entries} == set(with_times)
    ingested = Counter(e.num_steps for e in real.entries)
    expected = Counter(int(r["n_steps"]) for r in with_times.values())
    assert ingested == expected
    assert [ingested[n] for n in range(2, 8)] == [2729, 2694, 2070, 1002, 617, 346]
    for e in real.entries:
        row = with_times[e.video_id]
        assert e.task == row["task"] and e.domain == row["domain"], e.video_id
        assert e.recipe_type == int(row["recipe_type"]), e.video_id
        assert e.subset == row["official_subset"], e.video_id
        assert [s.step_id for s in e.steps] == [int(i) for i in row["step_ids"].split(";")]


def test_entries_are_chronological_and_inside_the_video(real: IngestResult) -> None:
    for e in real.entries:
        assert all(0 <= s.start < s.end <= e.duration + SEGMENT_TOLERANCE for s in e.steps)
        assert all(a.end <= b.start for a, b in pairwise(e.steps))


def test_one_real_entry_field_by_field(real: IngestResult, raw_db: dict[str, Any]) -> None:
    entry = next(e for e in real.entries if e.video_id == BASE)
    raw = raw_db[BASE]
    assert entry.task == raw["class"] == "ArcWeld"
    assert entry.domain == "Electrical Appliance"
    assert entry.recipe_type == raw["recipe_type"] == 41
    assert entry.subset == raw["subset"]
    assert entry.duration == raw["duration"]
    assert entry.video_url == raw["video_url"]
    assert entry.steps == tuple(
        Step(int(a["id"]), a["label"], a["segment"][0], a["segment"][1]) for a in raw["annotation"]
    )


def test_touching_steps_are_accepted(real: IngestResult) -> None:
    touching = [e for e in real.entries if any(a.end == b.start for a, b in pairwise(e.steps))]
    assert len(touching) > 100


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ([0.5, 2.9000000000000004], [2.9, 4.1], True),  # float noise, as other tools write JSON
        ([0.5, 2.9], [2.8999999999999995, 4.1], True),
        ([0.5, 2.9 + ROUNDING / 2], [2.9, 4.1], True),
        ([0.5, 2.9 + 3 * ROUNDING], [2.9, 4.1], False),  # a real overlap
        ([0.5, 3.0], [2.9, 4.1], False),
    ],
)
def test_step_boundaries_share_validates_tolerance(
    tmp_path: Path, raw_db: dict[str, Any], first: list[float], second: list[float], kept: bool
) -> None:
    """Issue 31, defect 5: touching steps with float noise were skipped at ingest as an
    overlap while validate allows ROUNDING; ingest keeps exactly what validate's row check
    accepts."""
    entry = copy.deepcopy(raw_db[BASE])
    entry["annotation"][0]["segment"] = first
    entry["annotation"][1]["segment"] = second
    result = load_annotations(_write(tmp_path, {BASE: entry}))
    assert (len(result.entries) == 1) is kept, result.skips
    segments = [{"start": s, "end": e} for s, e in (first, second)]
    row_problems = check_answer(
        {ANSWER: {"order": [1, 2], "segments": segments, "step_ids": [1, 2]}}, 2
    )
    assert (row_problems == []) is kept, row_problems


# --- aliases ---------------------------------------------------------------------------


def test_2019_task_names_resolve(tmp_path: Path, raw_db: dict[str, Any]) -> None:
    tax = taxonomy.load()
    database = {}
    for old, new in taxonomy.TASK_ALIASES.items():
        vid = next(v for v, e in raw_db.items() if e["class"] == new)
        database[vid] = {**raw_db[vid], "class": old}
    result = load_annotations(_write(tmp_path, database))
    assert result.skips == []
    assert {e.video_id: e.task for e in result.entries} == {
        vid: taxonomy.TASK_ALIASES[raw["class"]] for vid, raw in database.items()
    }
    for e in result.entries:
        assert e.domain == tax.tasks[e.task].domain
        assert e.recipe_type == tax.tasks[e.task].recipe_type


# --- every skip reason, from real entries ---------------------------------------------------


def _seg(i: int, start: float, end: float) -> Callable[[dict], None]:
    def mutate(e: dict) -> None:
        e["annotation"][i]["segment"] = [start, end]

    return mutate


def _set(key: str, value: Any) -> Callable[[dict], None]:
    def mutate(e: dict) -> None:
        e[key] = value

    return mutate


def _del(key: str) -> Callable[[dict], None]:
    def mutate(e: dict) -> None:
        del e[key]

    return mutate


def _step_set(i: int, key: str, value: Any) -> Callable[[dict], None]:
    def mutate(e: dict) -> None:
        e["annotation"][i][key] = value

    return mutate


def _step_del(i: int, key: str) -> Callable[[dict], None]:
    def mutate(e: dict) -> None:
        del e["annotation"][i][key]

    return mutate


def _swap_steps(e: dict) -> None:
    a = e["annotation"]
    a[1], a[2] = a[2], a[1]


def _duration_past(e: dict) -> None:
    e["annotation"][2]["segment"][1] = e["duration"] + 5


# The base entry's steps: [4, 19], [100, 108], [147, 179]; duration 180.0243.
CORRUPTIONS: list[tuple[str, Callable[[dict], None], str]] = [
    (
        "end before start",
        _seg(2, 179.0, 147.0),
        r"annotation\[2\]\.segment \[179.0, 147.0\]: end before start",
    ),
    (
        "zero length",
        _seg(1, 100.0, 100.0),
        r"annotation\[1\]\.segment \[100.0, 100.0\]: zero length",
    ),
    (
        "negative start",
        _seg(0, -1.0, 19.0),
        r"annotation\[0\]\.segment \[-1.0, 19.0\]: starts before 0",
    ),
    (
        "past the end",
        _duration_past,
        r"annotation\[2\]\.segment .*ends after the video's duration 180.0243",
    ),
    (
        "unsorted",
        _swap_steps,
        r"out-of-order: annotation\[2\]\.segment \[100.0, 108.0\] "
        r"starts before annotation\[1\].*chronological",
    ),
    (
        "overlap",
        _seg(1, 18.0, 108.0),
        r"overlapping-steps: annotation\[1\]\.segment \[18.0, 108.0\] overlaps annotation\[0\]",
    ),
    (
        "same start",
        _seg(1, 4.0, 50.0),
        r"overlapping-steps: annotation\[1\]\.segment \[4.0, 50.0\] overlaps annotation\[0\]",
    ),
    ("unknown task", _set("class", "MakeTeleporter"), r"class 'MakeTeleporter': unknown COIN task"),
    (
        "recipe of another task",
        _set("recipe_type", 0),
        r"recipe_type 0 is task 'UseAnalyticalBalance', but class 'ArcWeld' is recipe_type 41",
    ),
    ("unknown recipe", _set("recipe_type", 999), r"recipe_type 999 is not a COIN Target Id"),
    (
        "recipe as string",
        _set("recipe_type", "41"),
        r"recipe_type is a string, expected an integer",
    ),
    ("missing duration", _del("duration"), r"missing field duration"),
    ("missing annotation", _del("annotation"), r"missing field annotation"),
    ("missing class", _del("class"), r"missing field class"),
    ("missing step label", _step_del(1, "label"), r"annotation\[1\]: missing field label"),
    ("missing segment", _step_del(0, "segment"), r"annotation\[0\]: missing field segment"),
    (
        "duration as string",
        _set("duration", "180.0243"),
        r"duration is a string, expected a number",
    ),
    ("duration zero", _set("duration", 0), r"duration 0.0: not positive"),
    ("duration NaN", _set("duration", float("nan")), r"duration nan: not a finite number"),
    ("class not a string", _set("class", 41), r"class is an integer, expected a string"),
    (
        "annotation not a list",
        _set("annotation", {"id": "587"}),
        r"annotation is an object, expected a list",
    ),
    (
        "step not an object",
        _step_set(0, "segment", [4.0]),
        r"annotation\[0\]\.segment \[4.0\]: expected \[start, end\]",
    ),
    (
        "segment end a string",
        _seg(0, 4.0, "19"),
        r"annotation\[0\]\.segment\[1\] is a string, expected a number",
    ),
    (
        "step id not a number",
        _step_set(0, "id", "five"),
        r"annotation\[0\]\.id 'five': not an integer step id",
    ),
    (
        "step of another task",
        _step_set(0, "id", "65"),
        r"annotation\[0\]\.id 65: not a step of task 'ArcWeld'",
    ),
    (
        "label mismatch",
        _step_set(0, "label", "weld"),
        r"annotation\[0\]\.label 'weld': the taxonomy calls step 587 'weld along the weld line'",
    ),
    (
        "label not a string",
        _step_set(0, "label", None),
        r"annotation\[0\]\.label is null, expected a string",
    ),
    ("empty subset", _set("subset", ""), r"subset: empty string"),
    ("span end past duration", _set("end", 400.0), r"start 0.0, end 400.0: not 0 <= start <= end"),
    ("span start a string", _set("start", "0"), r"start is a string, expected a number"),
]


@pytest.mark.parametrize(
    ("mutate", "reason"), [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS]
)
def test_broken_entry_is_skipped_with_its_reason(
    tmp_path: Path, raw_db: dict[str, Any], mutate: Callable[[dict], None], reason: str
) -> None:
    broken = copy.deepcopy(raw_db[BASE])
    mutate(broken)
    database = {BASE: broken, **{v: raw_db[v] for v in OTHERS}}
    result = load_annotations(_write(tmp_path, database))
    assert [e.video_id for e in result.entries] == sorted(OTHERS)
    assert len(result.skips) == 1
    skip = result.skips[0]
    assert (skip.video_id, skip.stage) == (BASE, "ingest")
    assert re.match(reason, skip.reason), skip.reason


def test_entry_not_an_object_and_bad_video_id(tmp_path: Path, raw_db: dict[str, Any]) -> None:
    database = {BASE: [raw_db[BASE]], "../etc": raw_db[OTHERS[0]], OTHERS[1]: raw_db[OTHERS[1]]}
    result = load_annotations(_write(tmp_path, database))
    assert [e.video_id for e in result.entries] == [OTHERS[1]]
    reasons = {s.video_id: s.reason for s in result.skips}
    assert reasons[BASE] == "entry is a list, expected an object"
    assert reasons["../etc"].startswith("video id '../etc' is not a YouTube id")


def test_duplicate_video_ids_and_fields_are_skipped(tmp_path: Path, raw_db: dict[str, Any]) -> None:
    base, other, keep = (json.dumps(raw_db[v]) for v in (BASE, OTHERS[0], OTHERS[1]))
    doubled_field = other.replace('"duration":', '"duration": 1.0, "duration":', 1)
    text = (
        f'{{"database": {{"{BASE}": {base}, "{OTHERS[1]}": {keep}, '
        f'"{BASE}": {base}, "{OTHERS[0]}": {doubled_field}}}}}'
    )
    path = tmp_path / "dup.json"
    path.write_text(text)
    result = load_annotations(path)
    assert [e.video_id for e in result.entries] == [OTHERS[1]]
    reasons = {s.video_id: s.reason for s in result.skips}
    assert reasons == {
        BASE: "video id appears more than once in database",
        OTHERS[0]: "duration: field given more than once",
    }


def test_within_tolerance_and_int_ids_are_accepted(tmp_path: Path, raw_db: dict[str, Any]) -> None:
    entry = copy.deepcopy(raw_db[BASE])
    entry["annotation"][2]["segment"][1] = entry["duration"] + SEGMENT_TOLERANCE / 2
    entry["annotation"][0]["id"] = 587
    del entry["start"], entry["end"]
    result = load_annotations(_write(tmp_path, {BASE: entry}))
    assert result.skips == []
    (got,) = result.entries
    assert got.steps[0].step_id == 587
    assert got.steps[2].end == entry["duration"] + SEGMENT_TOLERANCE / 2


# --- files that are not annotation files at all -------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json {", "not a JSON annotation file"),
        (b"\xff\xfe\x00binary", "line 1: not UTF-8 (byte 0xff)"),
        (b'{"database": {"a": {', "line 1 column 21: not a JSON annotation file"),  # truncated
        (b'{"videos": {}}', 'no "database" object'),
        (b"[1, 2]", 'no "database" object'),
        (b'{"database": [1, 2]}', '"database" is a list, expected an object'),
    ],
)
def test_unusable_file_raises_naming_it(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "broken_annotations.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        load_annotations(path)
    assert "broken_annotations.json" in str(info.value)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="annotation file not found: .*absent.json"):
        load_annotations(tmp_path / "absent.json")
    with pytest.raises(UserError, match="is a folder"):
        load_annotations(tmp_path)
