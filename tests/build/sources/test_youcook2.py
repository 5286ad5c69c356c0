"""YouCook2 through `splice build --source youcook2`: a release folder written here in
YouCook2's format (``annotations/youcookii_annotations_trainval.json``, ``label_foodtype.csv``)
with a video for each rule, built, validated and loaded; damaged files refused whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice_build.errors import UserError
from splice_build.sources import registry
from tests.support.source_builds import build_source, load_three, skips_by_reason, splice


def _video(duration, subset, recipe, steps):
    return {
        "duration": duration,
        "subset": subset,
        "recipe_type": recipe,  # a string in YouCook2
        "annotations": [
            {"segment": list(seg), "id": i, "sentence": text} for i, (seg, text) in enumerate(steps)
        ],
        "video_url": "https://www.youtube.com/watch?v=XXXXXXXXXXX",
    }


def database() -> dict:
    return {
        "kEpt0000001": _video(
            30.0,
            "training",
            "201",
            [
                ((2, 7), "slice the bread"),
                ((9, 14), "butter the slices"),
                ((15, 16), "cut in half"),
            ],
        ),  # a 1-second step, kept
        "mErged00001": _video(
            25.0,
            "validation",
            "202",
            [
                ((1, 5), "boil the pasta"),
                ((6, 9), "drain the pasta"),
                ((9, 12), "drain the pasta"),
                ((13, 20), "add the sauce"),
            ],
        ),
        "rEpeat00001": _video(
            30.0,
            "training",
            "201",
            [
                ((1, 5), "slice the bread"),
                ((6, 9), "toast it"),
                ((10, 14), "slice the bread"),
            ],
        ),
        "oVerlap0001": _video(30.0, "training", "201", [((1, 8), "a"), ((6, 10), "b")]),
        "sHort000001": _video(30.0, "training", "201", [((1, 5), "a"), ((6, 6.5), "b")]),
        "oNly0000001": _video(30.0, "training", "201", [((1, 5), "a")]),
    }


def write_release(root: Path, db: dict | None = None, text: str | None = None) -> Path:
    (root / "annotations").mkdir(parents=True)
    db = database() if db is None else db
    body = text if text is not None else json.dumps({"database": db}, indent=1)
    (root / "annotations" / "youcookii_annotations_trainval.json").write_text(body, "utf-8")
    test = {"tEst0000001": {"duration": 30.0, "subset": "testing", "recipe_type": "201",
                            "annotations": [{"segment": [1, 5], "id": 0}]}}  # fmt: skip
    (root / "annotations" / "youcookii_annotations_test_segments_only.json").write_text(
        json.dumps({"database": test}), "utf-8"
    )
    (root / "label_foodtype.csv").write_text("201,grilled cheese\n202,pasta\n", "utf-8")
    return root


def write_with_test(root: Path) -> Path:
    """The trainval file with one test-split video in it too (no sentences)."""
    db = database() | {"tEst0000002": {"duration": 30.0, "subset": "testing", "recipe_type": "201",
                                       "annotations": [{"segment": [1, 5], "id": 0}]}}  # fmt: skip
    return write_release(root, db)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_source(tmp_path_factory, "youcook2", write_with_test)["out"])


def test_youcook2_fixture_builds_validates_and_loads(built: Path):
    assert splice("validate", built)[0] == 0
    loaded = load_three(built)
    assert {c: len(rows) for c, rows in loaded.items()} == {"video": 2, "video_text": 2, "text": 2}
    rows = {r["video_id"]: r for r in loaded["video_text"]}
    kept = rows["kEpt0000001"]
    assert (kept["task"], kept["domain"]) == ("grilled cheese", "YouCook2")  # label_foodtype
    assert sorted(kept["answer"]["step_ids"]) == [0, 1, 2]  # the annotation ids
    assert kept["recipe_type"] is None and kept["coin_subset"] is None
    merged = rows["mErged00001"]
    assert sorted(merged["captions"]) == ["add the sauce", "boil the pasta", "drain the pasta"]


def test_youcook2_skips_and_unclear_licence_on_the_card(built: Path):
    from splice_build.output.card_reader import read_card

    assert skips_by_reason(built) == {
        "no-sentences": 1, "overlapping-steps": 1, "repeated-step": 1, "segment-count": 1,
        "too-short-step": 1,
    }  # fmt: skip
    card = read_card(built)
    assert card.source == "youcook2" and card.data["license"] == "unknown"
    assert "- **Source licence:** unclear" in card.text


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda db: db["kEpt0000001"]["annotations"][1].pop("segment"),
         "entry kEpt0000001: field annotations[1].segment: missing"),
        (lambda db: db["kEpt0000001"].pop("duration"),
         "entry kEpt0000001: field duration: missing"),
        (lambda db: db["kEpt0000001"]["annotations"][0].update(segment=["0:02", "0:07"]),
         "field annotations[0].segment[0]: '0:02' is a clock time"),
        (lambda db: db["kEpt0000001"]["annotations"][2].update(segment=[15000, 16000]),
         "field annotations[2].segment[1]: 16000 is past the video's duration 30 s"),
    ],
)  # fmt: skip
def test_a_damaged_youcook2_file_is_refused_whole(tmp_path: Path, change, named):
    db = database()
    change(db)
    release = write_release(tmp_path / "yc2", db)
    with pytest.raises(UserError) as exc:
        registry.load("youcook2", release)
    assert named in str(exc.value) and "\n" not in str(exc.value)


def test_a_truncated_youcook2_file_is_refused_whole(tmp_path: Path):
    text = json.dumps({"database": database()})
    release = write_release(tmp_path / "yc2", text=text[: len(text) // 2])
    with pytest.raises(UserError, match=r"youcookii_annotations_trainval.json line 1 column \d+"):
        registry.load("youcook2", release)


def test_a_coin_build_of_a_youcook2_file_is_refused(tmp_path: Path):
    release = write_release(tmp_path / "yc2")
    file = release / "annotations" / "youcookii_annotations_trainval.json"
    (tmp_path / "videos").mkdir()
    code, _, err = splice(
        "build", "--annotations", file, "--videos", tmp_path / "videos", "--out", tmp_path / "o"
    )
    assert (
        code == 2 and "looks like a YouCook2 annotation file" in err and "--source youcook2" in err
    )
