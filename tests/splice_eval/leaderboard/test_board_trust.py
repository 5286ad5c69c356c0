"""The board never loses or hides a result, says when it ranks a stand-in build, and reads
its own folder as untrusted input (issue 49 §1-2, issue 47 §6), each through
``splice leaderboard``'s command line on the session's demo build."""

# ruff: noqa: F811 - the fixtures `board` and `seeded` are test_command's, imported

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_build.errors import size_words
from splice_eval.leaderboard import changes
from splice_eval.leaderboard.table import load_board
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.scoring.score import read_answers
from tests.splice_eval.leaderboard.test_command import (  # noqa: F401 - fixtures
    _answers,
    _show,
    _state,
    board,
    seeded,
)
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.paths import REPO
from tests.support.scripted_runs import good

DOCS = REPO / "docs" / "leaderboard.md"


def _add(board: Path, *args: str) -> int:
    return main(["leaderboard", "add", *map(str, args), "--board", str(board)])


def _meta(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _entries(board: Path, capsys) -> dict[str, dict]:
    return {e["slug"]: e for e in _show(board, capsys=capsys)["entries"]}


def _csv_names(board: Path, capsys) -> list[str]:
    capsys.readouterr()
    assert main(["leaderboard", "export", "--board", str(board), "--format", "csv"]) == 0
    return [r["name"] for r in csv.DictReader(capsys.readouterr().out.splitlines())]


def _audit(board: Path) -> list[dict]:
    path = board / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1, err
    return err


# issue 49 §1 -----------------------------------------------------------------------------


def test_replace_says_what_goes_and_refuses_a_removal_not_named(
    board, demo_build, tmp_path, capsys
):
    vt = _answers(demo_build, tmp_path / "vt.jsonl", model="w", right=True)
    tx = _answers(demo_build, tmp_path / "tx.jsonl", model="w", config="text")
    blind = _answers(demo_build, tmp_path / "b.jsonl", model="w", metadata={"probe": "blind"})
    who = _meta(tmp_path / "meta.yaml", "submitter: alice\n")
    assert _add(board, vt, tx, blind, "--meta", who) == 0
    again = _answers(demo_build, tmp_path / "vt2.jsonl", model="w")
    before = _state(board)
    capsys.readouterr()
    assert _add(board, again, "--meta", who, "--replace") == 2
    err = _one_line(capsys.readouterr().err)
    assert "would remove text, video_text.probe_blind of entry 'w'" in err
    assert "--remove text --remove video_text.probe_blind" in err
    assert _state(board) == before  # nothing dropped unasked
    assert _add(board, again, "--meta", who, "--replace", "--remove", "text") == 2
    assert "video_text.probe_blind" in capsys.readouterr().err and _state(board) == before
    args = ["--remove", "text", "--remove", "video_text.probe_blind"]
    assert _add(board, again, "--meta", who, "--replace", *args) == 0
    out = capsys.readouterr().out
    assert "replaces w ('w', model 'w', alice" in out and "video_text binary_accuracy 1.0000" in out
    assert "removes text, video_text.probe_blind (asked for with --remove)" in out
    entry = _show(board, capsys=capsys)["entries"]
    assert [e["config"] for e in entry if e["slug"] == "w"] == ["video_text"]
    (line,) = _audit(board)
    assert line["action"] == "replaced" and line["slug"] == "w"
    assert line["configs"] == {"video_text": 1.0, "text": 0.0}
    assert line["lost"] == ["text", "video_text.probe_blind"] and len(line["files"]) == 3


def test_replace_leaves_no_duplicates_and_remove_keeps_an_audit_line(
    board, demo_build, tmp_path, capsys
):
    pred = _answers(demo_build, tmp_path / "m.jsonl", model="m")
    alice = _meta(tmp_path / "a.yaml", "submitter: alice\n")
    assert _add(board, pred, "--meta", alice) == 0
    # a copy added before the rule held (the issue's `…-2`): the same run twice
    shutil.copytree(board / "entries" / "m", board / "entries" / "m-2")
    assert sorted(s for s in _entries(board, capsys) if s.startswith("m")) == ["m", "m-2"]
    # the rule holds on every path: another name, the submitter in other case
    upper = _meta(tmp_path / "A.yaml", "submitter: ALICE\n")
    for args in (["--meta", alice, "--name", "other"], ["--meta", upper]):
        assert _add(board, pred, *args) == 2
        assert "same config, settings and submitter" in _one_line(capsys.readouterr().err)
    assert _add(board, pred, "--meta", alice, "--replace") == 0
    assert "replaces m-2" in capsys.readouterr().out
    shown = _entries(board, capsys)
    assert "m" in shown and "m-2" not in shown
    assert [line["slug"] for line in _audit(board)] == ["m", "m-2"]

    capsys.readouterr()
    assert main(["leaderboard", "remove", "m", "--board", str(board)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("removed m ('m', model 'm', alice)") and "audit.jsonl" in out
    assert "m" not in _entries(board, capsys) and not (board / "entries" / "m").exists()
    last = _audit(board)[-1]
    assert (last["action"], last["slug"], last["submitter"]) == ("removed", "m", "alice")
    assert last["files"] == ["predictions-1.jsonl.gz"] and "video_text" in last["configs"]
    before = _state(board)
    assert main(["leaderboard", "remove", "nosuch", "--board", str(board)]) == 2
    assert "no entry named 'nosuch'" in _one_line(capsys.readouterr().err)
    assert _state(board) == before


def test_two_entries_of_one_model_are_told_apart_in_every_row(board, demo_build, tmp_path, capsys):
    first = _answers(demo_build, tmp_path / "a.jsonl", model="r", right=True)
    second = _answers(demo_build, tmp_path / "b.jsonl", model="r", metadata={"date": "2026-12-01"})
    assert _add(board, first, "--meta", _meta(tmp_path / "a.yaml", "submitter: alice\n")) == 0
    assert _add(board, second, "--meta", _meta(tmp_path / "b.yaml", "submitter: bob\n")) == 0
    names = _csv_names(board, capsys)
    assert "r" in names and "r (bob, 2026-12-01)" in names
    # an explicit name another entry has is refused
    assert _add(board, second, "--name", "R") == 2
    assert "already has this name" in _one_line(capsys.readouterr().err)
    # a board written before names were kept apart: its rows still tell the two apart
    score = board / "entries" / "r-bob-2026-12-01" / "score.json"
    data = json.loads(score.read_text())
    score.write_text(json.dumps(data | {"name": "r"}))
    names = _csv_names(board, capsys)
    assert "r (bob, 2026-12-01)" in names and "r" not in names and len(set(names)) == len(names)


def _invalid_file(build: Path, out: Path, bad: int, model: str) -> Path:
    """A prediction file whose first ``bad`` answers are not permutations of the clips."""
    refs = read_answers(build).references
    rows = [
        Prediction(v, "video_text", model, None, [1] * len(o) if k < bad else list(o))
        for k, (v, o) in enumerate(refs.items())
    ]
    return write_predictions(out, rows, {"producer": "splice run", "model": model,
                                         "config": "video_text"})  # fmt: skip


def test_a_mostly_invalid_file_warns_and_is_refused_unless_allowed(
    board, demo_build, tmp_path, capsys
):
    videos = len(read_answers(demo_build).references)
    broken = _invalid_file(demo_build, tmp_path / "x.jsonl", videos, "x")
    before = _state(board)
    assert _add(board, broken) == 2
    err = _one_line(capsys.readouterr().err)
    assert "0.0% unparsed" in err and "100.0% invalid" in err and "--allow-invalid" in err
    assert "more than 50%" in err and _state(board) == before
    assert _add(board, broken, "--allow-invalid") == 0
    assert "100.0% invalid" in capsys.readouterr().err  # still said
    some = _invalid_file(demo_build, tmp_path / "y.jsonl", 1, "y")
    assert _add(board, some) == 0
    assert f"{1 / videos:.1%} invalid" in capsys.readouterr().err
    documented = re.search(r"more than (\d+)% of its answers", DOCS.read_text())
    assert documented and int(documented.group(1)) == 50
    with pytest.raises(SystemExit) as done:
        main(["leaderboard", "add", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0 and "more than 50% unparsed or invalid" in help_text


def test_every_contradiction_in_one_message_and_the_docs_example_fits_a_run_file(
    board, demo_build, tmp_path, capsys
):
    run_md = {  # what `splice run` records (runner.run_metadata), clips as images
        "clips_as": "images",
        "frames": {"num_frames": 8},
        "prompt_version": "9d1e",
        "sampling": {"max_tokens": 512, "temperature": 0.0},
    }
    pred = _answers(demo_build, tmp_path / "m.jsonl", model="Qwen/Qwen2-VL-7B-Instruct",
                    metadata=run_md)  # fmt: skip
    lie = _meta(tmp_path / "lie.yaml", "frames: 16\nclips_as: video\nprompt_version: 3f2a\n")
    assert _add(board, pred, "--meta", lie) == 2
    err = _one_line(capsys.readouterr().err)
    for key in ("frames", "clips_as", "prompt_version"):
        assert f"{key} " in err and "contradicts" in err, key
    assert err.count("contradicts") == 3
    other = _meta(tmp_path / "other.yaml", "model: Qwen/Qwen2-VL-72B-Instruct\n")
    assert _add(board, pred, "--meta", other) == 2
    assert "model 'Qwen/Qwen2-VL-72B-Instruct' contradicts" in _one_line(capsys.readouterr().err)
    block = re.search(r"```yaml\n(.*?)```", DOCS.read_text(), re.S)
    example = _meta(tmp_path / "docs.yaml", block.group(1))
    assert _add(board, pred, "--meta", example) == 0, capsys.readouterr().err
    # and against a real `splice run` file (a local OpenAI-compatible server answering)
    run = tmp_path / "run.jsonl"
    with FakeOpenAIServer(good) as server:
        args = ["--endpoint", server.url, "--model", "org/real-run", "--data", str(demo_build)]
        assert main(["run", *args, "--config", "text", "--out", str(run)]) == 0
    assert _add(board, run, "--meta", example) == 0, capsys.readouterr().err
    # a toolkit file without a metadata line: its rows name the model, which meta.yaml
    # cannot rename
    refs = read_answers(demo_build).references
    rows = [Prediction(v, "video", "tiny", None, list(o)) for v, o in refs.items()]
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(p.to_json() + "\n" for p in rows))
    renamed = _meta(tmp_path / "renamed.yaml", "model: big-model\n")
    assert _add(board, plain, "--meta", renamed) == 2
    assert "model 'big-model' contradicts the prediction file's 'tiny'" in capsys.readouterr().err


# issue 49 §2 -----------------------------------------------------------------------------


def test_a_stand_in_board_says_so_and_push_is_refused_unless_allowed(board, capsys):
    from splice_eval.leaderboard.records import STAND_IN_NOTE

    assert load_board(board).stand_in and "stand_in: true" in (board / "board.yaml").read_text()
    assert "stand-in" in STAND_IN_NOTE.lower()
    push = ["leaderboard", "push", "--board", str(board), "--repo", "org/board", "--dry-run"]
    capsys.readouterr()
    assert main(push) == 1
    out, err = capsys.readouterr()
    assert "stand_in: true" in err and "--allow-stand-in" in err
    assert "all checks passed" not in out + err
    assert main([*push, "--allow-stand-in"]) == 0
    out = capsys.readouterr().out
    assert "STAND-IN build" in out and "all checks passed" not in out
    assert "board.yaml" in out and "nothing sent" in out


# issue 47 §6 -----------------------------------------------------------------------------


def _forge(board: Path, slug: str, source: str, **changes_: object) -> None:
    data = json.loads((board / "entries" / source / "score.json").read_text())
    folder = board / "entries" / slug
    folder.mkdir(exist_ok=True)
    (folder / "score.json").write_text(json.dumps(data | changes_))


def test_a_forged_score_without_files_is_never_ranked_and_rescore_removes_it(board, capsys):
    ident = json.loads((board / "entries" / "identity-baseline" / "score.json").read_text())
    best = json.loads(json.dumps(ident["configs"]))
    best["video_text"]["metrics"]["binary_accuracy"] = {"value": 1.0, "low": 1.0, "high": 1.0}
    _forge(board, "forged", "identity-baseline", name="forged", prediction_files=[],
           kind="model", configs=best)  # fmt: skip
    _forge(board, "paper-fake", "paper-gemini-2.0-flash-exp", name="fake (paper)")
    paper = "paper-gemini-2.0-flash-exp"
    figures = json.loads((board / "entries" / paper / "score.json").read_text())
    true_value = figures["configs"]["video"]["metrics"]["binary_accuracy"]["value"]
    figures["configs"]["video"]["metrics"]["binary_accuracy"]["value"] = 0.99
    (board / "entries" / paper / "score.json").write_text(json.dumps(figures))
    shown = _entries(board, capsys)
    for slug in ("forged", "paper-fake", paper):
        assert shown[slug]["rank_low"] is None and "not ranked" in shown[slug]["error"], slug
    assert "no prediction files" in shown["forged"]["error"]
    assert "not the paper's as published" in shown[paper]["error"]
    assert main(["leaderboard", "rescore", "--board", str(board), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "forged: removed: no prediction files" in out and "paper-fake: removed" in out
    shown = _entries(board, capsys)
    assert "forged" not in shown and "paper-fake" not in shown
    restored = shown[paper]
    assert restored["error"] is None and restored["tier"] == "reported"
    value = json.loads((board / "entries" / paper / "score.json").read_text())
    assert value["configs"]["video"]["metrics"]["binary_accuracy"]["value"] == true_value
    assert {line["slug"] for line in _audit(board)} == {"forged", "paper-fake"}


def test_reproduced_needs_other_answers_from_another_submitter(board, demo_build, tmp_path, capsys):
    same = _answers(demo_build, tmp_path / "r.jsonl", model="r", right=True)
    refs = read_answers(demo_build).references
    first = next(iter(refs))
    rows = [Prediction(v, "video_text", "r", None, list(o)) for v, o in refs.items()]
    rows[0] = Prediction(first, "video_text", "r", None, list(reversed(refs[first])))
    other = write_predictions(tmp_path / "o.jsonl", rows, {"model": "r", "config": "video_text"})
    for k, who in enumerate(("alice", "bob")):
        meta = _meta(tmp_path / f"{k}.yaml", f"submitter: {who}\n")
        assert _add(board, same, "--meta", meta, "--name", f"r{k}") == 0
    tiers = {e["name"]: e["tier"] for e in _show(board, capsys=capsys)["entries"]}
    assert tiers["r0"] == tiers["r1"] == "rescored"  # the same answers twice: one run
    # other answers from the same submitter (in other case) are the same run again
    meta = _meta(tmp_path / "A.yaml", "submitter: ALICE\n")
    assert _add(board, other, "--meta", meta, "--name", "r2") == 2
    assert "same config, settings and submitter" in capsys.readouterr().err
    meta = _meta(tmp_path / "carol.yaml", "submitter: carol\n")
    assert _add(board, other, "--meta", meta, "--name", "r3") == 0
    tiers = {e["name"]: e["tier"] for e in _show(board, capsys=capsys)["entries"]}
    assert tiers["r0"] == tiers["r1"] == tiers["r3"] == "reproduced"  # carol's vs theirs


def test_meta_numbers_have_ranges_and_nesting_is_bounded(board, demo_build, tmp_path, capsys):
    pred = _answers(demo_build, tmp_path / "m.jsonl", model="m")
    for text, words in [
        ("params_b: 1.0e+22\n", "params_b must be a number from 0.001 to 100000"),
        ("long_side: 100000000\n", "long_side must be a number from 1 to 16384"),
        ("generation: {temperature: .inf}\n", "generation.temperature must be a number"),
        ("submitter: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 8 levels deep"),
    ]:
        assert _add(board, pred, "--meta", _meta(tmp_path / "m.yaml", text)) == 2, text
        assert words in _one_line(capsys.readouterr().err)
    # a number the file's metadata line records is held to the same range
    big = {"clips_as": "images", "frames": {"num_frames": 8, "long_side": 10**9}}
    wide = _answers(demo_build, tmp_path / "w.jsonl", model="w", metadata=big)
    assert _add(board, wide) == 2
    err = _one_line(capsys.readouterr().err)
    assert "w.jsonl's metadata: long_side must be a number from 1 to 16384" in err
    # a score.json written by hand with such a number is not ranked, and views still work
    _forge(board, "huge", "identity-baseline", name="huge",
           provenance={"model": "h", "params_b": 1.0e22})  # fmt: skip
    (board / "entries" / "deep").mkdir()
    (board / "entries" / "deep" / "score.json").write_text("[" * 5000 + "]" * 5000)
    shown = _entries(board, capsys)
    assert "params_b must be a number" in shown["huge"]["error"]
    assert shown["huge"]["rank_low"] is None and "nested too deep" in shown["deep"]["error"]
    (board / "board.yaml").write_text("build_id: " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["leaderboard", "show", "--board", str(board)]) == 2
    assert "nested more than 8 levels deep" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("resamples", "abc", "resamples: must be a whole number from 1000 to 20000, got 'abc'"),
        ("seed", "-1", "seed: must be a whole number from 0"),
        ("metric_version", "7", "metric_version: must be text, got 7"),
        ("stand_in", "maybe", "stand_in: must be true or false"),
    ],
)
def test_board_yaml_values_are_checked_naming_the_key(board, demo_build, tmp_path, capsys,
                                                     key, value, words):  # fmt: skip
    path = board / "board.yaml"
    path.write_text(re.sub(rf"(?m)^{key}: .*$", f"{key}: {value}", path.read_text()))
    pred = _answers(demo_build, tmp_path / "m.jsonl", model="m")
    for args in (["show", "--board", str(board)], ["add", str(pred), "--board", str(board)]):
        capsys.readouterr()
        assert main(["leaderboard", *args]) == 2, args
        err = _one_line(capsys.readouterr().err)
        assert str(path) in err and words in err, err


def test_a_damaged_stored_file_is_named_in_rescore(board, capsys):
    stored = board / "entries" / "identity-baseline"
    name = next(p.name for p in stored.iterdir() if p.name.endswith(".gz"))
    data = (stored / name).read_bytes()
    (stored / name).write_bytes(data[: len(data) // 2])  # truncated
    other = next(p for p in (board / "entries" / "human").iterdir() if p.name.endswith(".gz"))
    other.write_bytes(b"not gzip at all")
    assert main(["leaderboard", "rescore", "--board", str(board), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert f"identity-baseline: not rescored, left as it is: entry identity-baseline: " \
           f"stored prediction file {name} is damaged" in out  # fmt: skip
    assert f"human: not rescored, left as it is: entry human: stored prediction file " \
           f"{other.name} is damaged" in out  # fmt: skip
    assert "rescored" in out and "Traceback" not in out


def test_the_board_size_limits_are_one_constant_the_docs_state(board, tmp_path, capsys):
    from splice_eval.prediction_files import MAX_TABLE_BYTES

    docs = " ".join(DOCS.read_text().split())
    assert f"prediction files at most {size_words(changes.PREDICTIONS_MAX)}" in docs
    assert f"a `.json` list at most {size_words(MAX_TABLE_BYTES)}" in docs
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_TABLE_BYTES + 1)  # sparse: the size is checked before reading
    assert _add(board, big) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"over the {size_words(MAX_TABLE_BYTES)} a board takes of a .json file" in err


def test_every_metric_ranks_are_indexed(board, monkeypatch, capsys):
    from splice_eval.leaderboard import index

    rebuilt = index.read_index(board, index.store.read_config(board))
    ranked = [e for e in rebuilt["entries"] if e["rank_low"] is not None]
    assert ranked and all(
        set(e["ranks"]) == {"binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance"}
        for e in ranked
    )
    by_hamming = index.compute_ranks(board, index.store.read_config(board), "hamming_accuracy")

    def no_ranking(*args, **kwargs):
        raise AssertionError("ranks computed while showing a board")

    monkeypatch.setattr(index, "compute_ranks", no_ranking)
    shown = _show(board, "--config", "video", "--metric", "hamming_accuracy", capsys=capsys)
    got = {e["slug"]: (e["rank_low"], e["rank_high"]) for e in shown["entries"] if e["rank_low"]}
    assert got == {s: tuple(r) for s, r in by_hamming["video"].items()}


def test_a_stored_prediction_file_name_cannot_escape(board, capsys):
    score = board / "entries" / "identity-baseline" / "score.json"
    data = json.loads(score.read_text())
    score.write_text(json.dumps(data | {"prediction_files": ["../../board.yaml.gz"]}))
    assert main(["leaderboard", "rescore", "--board", str(board), "--no-progress"]) == 1
    assert "stored file name '../../board.yaml.gz' is not allowed" in capsys.readouterr().out
