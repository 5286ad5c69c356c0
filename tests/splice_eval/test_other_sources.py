"""Everything downstream of ``splice build`` on builds of other sources than COIN: the
session's one CrossTask build and one ``steps`` build (`source_builds.build_source`, the
same fixtures and builds as tests/build/sources/, which also run ``splice validate`` on
them), each through the commands a researcher types: ``load_dataset`` in the three configs
and ``evaluate.load``; ``splice run`` against an endpoint on 127.0.0.1 (the order task with a
probe, and the pairwise and choice questions) and ``splice score`` grouped by the source's
own tasks; ``splice baseline`` (the written order where the source writes one, the COIN
taxonomy prior refused in one line); ``splice report``; ``splice leaderboard init``;
``splice annotate export`` read back by the human app."""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import pytest

import splice_dataset as schema
import splice_formats
import splice_metric
from splice_build.output.card_reader import read_card
from splice_eval.human import annotate
from splice_eval.human.app.package import read_package
from splice_eval.predictions import read_predictions
from tests.build.sources.test_crosstask import write_release as write_crosstask
from tests.build.sources.test_steps import write_csv as write_steps
from tests.splice_eval.run.test_runner_formats import oracle as question_oracle
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.scripted_runs import oracle, rows_of
from tests.support.source_builds import build_source, load_three, splice

WRITERS = {"crosstask": write_crosstask, "steps": write_steps}
# the fixtures' kept videos: task -> chronological captions (their own rules' tests say why)
TASKS = {
    "crosstask": {
        "Make Jelly Cups": ["boil water", "pour jelly powder", "pour into cups"],
        "Sear Steak": ["season steak", "heat pan", "rest steak"],
    },
    "steps": {
        "Refill printer": ["open the lid", "insert the cartridge", "close the lid"],
        "steps": ["take bowl", "pour cereals", "pour milk"],
    },
}


@pytest.fixture(scope="module", params=sorted(WRITERS))
def source(request, tmp_path_factory) -> tuple[str, Path, Path]:
    """(source name, the build, the annotations it read)."""
    name = request.param
    made = build_source(tmp_path_factory, name, WRITERS[name])
    return name, Path(made["out"]), Path(made["annotations"])


def _chronological(row: dict) -> list[str]:
    order = row[schema.ANSWER]["order"]
    return [row[schema.CAPTIONS][label - 1] for label in order]


def test_load_dataset_three_configs_and_the_metric(source):
    name, build, _ = source
    assert read_card(build).source == name
    loaded = load_three(build)
    for config, rows in loaded.items():
        assert {r[schema.VIDEO_ID] for r in rows} == {
            r[schema.VIDEO_ID] for r in loaded["video_text"]
        }
        assert set(rows[0]) == set(schema.columns(config))
    tasks = {r[schema.TASK]: _chronological(r) for r in loaded["text"]}
    assert tasks == TASKS[name]
    refs = [list(r[schema.ANSWER]["order"]) for r in loaded["text"]]
    metric = evaluate.load(str(Path(splice_metric.__file__).parent))
    reversed_orders = [list(reversed(r)) for r in refs]
    assert metric.compute(predictions=refs, references=refs)["binary_accuracy"] == 1.0
    assert metric.compute(predictions=reversed_orders, references=refs)["binary_accuracy"] == 0.0


def test_run_with_a_probe_and_the_question_formats_then_score_by_task(source, tmp_path):
    name, build, _ = source
    rows = rows_of(build, "video_text")
    order = tmp_path / "order.jsonl"
    argv = ["run", "--endpoint", "", "--model", "oracle", "--data", str(build)]
    argv += ["--config", "video_text", "--as", "images", "--frames", "num_frames=2,long_side=32"]
    argv += ["--probe", "blind", "--no-frame-cache", "--out", str(order)]
    with FakeOpenAIServer(oracle(rows)) as server:
        argv[2] = server.url
        code, out, err = splice(*argv)
        assert code == 0, out + err
        assert len(server.requests) == len(rows)
    preds = read_predictions(order)
    assert {p.video_id: p.order for p in preds} == {
        r[schema.VIDEO_ID]: list(r[schema.ANSWER]["order"]) for r in rows
    }
    asked = []
    for fmt in splice_formats.QUESTION_FORMATS:
        questions = list(schema.load("text", source=str(build), format=fmt, decode=False))
        path = tmp_path / f"{fmt}.jsonl"
        with FakeOpenAIServer(question_oracle(questions, "text", fmt, set())) as server:
            code, out, err = splice(
                "run", "--endpoint", server.url, "--model", "oracle", "--data", build,
                "--config", "text", "--format", fmt, "--out", path,
            )  # fmt: skip
            assert code == 0, out + err
        asked.append(path)
    code, out, err = splice("score", "--data", build, "--groups", "task", "domain", order, *asked)
    assert code == 0, err
    by_task = out.split("by task", 1)[1]
    assert all(task in by_task for task in TASKS[name])
    assert "| pairwise |" in out and "| choice |" in out
    for fmt in splice_formats.QUESTION_FORMATS:
        assert f"{fmt}.jsonl:oracle/text | {fmt} |" in out
        accuracy = out.split(f"{fmt}.jsonl:oracle/text | {fmt} |", 1)[1].split("|")[1]
        assert float(accuracy) == 1.0


def test_baselines_written_order_or_taxonomy_prior_refused(source, tmp_path):
    name, build, annotations = source
    for baseline in ("random", "identity", "visual-similarity"):
        out = tmp_path / f"{baseline}.jsonl"
        assert splice("baseline", baseline, "--data", build, "--out", out)[0] == 0
        assert len(read_predictions(out)) == 2
    code, _, err = splice("baseline", "taxonomy-prior", "--data", build, "--out", tmp_path / "t")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"taxonomy-prior: unavailable: this build is --source {name} " in err
    assert not (tmp_path / "t").exists()
    out = tmp_path / "written.jsonl"
    argv = ("baseline", "written-order", "--data", build, "--annotations", annotations)
    code, _, err = splice(*argv, "--out", out)
    if name == "steps":  # a lab's CSV writes no order of its steps
        assert code == 2 and "written-order: unavailable: this build is --source steps" in err
        assert len(err.strip().splitlines()) == 1 and not out.exists()
        return
    assert code == 0, err
    assert (
        "try written-order --annotations PATH"
        in splice("baseline", "taxonomy-prior", "--data", build, "--out", tmp_path / "t")[2]
    )
    # the fixture's kept videos follow their task cards: the written order is right
    refs = {r[schema.VIDEO_ID]: list(r[schema.ANSWER]["order"]) for r in rows_of(build, "text")}
    assert {p.video_id: p.order for p in read_predictions(out)} == refs
    code, _, err = splice(*argv[:-2], "--out", tmp_path / "w2")
    assert code == 2 and "written-order: needs --annotations PATH" in err


def test_report_groups_by_the_sources_tasks_without_the_papers_rows(source, tmp_path):
    name, build, _ = source
    preds = tmp_path / "identity.jsonl"
    assert (
        splice("baseline", "identity", "--data", build, "--config", "text", "--out", preds)[0] == 0
    )
    code, out, err = splice("report", "--data", build, "--out", tmp_path / "report", preds)
    assert code == 0, err
    text = (tmp_path / "report" / "report.md").read_text("utf-8")
    section = text.split(f"by task (the {name} source's own tasks)", 1)[1].split("\n## ", 1)[0]
    assert all(task in section for task in TASKS[name])
    assert "Reasoning-type groups" not in text and "paper:" not in text
    report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert report["source"] == name and report["runs"][0]["reasoning_groups"] == []
    code, out, err = splice("report", "--paper", "--data", build, "--out", tmp_path / "p", preds)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--paper: the paper's rows are COIN's" in err and not (tmp_path / "p").exists()


def test_leaderboard_init_has_no_paper_rows_and_no_coin_prior(source, tmp_path):
    name, build, _ = source
    board = tmp_path / "board"
    code, out, err = splice("leaderboard", "init", "--board", board, "--data", build)
    assert code == 0, err
    entries = sorted(p.name for p in (board / "entries").iterdir())
    assert not [e for e in entries if e.startswith("paper-")]
    assert not [e for e in entries if "taxonomy" in e]
    assert any("identity" in e for e in entries) and "random-exact" in entries
    # the contamination column asks after the board's own source, in every view
    title = read_card(build).source_identity["title"]
    assert f"source_title: {title}" in (board / "board.yaml").read_text("utf-8")
    code, shown, err = splice("leaderboard", "show", "--board", board)
    assert code == 0, err
    code, _, err = splice("leaderboard", "export", "--board", board, "--out", tmp_path / "b.md")
    assert code == 0, err
    exported = (tmp_path / "b.md").read_text("utf-8")
    from dataclasses import replace

    from splice_eval.leaderboard import table
    from splice_eval.leaderboard.records import Provenance
    from splice_eval.leaderboard.web import board_view, entry_view

    loaded = table.load_board(board)
    headers = " ".join(board_view.render_board(loaded).table.headers)
    declared = replace(loaded.entries[0], provenance=Provenance(contamination="no"))
    entry = entry_view.provenance(declared, loaded.config.source_title).replace("\\", "")
    for view in (shown, exported, headers, entry):
        assert "COIN" not in view and f"{title} in training?" in view, view
    code, _, err = splice(
        "leaderboard", "init", "--board", tmp_path / "b2", "--data", build,
        "--baselines", "taxonomy-prior",
    )  # fmt: skip
    assert code == 2 and "--baselines: taxonomy-prior: unavailable" in err


def test_annotate_export_and_the_apps_package(source, tmp_path):
    name, build, _ = source
    pkg = tmp_path / "packages"
    code, out, err = splice("annotate", "export", build, "--out", pkg, "--seed", "1")
    assert code == 0, err
    key = annotate.read_key(pkg / annotate.KEY_NAME)
    assert {a.video_id for a in key.values()} == {
        r[schema.VIDEO_ID] for r in rows_of(build, "text")
    }
    package = read_package(pkg)
    tasks = [t for listed in package.tasks.values() for t in listed]
    assert sorted(t.folder for t in tasks) == sorted(key)
    for task in tasks:
        assert len(task.clips) == len(key[task.folder].parts) == 3
        assert all(clip.is_file() and clip.stat().st_size > 0 for clip in task.clips)


def test_htstep_written_order_follows_the_videos_variation(tmp_path_factory, tmp_path):
    """HT-Step writes one step order per variation (``step_index``): a video is ordered by
    the variation holding its captions, read from the taxonomy, not from the build."""
    from splice_build.sources import htstep
    from splice_eval.scoring.written_order import written_order
    from tests.build.sources.test_htstep import write_release as write_htstep

    made = build_source(tmp_path_factory, "htstep", write_htstep)
    orders = htstep.written_orders(Path(made["annotations"]))
    assert orders["Make Chips"] == (
        ("Peel the potatoes.", "Fry the potatoes."),
        ("Slice the potatoes thin.", "Bake the slices."),
    )
    shown = ["Bake the slices.", "Slice the potatoes thin."]  # variation B, shuffled
    assert written_order(orders, "Make Chips", shown) == [2, 1]
    build, out = Path(made["out"]), tmp_path / "written.jsonl"
    argv = ("baseline", "written-order", "--data", build, "--annotations", made["annotations"])
    assert splice(*argv, "--out", out)[0] == 0
    refs = {r[schema.VIDEO_ID]: list(r[schema.ANSWER]["order"]) for r in rows_of(build, "text")}
    assert {p.video_id: p.order for p in read_predictions(out)} == refs
