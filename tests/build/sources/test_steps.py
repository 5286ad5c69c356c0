"""A lab's own footage through `splice build --source steps`: a CSV written here in the
``steps`` format (one row per step: video, start, end, label; optional task, domain,
split) with a video for each rule, built, validated and loaded; the same rows as JSONL
read alike; damaged files refused whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice_build.errors import UserError
from splice_build.sources import registry
from tests.support.source_builds import build_source, load_three, skips_by_reason, splice

HEADER = "video,start,end,label,task,domain,split\n"
ROWS = """\
lab01,1.0,5.0,open the lid,Refill printer,Office,train
lab01,6.0,10.5,insert the cartridge,Refill printer,Office,train
lab01,11.0,15.0,close the lid,Refill printer,Office,train
lab02,0.0,2.0,SIL,,,
lab02,2.0,6.0,take bowl,,,
lab02,6.0,9.0,pour cereals,,,
lab02,9.5,12.0,pour cereals,,,
lab02,12.0,16.0,pour milk,,,
lab02,16.0,18.0,SIL,,,
lab03,1.0,4.0,stir,,,
lab03,5.0,8.0,pour,,,
lab03,9.0,12.0,stir,,,
lab04,9.0,12.0,second,,,
lab04,1.0,4.0,first,,,
lab05,1.0,4.0,long step,,,
lab05,5.0,5.4,blink,,,
lab06,1.0,6.0,one,,,
lab06,5.0,9.0,two,,,
lab07,1.0,6.0,alone,,,
"""
EXPECTED_SKIPS = {
    "out-of-order": 1,
    "overlapping-steps": 1,
    "repeated-step": 1,
    "segment-count": 1,
    "too-short-step": 1,
}


def write_csv(root: Path, rows: str = ROWS, header: str = HEADER) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "steps.csv"
    path.write_text(header + rows, "utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_source(tmp_path_factory, "steps", write_csv)["out"])


def test_steps_fixture_builds_validates_and_loads(built: Path):
    from splice_build.sources.base import stable_step_id

    assert splice("validate", built)[0] == 0
    loaded = load_three(built)
    assert {c: len(rows) for c, rows in loaded.items()} == {"video": 2, "video_text": 2, "text": 2}
    rows = {r["video_id"]: r for r in loaded["text"]}
    lab02 = rows["lab02"]
    chrono = sorted(range(3), key=lambda k: lab02["answer"]["order"].index(k + 1))
    # SIL dropped (background-label), the two adjacent "pour cereals" merged into one step
    assert [lab02["captions"][k] for k in chrono] == ["take bowl", "pour cereals", "pour milk"]
    assert lab02["answer"]["segments"][chrono[1]] == {"start": 6.0, "end": 12.0}
    assert (lab02["task"], lab02["domain"]) == ("steps", "steps")  # the stated defaults
    assert lab02["answer"]["step_ids"][chrono[0]] == stable_step_id("steps", "take bowl")
    assert (rows["lab01"]["task"], rows["lab01"]["domain"]) == ("Refill printer", "Office")
    assert rows["lab01"]["recipe_type"] is None and rows["lab01"]["coin_subset"] is None


def test_steps_skips_and_removed_steps_are_on_the_card(built: Path):
    from splice_build.output.card_reader import read_card

    assert skips_by_reason(built) == EXPECTED_SKIPS
    card = read_card(built)
    assert card.source == "steps"
    assert "- **Steps removed by rule:** background-label 2" in card.text
    assert card.data["license"] == "other"


def test_jsonl_rows_read_as_the_csv_rows(tmp_path: Path):
    csv_path = write_csv(tmp_path / "csv")
    lines = []
    for line in ROWS.splitlines():
        video, start, end, label, task, domain, split = line.split(",")
        row = {"video": video, "start": float(start), "end": float(end), "label": label}
        row |= {k: v for k, v in (("task", task), ("domain", domain), ("split", split)) if v}
        lines.append(json.dumps(row))
    jsonl = tmp_path / "steps.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", "utf-8")
    a, b = registry.load("steps", csv_path), registry.load("steps", jsonl)
    assert a.entries == b.entries and [s.reason for s in a.skips] == [s.reason for s in b.skips]


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        (ROWS + "lab08,1.0", "entry line 21: field end: missing"),  # truncated
        (ROWS + "lab08,1.0,4.0,,,,\n", "entry line 21: field label: missing"),
        (ROWS + "lab08,0:05,0:09,clock,,,\n", "entry line 21: field start: '0:05' is a clock"),
        (ROWS + "lab08,5000,65000,millis,,,\n", "entry line 21: field end: 65000 is past 10 hours"),
        (ROWS + "lab01,16.0,18.0,more,Other task,Office,train\n", "entry line 21: field task"),
    ],
)
def test_a_damaged_steps_file_is_refused_whole(tmp_path: Path, rows, named):
    path = write_csv(tmp_path, rows)
    with pytest.raises(UserError) as exc:
        registry.load("steps", path)
    assert f"{path}: {named}" in str(exc.value) and "\n" not in str(exc.value)


def test_a_truncated_jsonl_line_is_refused(tmp_path: Path):
    path = tmp_path / "steps.jsonl"
    path.write_text(
        '{"video": "a", "start": 1, "end": 2, "label": "x"}\n{"video": "a", "st', "utf-8"
    )
    with pytest.raises(UserError, match=r"steps.jsonl: entry line 2: field \(the line\): not JSON"):
        registry.load("steps", path)
