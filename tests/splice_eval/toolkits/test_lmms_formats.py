"""The lmms-eval question variants (``splice_video_text_pairwise`` / ``_choice``): their
YAML, the docs they make from a config's rows, the scores of their records, and a run by
lmms-eval itself with its dummy model."""

from __future__ import annotations

import json

import pytest

import splice_dataset as schema
import splice_formats
from splice_build.cli import main as splice_main
from tests.support.lmms_tasks import TASK_DIR, docs, eval_dummy, load_task_yaml

VARIANTS = {f"splice_video_text_{f}": f for f in splice_formats.QUESTION_FORMATS}


@pytest.mark.parametrize("task", list(VARIANTS))
def test_variant_yaml_names_the_question_functions(task):
    config = load_task_yaml(TASK_DIR / f"{task}.yaml")
    assert config["task"] == task and config["dataset_name"] == "video_text"
    assert config["process_docs"].name == f"utils.process_docs_{VARIANTS[task]}"
    assert config["process_results"].name == "utils.process_results_question"
    assert [m["metric"] for m in config["metric_list"]] == list(
        ("accuracy", "chance", "unparsed_rate", "invalid_rate")
    )


@pytest.mark.parametrize("fmt", splice_formats.QUESTION_FORMATS)
def test_docs_are_the_loaders_questions_and_score_exactly(
    demo_build, utils, tmp_path, fmt, monkeypatch
):
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(tmp_path / "clips"))
    plain = docs(demo_build, "video_text", utils)
    import datasets

    rows = datasets.load_dataset(str(demo_build), "video_text", split=schema.SPLIT)
    asked = list(getattr(utils, f"process_docs_{fmt}")(rows))
    loaded = list(schema.load("text", source=str(demo_build), format=fmt))
    assert [d[schema.QUESTION_ID] for d in asked] == [q[schema.QUESTION_ID] for q in loaded]
    assert len(asked) >= len(plain)
    for doc in asked[:5]:
        assert utils.format_of(doc) == fmt
        paths = utils.doc_to_visual(doc)
        assert [p.rsplit("_video", 1)[1] for p in paths] == [f"{k}.mp4" for k in doc[schema.LABELS]]
        text = utils.doc_to_text(doc)
        assert "<answer>" in text and all(f"Video {k}" in text for k in doc[schema.LABELS])
    right = [utils.process_results_question(d, [utils.doc_to_target(d)]) for d in asked]
    none = [utils.process_results_question(d, ["no idea"]) for d in asked]
    assert utils.aggregate_question_accuracy([r["accuracy"] for r in right]) == 1.0
    assert utils.aggregate_question_unparsed_rate([r["accuracy"] for r in none]) == 1.0
    chance = sum(1 / d[schema.ANSWER]["num_options"] for d in asked) / len(asked)
    assert utils.aggregate_question_chance([r["chance"] for r in right]) == pytest.approx(chance)
    # a --log_samples file of these records scores with `splice score` as the same run
    samples = tmp_path / "samples.jsonl"
    lines = [json.dumps({"doc_id": i, **r}) for i, r in enumerate(right)]
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "scores.json"
    assert (
        splice_main(["score", str(samples), "--data", str(demo_build), "--json", str(report)]) == 0
    )
    (scored,) = json.loads(report.read_text())["question_runs"]
    assert scored["format"] == fmt and scored["accuracy"] == 1.0
    assert scored["count"] == len(loaded)


@pytest.mark.parametrize("task", list(VARIANTS))
def test_lmms_eval_runs_a_question_variant_end_to_end(lmms, demo_build, tmp_path, task):
    out, results, _ = eval_dummy(lmms, demo_build, tmp_path, task, "<answer>A</answer>")
    results = results["results"][task]
    questions = list(schema.load("text", source=str(demo_build), format=VARIANTS[task]))
    chance = sum(1 / q[schema.ANSWER]["num_options"] for q in questions) / len(questions)
    assert results["chance,none"] == pytest.approx(chance)
    if VARIANTS[task] == splice_formats.CHOICE:  # "A" is option 1 everywhere
        expected = sum(q[schema.ANSWER]["option"] == 1 for q in questions) / len(questions)
        assert results["accuracy,none"] == pytest.approx(expected)
        assert results["unparsed_rate,none"] == 0.0
    else:  # "A" names no clip of a pair
        assert results["unparsed_rate,none"] == 1.0
    (samples_file,) = out.rglob(f"*_samples_{task}.jsonl")
    assert len(samples_file.read_text(encoding="utf-8").splitlines()) == len(questions)
