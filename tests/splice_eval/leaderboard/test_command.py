"""``splice leaderboard`` through its command line, on the session's demo build: init's
reference rows, add with its refusals (the board unchanged after each), show --json,
rescore with the metric-version note, export's escaping, concurrent adds."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_build.output.card_reader import read_card
from splice_eval.leaderboard.records import STAND_IN_NOTE
from splice_eval.predictions import Prediction, read_metadata, read_predictions, write_predictions
from splice_eval.scoring.baselines import run_question_baseline
from splice_eval.scoring.score import read_answers

INJECTION = "<img src=x onerror=alert(1)> | [x](http://e) **b**"


@pytest.fixture(scope="module")
def seeded(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board of the demo build with its reference rows and the human protocol's row;
    tests that change it work on a copy (`board`)."""
    root = tmp_path_factory.mktemp("leaderboard")
    human = _answers(demo_build, root / "human.jsonl", model="human", config="video", right=True)
    assert main(["leaderboard", "init", "--board", str(root / "b"), "--data", str(demo_build),
                 "--human", str(human)]) == 0  # fmt: skip
    return root / "b"


@pytest.fixture
def board(seeded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(seeded, tmp_path / "board"))


def _answers(
    build: Path,
    out: Path,
    *,
    model: str = "m",
    config: str = "video_text",
    right: bool = False,
    keep: int | None = None,
    metadata: dict | None = None,
) -> Path:
    """A prediction file answering every video (right, or reversed), with a metadata line."""
    refs = read_answers(build).references
    rows = [
        Prediction(v, config, model, None, list(o) if right else list(reversed(o)))
        for v, o in list(refs.items())[:keep]
    ]
    meta = {"producer": "splice run", "model": model, "config": config}
    meta["build_id"] = read_card(build).build_id
    return write_predictions(out, rows, meta | (metadata or {}))


def _show(board: Path, *args: str, capsys: pytest.CaptureFixture) -> dict:
    capsys.readouterr()
    assert main(["leaderboard", "show", "--board", str(board), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _state(board: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(board)): p.read_bytes()
        for p in sorted(board.rglob("*"))
        if p.is_file() and p.name != ".board.lock"
    }


def test_init_seeds_reference_rows(seeded, demo_build, capsys):
    shown = _show(seeded, "--config", "video", capsys=capsys)
    assert shown["build_id"] == read_card(demo_build).build_id
    by_name = {e["name"]: e for e in shown["entries"]}
    paper = by_name["Gemini-2.0-Flash-Exp (paper)"]  # Table 2 / Table 5, as published
    assert paper["tier"] == "reported" and paper["rank_low"] is None
    assert paper["metrics"]["binary_accuracy"]["value"] == 0.5108
    assert paper["metrics"]["lcs_ratio"]["value"] == 0.7927  # Table 5
    for name in ("random (exact)", "identity (baseline)", "visual-similarity (baseline)"):
        assert by_name[name]["tier"] == "rescored" and by_name[name]["rank_low"] >= 1
    human = by_name["human"]  # the protocol's answers: every order right here
    assert human["metrics"]["binary_accuracy"]["value"] == 1.0
    assert (human["rank_low"], human["rank_high"]) == (1, 1)
    assert "taxonomy-prior (baseline)" not in by_name  # it answers text configs only
    ranked = [e for e in shown["entries"] if e["rank_low"] is not None]
    assert all(e["rank_low"] <= e["rank_high"] <= len(ranked) for e in ranked)


def test_add_provenance_and_refusals_leave_board_unchanged(board, demo_build, tmp_path, capsys):
    pred = _answers(demo_build, tmp_path / "m.jsonl", metadata={"frames": {"num_frames": 16}})
    meta = tmp_path / "meta.yaml"
    meta.write_text("params_b: 7\nweights: open\nsubmitter: alice\ncontamination: 'no'\n")
    assert main(["leaderboard", "add", str(pred), "--board", str(board), "--meta", str(meta)]) == 0
    entry = next(e for e in _show(board, capsys=capsys)["entries"] if e["name"] == "m")
    assert (
        entry["provenance"].items()
        >= {
            "model": "m",
            "toolkit": "splice run",
            "frames": "16",
            "params_b": 7.0,
            "weights": "open",
            "contamination": "no",
        }.items()
    )
    value = entry["metrics"]["binary_accuracy"]
    assert value["low"] <= value["value"] <= value["high"] and entry["coverage"] == 1.0
    assert list((board / "entries" / "m").iterdir())  # the file kept, compressed
    assert (board / "entries" / "m" / "predictions-1.jsonl.gz").is_file()

    before = _state(board)
    other = _answers(demo_build, tmp_path / "o.jsonl", metadata={"build_id": "f" * 64})
    lines = pred.read_text().splitlines()
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join([*lines, lines[1].replace("[", "[9, ", 1)]) + "\n")
    partial = _answers(demo_build, tmp_path / "p.jsonl", model="p", keep=5)
    (tmp_path / "bad.yaml").write_text("params_b: 7\nscript: rm -rf /\n")
    (tmp_path / "lie.yaml").write_text("frames: 32\n")
    refusals = [
        ([str(pred), "--meta", str(meta)], "same config, settings and submitter; pass --replace"),
        ([str(other)], "another build"),
        ([str(dup)], "two predictions"),
        ([str(partial)], "have no answer"),
        ([str(pred), "--meta", str(tmp_path / "bad.yaml")], "unknown key 'script'"),
        (
            [str(pred), "--meta", str(tmp_path / "lie.yaml")],
            "frames '32' contradicts the prediction file's '16'",
        ),
    ]
    for args, words in refusals:
        capsys.readouterr()
        assert main(["leaderboard", "add", *args, "--board", str(board)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
        assert _state(board) == before, args

    assert main(["leaderboard", "add", str(partial), "--board", str(board), "--allow-partial"]) == 0
    shown = _show(board, capsys=capsys)["entries"]
    p = next(e for e in shown if e["name"] == "p")
    assert p["partial"] and 0 < p["coverage"] < 1
    assert main(["leaderboard", "add", str(pred), "--board", str(board), "--meta", str(meta),
                 "--replace"]) == 0  # fmt: skip
    assert [e["name"] for e in _show(board, capsys=capsys)["entries"]].count("m") == 1


def test_visual_gain_and_any_metric_ranks(board, demo_build, tmp_path, capsys):
    vt = _answers(demo_build, tmp_path / "vt.jsonl", model="g", right=True)
    tx = _answers(demo_build, tmp_path / "tx.jsonl", model="g", config="text")
    assert main(["leaderboard", "add", str(vt), str(tx), "--board", str(board)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "export", "--board", str(board), "--format", "csv"]) == 0
    rows = {r["name"]: r for r in csv.DictReader(capsys.readouterr().out.splitlines())}
    g = rows["g"]
    gain = float(g["visual_gain"])
    assert gain == pytest.approx(
        float(g["video_text.binary_accuracy"]) - float(g["text.binary_accuracy"])
    )
    assert gain > 0 and float(g["visual_gain.low"]) <= gain <= float(g["visual_gain.high"])
    # the extras of the same model, where submitted: a probe run and the pairwise questions
    probed = _answers(demo_build, tmp_path / "p.jsonl", model="g", metadata={"probe": "reversed"})
    questions = write_predictions(
        tmp_path / "q.jsonl",
        [
            replace(p, model="g")
            for p in run_question_baseline(demo_build, "video_text", "pairwise")
        ],
        {"model": "g", "config": "video_text", "format": "pairwise", "question_seed": 0},
    )
    args = [str(vt), str(tx), str(probed), str(questions), "--board", str(board), "--replace"]
    assert main(["leaderboard", "add", *args]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "export", "--board", str(board), "--format", "csv"]) == 0
    g = {r["name"]: r for r in csv.DictReader(capsys.readouterr().out.splitlines())}["g"]
    assert float(g["video_text.probe_reversed"]) == 0.0  # reversed orders: none right
    assert 0 <= float(g["video_text.pairwise_questions"]) <= 1
    by_edit = _show(board, "--config", "text", "--metric", "edit_distance", capsys=capsys)
    ranked = {e["name"]: e for e in by_edit["entries"] if e["rank_low"] is not None}
    assert ranked["g"]["rank_low"] > 1  # reversed orders: the worst edit distance


def test_rescore_reports_changes_and_clears_stale_note(board, capsys):
    for slug in ("identity-baseline", "random-exact"):
        score = board / "entries" / slug / "score.json"
        data = json.loads(score.read_text())
        data["metric_version"] = "0ld"
        data["configs"]["video"]["metrics"]["binary_accuracy"]["value"] = 0.99
        score.write_text(json.dumps(data))
    config = board / "board.yaml"
    config.write_text(config.read_text().replace("metric_version: ", "metric_version: 0ld"))
    notes = _show(board, capsys=capsys)["notes"]
    assert any("0ld" in n and "rescore" in n for n in notes)
    assert main(["leaderboard", "export", "--board", str(board), "--format", "md"]) == 0
    assert "rescore" in capsys.readouterr().out
    # a CSV has no room above its header: every row carries the note, and its own version
    assert main(["leaderboard", "export", "--board", str(board), "--format", "csv"]) == 0
    rows = {r["slug"]: r for r in csv.DictReader(capsys.readouterr().out.splitlines())}
    assert rows["identity-baseline"]["metric_version"] == "0ld"
    assert all("rescore" in r["board_note"] for r in rows.values())
    assert main(["leaderboard", "rescore", "--board", str(board), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "identity-baseline video binary_accuracy: 0.9900 ->" in out
    assert "random-exact video binary_accuracy: 0.9900 ->" in out
    assert _show(board, capsys=capsys)["notes"] == []
    assert main(["leaderboard", "export", "--board", str(board), "--format", "csv"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    # the stale note gone; the demo build's stand-in banner stays (test_views)
    assert rows and all(r["board_note"] == STAND_IN_NOTE for r in rows)


def test_export_escapes_names(board, demo_build, tmp_path, capsys):
    pred = _answers(demo_build, tmp_path / "x.jsonl", model="x")
    assert main(["leaderboard", "add", str(pred), "--board", str(board), "--name", INJECTION]) == 0
    outputs = {}
    for fmt in ("html", "md"):
        capsys.readouterr()
        assert main(["leaderboard", "export", "--board", str(board), "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    assert "<img" not in outputs["html"] and "&lt;img src=x onerror=alert(1)&gt;" in outputs["html"]
    assert "](http" not in outputs["md"] and "\\[x\\]\\(http://e\\)" in outputs["md"]
    assert "\\*\\*b\\*\\*" in outputs["md"]


def test_untrusted_names_meta_and_broken_entries(board, demo_build, tmp_path, capsys):
    """A name never names a path outside entries/; an oversized meta.yaml is refused
    unread; an unreadable score.json stays on the board with its reason."""
    pred = _answers(demo_build, tmp_path / "n.jsonl", model="n")
    assert main(["leaderboard", "add", str(pred), "--board", str(board), "--name", "../../up"]) == 0
    assert (board / "entries" / "up").is_dir() and not (board.parent / "up").exists()
    big = tmp_path / "big.yaml"
    big.write_text("submitter: " + "x" * 40_000 + "\n")
    other = _answers(demo_build, tmp_path / "q.jsonl", model="q")
    assert main(["leaderboard", "add", str(other), "--board", str(board), "--meta", str(big)]) == 2
    assert "more than the 32768 allowed" in capsys.readouterr().err
    (board / "entries" / "up" / "score.json").write_text("{not json")
    shown = _show(board, "--config", "text", capsys=capsys)
    broken = [e for e in shown["entries"] if e["error"]]
    assert [e["slug"] for e in broken] == ["up"] and "unreadable" in broken[0]["error"]
    assert main(["leaderboard", "show", "--board", str(board), "--config", "text"]) == 0
    assert "score.json unreadable" in capsys.readouterr().out


def test_concurrent_adds_are_serialized(board, demo_build, tmp_path, capsys):
    files = [_answers(demo_build, tmp_path / f"{k}.jsonl", model=f"c{k}") for k in range(2)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "splice_build.cli",
                "leaderboard",
                "add",
                str(f),
                "--board",
                str(board),
            ],  # fmt: skip
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for f in files
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    names = {e["name"] for e in _show(board, capsys=capsys)["entries"]}
    assert {"c0", "c1"} <= names
    index = json.loads((board / "index.json").read_text())
    assert {"c0", "c1"} <= {e["slug"] for e in index["entries"]}
    assert read_metadata(files[0])["model"] == "c0" and len(read_predictions(files[0])) > 0


def test_toolkit_files_without_a_metadata_line_are_labelled_by_their_rows(
    board, demo_build, tmp_path, capsys
):
    """lmms-eval's --log_samples lines and VLMEvalKit's result tables carry no metadata
    line: the entry's toolkit is what the file's rows show, and a meta.yaml that says
    otherwise is refused."""
    refs = read_answers(demo_build).references
    build_id = read_card(demo_build).build_id
    lines = []
    for doc_id, (video, order) in enumerate(refs.items()):
        record = {"video_id": video, "config": "video", "raw_output": "x", "order": list(order)}
        record |= {"reference": list(order), "build_id": build_id}
        lines.append(json.dumps({"doc_id": doc_id, "resps": [["x"]], "binary_accuracy": record}))
    samples = tmp_path / "20261205_samples_splice_video.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    table = tmp_path / "tiny_SPLICE_video_text_1fps.tsv"
    rows = [f"{k}\t{v}\tvideo_text\t{json.dumps(list(o))}\t<order>x</order>" for k, (v, o) in
            enumerate(refs.items())]  # fmt: skip
    table.write_text("index\tvideo\tconfig\tanswer\tprediction\n" + "\n".join(rows) + "\n")
    unstated = tmp_path / "unstated.tsv"  # no config column: no config's table shows it
    unstated.write_text(table.read_text().replace("\tvideo_text\t", "\t\t"))
    before = _state(board)
    assert main(["leaderboard", "add", str(unstated), "--board", str(board)]) == 2
    err = capsys.readouterr().err
    assert "unstated.tsv" in err and "config not stated" in err and _state(board) == before
    (tmp_path / "lie.yaml").write_text("toolkit: splice run\n")
    lie = ["--meta", str(tmp_path / "lie.yaml")]
    assert main(["leaderboard", "add", str(samples), "--board", str(board), *lie]) == 2
    assert "contradicts the prediction file's 'lmms-eval'" in capsys.readouterr().err
    for path, name, toolkit in ((samples, "l", "lmms-eval"), (table, "v", "VLMEvalKit")):
        args = [str(path), "--board", str(board), "--name", name, "--allow-invalid"]
        assert main(["leaderboard", "add", *args]) == 0  # (the table's answers: "x")
        entries = {e["name"]: e for e in _show(board, capsys=capsys)["entries"]}
        assert entries[name]["provenance"]["toolkit"] == toolkit
