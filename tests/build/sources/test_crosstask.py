"""CrossTask through `splice build --source crosstask`: a release folder written here in
CrossTask's format (task cards, ``annotations/<task>_<YouTube id>.csv``, ``videos.csv``) with
a video for each rule, built, validated and loaded; and its damaged files refused whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from splice_build.errors import UserError
from splice_build.sources import crosstask, registry
from tests.support.source_builds import build_source, load_three, skips_by_reason, splice

# Two primary task cards (ids and steps of our own, in the card format).
CARDS = """\
23521
Make Jelly Cups
http://www.wikihow.com/Make-Jelly-Cups
5
boil water,pour jelly powder,stir mixture,pour into cups,chill cups

113766
Sear Steak
http://www.wikihow.com/Sear-Steak
4
season steak,heat pan,sear steak,rest steak

"""
# video file stem -> lines; each video is named for the rule it meets
VIDEOS = {
    "23521__kept0001ab": "1,2.0,6.5\n2,8.0,12.0\n4,13.0,18.5\n",  # id starts with "_"
    "113766_-merged01ab": "1,1.0,4.0\n2,5.0,8.0\n2,8.5,11.0\n4,12.0,16.0\n",  # adjacent repeat
    "113766_repeat001ab": "1,1.0,4.0\n3,5.0,8.0\n1,9.0,12.0\n",
    "113766_overlap01ab": "1,1.0,6.0\n3,5.0,8.0\n",
    "113766_order0001ab": "3,10.0,14.0\n1,1.0,4.0\n",
    "113766_short0001ab": "1,1.0,4.0\n3,5.0,5.5\n",
    "23521_single001ab": "1,1.0,4.0\n",
    "44047_related01ab": "1,1.0,4.0\n2,5.0,8.0\n",  # task not in tasks_primary.txt
}
EXPECTED_SKIPS = {
    "not-primary-task": 1,
    "out-of-order": 1,
    "overlapping-steps": 1,
    "repeated-step": 1,
    "segment-count": 1,
    "too-short-step": 1,
}


def write_release(root: Path, videos: dict[str, str] = VIDEOS, cards: str = CARDS) -> Path:
    (root / "annotations").mkdir(parents=True)
    (root / "tasks_primary.txt").write_text(cards, "utf-8")
    lines = []
    for stem, text in videos.items():
        (root / "annotations" / f"{stem}.csv").write_text(text, "utf-8")
        task, vid = stem.split("_", 1)
        lines.append(f"{task},{vid},https://www.youtube.com/watch?v={vid}\n")
    (root / "videos.csv").write_text("".join(lines), "utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_source(tmp_path_factory, "crosstask", write_release)["out"])


def test_crosstask_fixture_builds_validates_and_loads(built: Path):
    assert splice("validate", built)[0] == 0
    loaded = load_three(built)
    assert {c: len(rows) for c, rows in loaded.items()} == {"video": 2, "video_text": 2, "text": 2}
    rows = {r["video_id"]: r for r in loaded["video_text"]}
    assert sorted(rows) == ["-merged01ab", "_kept0001ab"]  # split on the first "_" only
    merged = rows["-merged01ab"]
    chrono = sorted(range(3), key=lambda k: merged["answer"]["order"].index(k + 1))
    assert [merged["captions"][k] for k in chrono] == ["season steak", "heat pan", "rest steak"]
    assert [merged["answer"]["step_ids"][k] for k in chrono] == [1, 2, 4]  # card numbers
    assert [merged["answer"]["segments"][k]["end"] for k in chrono] == [4.0, 11.0, 16.0]
    assert merged["task"] == "Sear Steak" and merged["domain"] == "CrossTask"
    assert merged["recipe_type"] is None and merged["coin_subset"] is None


def test_crosstask_skips_are_counted_by_rule_on_the_card(built: Path):
    from splice_build.output.card_reader import read_card

    assert skips_by_reason(built) == EXPECTED_SKIPS
    card = read_card(built)
    assert card.source == "crosstask"
    assert card.splice_build["source"]["adapter_version"] == crosstask.SOURCE.adapter_version
    assert "- **Skipped by rule:** not-primary-task 1, out-of-order 1" in card.text
    assert "BSD 3-Clause" in card.text and "Zhukov" in card.text


def test_a_crosstask_build_id_is_not_a_coin_build_id_of_the_same_rows(built: Path):
    from splice_build.output.card_reader import read_card
    from splice_build.output.identity import build_id

    card = read_card(built)
    configs = card.splice_build["config_digests"]
    assert card.build_id == build_id(configs, card.source_identity)
    assert card.build_id != build_id(configs)
    newer = {**card.source_identity, "adapter_version": 2}
    assert build_id(configs, newer) != card.build_id


@pytest.mark.parametrize(
    ("stem", "text", "named"),
    [
        ("23521_trunc0001ab", "1,2.0,6.5\n2,8.0", "23521_trunc0001ab.csv line 2: field end"),
        ("23521_nostart01ab", "1,,6.5\n2,8.0,9.0\n", "nostart01ab.csv line 1: field start"),
        ("23521_clock0001ab", "1,0:05,0:09\n", "clock0001ab.csv line 1: field start: '0:05'"),
        ("23521_millis001ab", "1,2000,65000\n2,66000,70000\n", "line 1: field end: 65000"),
        ("23521_nostep001ab", "9,2.0,6.5\n", "nostep001ab.csv line 1: field step"),
    ],
)
def test_a_damaged_crosstask_file_is_refused_whole(tmp_path: Path, stem, text, named):
    release = write_release(tmp_path / "release", {**VIDEOS, stem: text})
    with pytest.raises(UserError) as exc:
        registry.load("crosstask", release)
    message = str(exc.value)
    assert named in message and "\n" not in message and "refused whole" in message


def test_a_truncated_task_card_is_refused(tmp_path: Path):
    release = write_release(tmp_path / "release", cards=CARDS.replace(",chill cups", ""))
    with pytest.raises(
        UserError, match=r"tasks_primary.txt: entry task card at line 1: field steps"
    ):
        registry.load("crosstask", release)


def test_a_wrong_source_is_refused_naming_what_the_files_look_like(tmp_path: Path):
    release = write_release(tmp_path / "release")
    videos = tmp_path / "videos"
    videos.mkdir()
    for source in ("coin", "youcook2", "htstep", "goalstep", "steps"):
        code, out, err = splice(
            "build", "--source", source, "--annotations", release, "--videos", videos,
            "--out", tmp_path / "out",
        )  # fmt: skip
        assert code == 2
        assert err.count("\n") == 1 and "looks like a CrossTask release folder" in err, err
        assert "pass --source crosstask" in err
    assert not (tmp_path / "out").exists()


def test_validate_refuses_a_crosstask_card_whose_source_was_removed(built: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    card = copy / "README.md"
    lines = card.read_text("utf-8").splitlines(keepends=True)
    start = lines.index("  source:\n")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("   "))
    card.write_text("".join(lines[:start] + lines[end:]), "utf-8")
    code, out, _ = splice("validate", copy)
    assert code != 0 and "splice_build.build_id" in out and "but the rows give" in out
