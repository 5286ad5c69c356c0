"""Ego4D Goal-Step through `splice build --source goalstep`: a ``goalstep_valid.json`` written
here in Goal-Step's format (videos, steps, substeps) with a video for each rule, built from a
local folder of videos, validated and loaded; damaged files refused whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice_build.errors import UserError
from splice_build.sources import goalstep, registry
from tests.support.source_builds import build_source, load_three, skips_by_reason, splice

UID = "0000000{}-aaaa-4bbb-8ccc-dddddddddddd"


def _step(start, end, category, relevant="essential", continued=False, subs=()):
    step = {
        "start_time": start, "end_time": end,
        "step_category": f"Make food: {category}", "step_description": f"does {category}",
        "is_continued": continued, "is_procedural": True, "summary": [], "segments": list(subs),
    }  # fmt: skip
    if relevant is not None:
        step["is_relevant"] = relevant
    return step


def _video(n, steps, end=30.0):
    return {
        "video_uid": UID.format(n), "start_time": 0.0, "end_time": end,
        "goal_category": "COOKING:MAKE_SALAD", "goal_description": "Makes a salad",
        "segments": steps,
    }  # fmt: skip


def videos() -> list[dict]:
    return [
        _video(1, [  # kept: an irrelevant step dropped, a step without is_relevant kept
            _step(1.0, 5.0, "wash leaves"), _step(5.5, 7.0, "check phone", relevant="irrelevant"),
            _step(8.0, 12.0, "cut tomato", relevant=None), _step(13.0, 18.0, "mix salad"),
        ]),
        _video(2, [  # kept: a continued step next to its start merges
            _step(1.0, 5.0, "wash leaves"), _step(6.0, 9.0, "cut tomato"),
            _step(9.5, 12.0, "cut tomato", continued=True), _step(13.0, 16.0, "mix salad"),
        ]),
        _video(3, [  # interleaved: a continued step after another one
            _step(1.0, 5.0, "cut tomato"), _step(6.0, 9.0, "wash leaves"),
            _step(10.0, 12.0, "cut tomato", continued=True),
        ]),
        _video(4, [_step(1.0, 6.0, "wash leaves"), _step(5.0, 9.0, "cut tomato")]),  # overlap
        _video(5, [_step(6.0, 9.0, "cut tomato"), _step(1.0, 5.0, "wash leaves")]),  # order
        {"video_uid": UID.format(6), "step_segments": [{"step_description": "x"}]},  # test
    ]  # fmt: skip


def write_file(root: Path, vids: list | None = None, text: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "goalstep_valid.json"
    body = json.dumps({"split": "val", "videos": videos() if vids is None else vids}, indent=2)
    path.write_text(body if text is None else text, "utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_source(tmp_path_factory, "goalstep", write_file)["out"])


def test_goalstep_fixture_builds_validates_and_loads(built: Path):
    assert splice("validate", built)[0] == 0
    loaded = load_three(built)
    assert {c: len(rows) for c, rows in loaded.items()} == {"video": 2, "video_text": 2, "text": 2}
    rows = {r["video_id"]: r for r in loaded["text"]}
    first = rows[UID.format(1)]
    assert sorted(first["captions"]) == ["cut tomato", "mix salad", "wash leaves"]
    assert (first["task"], first["domain"]) == ("MAKE_SALAD", "COOKING")
    second = rows[UID.format(2)]
    k = second["captions"].index("cut tomato")
    assert second["answer"]["segments"][k] == {"start": 6.0, "end": 12.0}


def test_goalstep_skips_removed_steps_and_licence_on_the_card(built: Path):
    from splice_build.output.card_reader import read_card

    assert skips_by_reason(built) == {
        "interleaved-step": 1, "no-times": 1, "out-of-order": 1, "overlapping-steps": 1,
    }  # fmt: skip
    card = read_card(built)
    assert card.source == "goalstep"
    assert "- **Steps removed by rule:** irrelevant-step 1" in card.text
    assert "Ego4D's licence" in card.text and "from a local folder" in card.text


def test_substep_level_reads_the_substeps(tmp_path: Path):
    from splice_build.sources.base import SourceOptions

    subs = [_step(1.0, 2.5, "rinse"), _step(3.0, 4.5, "dry")]
    path = write_file(tmp_path, [_video(7, [_step(1.0, 5.0, "wash leaves", subs=subs)])])
    (entry,) = registry.load("goalstep", path, SourceOptions(level="substep")).entries
    assert [s.label for s in entry.steps] == ["rinse", "dry"]
    assert goalstep.DEFAULT_RELEVANCE == "essential"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda v: v[0]["segments"][1].pop("start_time"),
         f"entry {UID.format(1)}: field segments[1].start_time: missing"),
        (lambda v: v[0]["segments"][0].update(start_time="0:01"),
         "field segments[0].start_time: '0:01' is a clock time"),
        (lambda v: v[0]["segments"][3].update(end_time=18000.0),
         "field segments[3].end_time: 18000 is past the video's duration 30 s"),
    ],
)  # fmt: skip
def test_a_damaged_goalstep_file_is_refused_whole(tmp_path: Path, change, named):
    vids = videos()
    change(vids)
    with pytest.raises(UserError) as exc:
        registry.load("goalstep", write_file(tmp_path, vids))
    assert named in str(exc.value) and "\n" not in str(exc.value)


def test_a_truncated_goalstep_file_is_refused_whole(tmp_path: Path):
    text = json.dumps({"split": "val", "videos": videos()}, indent=2)
    with pytest.raises(UserError, match=r"goalstep_valid.json line \d+ column \d+: not a JSON"):
        registry.load("goalstep", write_file(tmp_path, text=text[:-40]))
