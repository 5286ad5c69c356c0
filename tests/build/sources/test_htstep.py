"""HT-Step through `splice build --source htstep`: a ``data/`` folder written here in
HT-Step's format (``annotations.json`` keyed by YouTube id, ``taxonomy.csv``) with a video for
each rule, built, validated and loaded; damaged files refused whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice_build.errors import UserError
from splice_build.sources import registry
from tests.support.source_builds import build_source, load_three, skips_by_reason, splice

TAXONOMY = """\
global_step_index,activity,step_index,variation,variation_index,headline,paragraph
10,Make Fruit Salad,0,none,1,Wash the fruit.,"Rinse every fruit, then dry it."
11,Make Fruit Salad,1,none,2,Cut the fruit.,
12,Make Fruit Salad,2,none,3,Mix in a bowl.,
40,Make Chips,0,A,A1,Peel the potatoes.,
41,Make Chips,1,A,A2,Fry the potatoes.,
45,Make Chips,0,B,B1,Slice the potatoes thin.,
46,Make Chips,1,B,B2,Bake the slices.,
"""


def _video(activity, variation, steps, subset="train"):
    return {
        "subset": subset,
        "activity": activity,
        "variation": variation,
        "annotations": [{"segment": [s, e], "id": i} for i, s, e in steps],
    }


def annotations() -> dict:
    return {
        "-kept000001": _video(
            "Make Fruit Salad", "none", [(10, 1.0, 5.0), (11, 6.0, 10.0), (12, 11.0, 15.0)]
        ),
        "_merged0001": _video(  # 41 twice merges, then 40 repeats: repeated-step
            "Make Chips", "A", [(40, 1.0, 4.0), (41, 5.0, 8.0), (41, 8.0, 10.0), (40, 11.0, 14.5)]
        ),
        "mixed000001": _video("Make Chips", "A", [(40, 1.0, 4.0), (46, 5.0, 8.0)]),
        "order000001": _video("Make Fruit Salad", "none", [(11, 6.0, 10.0), (10, 1.0, 5.0)]),
        "short000001": _video("Make Fruit Salad", "none", [(10, 1.0, 5.0), (11, 6.0, 6.3)]),
    }  # fmt: skip


def write_release(root: Path, ants: dict | None = None, taxonomy: str = TAXONOMY) -> Path:
    data = root / "data"
    data.mkdir(parents=True)
    (data / "annotations.json").write_text(
        json.dumps(annotations() if ants is None else ants), "utf-8"
    )
    (data / "taxonomy.csv").write_text(taxonomy, "utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_source(tmp_path_factory, "htstep", write_release)["out"])


def test_htstep_fixture_builds_validates_and_loads(built: Path):
    assert splice("validate", built)[0] == 0
    loaded = load_three(built)
    assert {c: len(rows) for c, rows in loaded.items()} == {"video": 1, "video_text": 1, "text": 1}
    (row,) = loaded["text"]
    assert row["video_id"] == "-kept000001"
    chrono = sorted(range(3), key=lambda k: row["answer"]["order"].index(k + 1))
    assert [row["captions"][k] for k in chrono] == [
        "Wash the fruit.",
        "Cut the fruit.",
        "Mix in a bowl.",
    ]
    assert [row["answer"]["step_ids"][k] for k in chrono] == [10, 11, 12]  # global_step_index
    assert (row["task"], row["domain"]) == ("Make Fruit Salad", "HT-Step")


def test_htstep_skips_on_the_card(built: Path):
    from splice_build.output.card_reader import read_card

    assert skips_by_reason(built) == {
        "mixed-variations": 1, "out-of-order": 1, "repeated-step": 1, "too-short-step": 1,
    }  # fmt: skip
    assert read_card(built).source == "htstep"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda a: a["-kept000001"]["annotations"][1].pop("segment"),
         "entry -kept000001: field annotations[1].segment: missing"),
        (lambda a: a["-kept000001"]["annotations"][1].update(id=99),
         "entry -kept000001: field annotations[1].id: 99 is not in taxonomy.csv"),
        (lambda a: a["-kept000001"]["annotations"][1].update(segment=["0:06", "0:10"]),
         "field annotations[1].segment[0]: '0:06' is a clock time"),
        (lambda a: a["-kept000001"]["annotations"][2].update(segment=[11000.0, 45000000.0]),
         "field annotations[2].segment[1]: 4.5e+07 is past 10 hours"),
    ],
)  # fmt: skip
def test_a_damaged_htstep_file_is_refused_whole(tmp_path: Path, change, named):
    ants = annotations()
    change(ants)
    with pytest.raises(UserError) as exc:
        registry.load("htstep", write_release(tmp_path / "ht", ants))
    assert named in str(exc.value) and "\n" not in str(exc.value)


def test_a_truncated_taxonomy_is_refused(tmp_path: Path):
    release = write_release(tmp_path / "ht", taxonomy=TAXONOMY + "47,Make Chips,2")
    with pytest.raises(UserError, match=r"taxonomy.csv: entry line 9: field variation: missing"):
        registry.load("htstep", release)
