"""``splice score``: prediction files joined to a build's text shards."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import splice_dataset as sd
from splice_build.cli import main
from splice_eval import prompts
from splice_eval.predictions import Prediction, write_predictions
from splice_metric import score

# video_id -> (domain, task, chronological order of the shuffled clip labels)
VIDEOS = {
    "vid_a": ("Dish", "MakeSalad", [2, 1]),
    "vid_b": ("Dish", "MakeSalad", [3, 1, 2]),
    "vid_c": ("Vehicle", "ChangeTire", [1, 3, 4, 2]),
    "vid_d": ("Vehicle", "PatchTire", [2, 3, 1]),
}


def _row(video_id: str, domain: str, task: str, order: list[int]) -> dict:
    n = len(order)
    return {
        sd.VIDEO_ID: video_id,
        sd.TASK: task,
        sd.DOMAIN: domain,
        sd.RECIPE_TYPE: 1,
        sd.COIN_SUBSET: "testing",
        sd.NUM_CLIPS: n,
        sd.DURATION: 10.0 * n,
        sd.CAPTIONS: [f"step {i}" for i in range(1, n + 1)],
        sd.CLIP_DURATIONS: [10.0] * n,
        sd.ANSWER: {
            "order": order,
            "segments": [{"start": 10.0 * i, "end": 10.0 * i + 9} for i in range(n)],
            "step_ids": list(range(n)),
        },
    }


@pytest.fixture()
def build_dir(tmp_path: Path) -> Path:
    """A build folder holding only what scoring reads: text shards, real schema, 2 shards."""
    root = tmp_path / "splice"
    (root / sd.shard_dir("text")).mkdir(parents=True)
    schema = sd.features("text").arrow_schema
    rows = [_row(v, *info) for v, info in VIDEOS.items()]
    for i, part in enumerate((rows[:2], rows[2:])):
        table = pa.Table.from_pylist(part, schema=schema)
        pq.write_table(table, root / sd.shard_dir("text") / sd.shard_name(sd.SPLIT, i, 2))
    return root


def _write(path: Path, model: str, orders: dict[str, list[int] | None]) -> Path:
    preds = [
        Prediction(video_id=v, config="text", model=model, raw_output=None, order=o)
        for v, o in orders.items()
    ]
    return write_predictions(path, preds)


def test_scores_runs_with_groups_baseline_and_json(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    perfect = _write(tmp_path / "oracle.jsonl", "oracle", {v: o for v, (_, _, o) in VIDEOS.items()})
    partial = _write(
        tmp_path / "partial.jsonl",
        "guess",
        {"vid_a": [1, 2], "vid_b": [3, 1, 2], "vid_c": None},  # vid_d missing
    )
    out_json = tmp_path / "out" / "scores.json"
    code = main(
        [
            "score", str(perfect), str(partial), "--data", str(build_dir),
            "--groups", "domain", "task", "--random-baseline",
            "--confidence-level", "0.9", "--bootstrap-iterations", "50",
            "--json", str(out_json),
        ]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "oracle.jsonl:oracle/text" in printed and "random (expected)" in printed
    assert "partial.jsonl:guess/text: no metadata line" in printed
    assert (
        "scored as invalid: 1 video(s) without a prediction; "
        "1 answer(s) with no readable order (unparsed)"
    ) in printed
    assert "by domain" in printed and "ChangeTire" in printed

    payload = json.loads(out_json.read_text())
    assert payload["videos"] == 4
    oracle, guess = payload["runs"]
    assert oracle["binary_accuracy"] == 1.0 and oracle["missing"] == 0
    # the missing video and the null order are both invalid predictions
    refs = [o for _, _, o in VIDEOS.values()]
    want = score([[1, 2], [3, 1, 2], None, None], refs)
    for metric in ("binary_accuracy", "hamming_accuracy", "edit_distance", "invalid_rate"):
        assert guess[metric] == pytest.approx(want[metric])
    assert guess["invalid_rate"] == 0.5 and guess["missing"] == 1
    assert guess["unparsed_rate"] == 0.5 and guess["unparsed"] == 1 and guess["invalid"] == 0
    assert guess["by_num_clips"]["3"]["count"] == 2
    assert guess["by_group"]["domain"]["Dish"]["binary_accuracy"] == 0.5
    assert guess["by_group"]["task"]["PatchTire"]["invalid_rate"] == 1.0
    assert "confidence_intervals" in guess
    baseline = guess["random_baseline"]
    assert baseline["binary_accuracy"] == pytest.approx((1 / 2 + 1 / 6 + 1 / 24 + 1 / 6) / 4)
    assert baseline["by_group"]["domain"]["Dish"]["binary_accuracy"] == pytest.approx(1 / 3)


def test_metadata_and_kinds_of_invalid_are_shown(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = {
        "producer": "splice run",
        "model": "qwen",
        "config": "text",
        "endpoint": "http://gpu-box:8000/v1",
        "prompt_version": prompts.PROMPT_VERSION,
        "sampling": {"max_tokens": 1024, "temperature": 0.0},
        "splice_version": "0.1.0",
    }
    preds = [
        Prediction("vid_a", "text", "qwen", "<order>Video 2, Video 1</order>", [2, 1]),
        Prediction("vid_b", "text", "qwen", "<order>Video 1, Video 1</order>", [1, 1]),
        Prediction("vid_c", "text", "qwen", "I am not sure.", None),
        Prediction("vid_d", "text", "qwen", None, None, {"error": "timeout: no answer"}),
    ]
    path = write_predictions(tmp_path / "qwen.jsonl", preds, metadata=meta)
    out_json = tmp_path / "s.json"
    assert main(["score", str(path), "--data", str(build_dir), "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert (
        "qwen.jsonl:qwen/text: producer splice run; model qwen; config text; endpoint "
        "http://gpu-box:8000/v1; prompt_version " + prompts.PROMPT_VERSION
    ) in printed
    assert "sampling max_tokens=1024,temperature=0.0" in printed
    assert (
        "scored as invalid: 1 request error(s); 1 answer(s) with no readable order (unparsed); "
        "1 order(s) read that are not a permutation (invalid)"
    ) in printed
    (run,) = json.loads(out_json.read_text())["runs"]
    assert run["metadata"] == meta
    assert (run["errors"], run["unparsed"], run["invalid"], run["missing"]) == (1, 1, 1, 0)
    assert run["invalid_rate"] == 0.75 and run["unparsed_rate"] == 0.5


def test_unknown_video_is_an_error_naming_file_and_video(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _write(tmp_path / "bad.jsonl", "m", {"vid_a": [2, 1], "nope": [1, 2]})
    assert main(["score", str(bad), "--data", str(build_dir)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: video 'nope' (model 'm', config 'text') is not in the build" in err


def test_duplicate_prediction_is_an_error(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dup.jsonl"
    line = Prediction("vid_a", "text", "m", None, [2, 1]).to_json()
    path.write_text(line + "\n" + line + "\n")
    assert main(["score", str(path), "--data", str(build_dir)]) == 2
    assert "dup.jsonl: video 'vid_a' has two predictions" in capsys.readouterr().err


def test_missing_build_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = _write(tmp_path / "p.jsonl", "m", {"vid_a": [2, 1]})
    assert main(["score", str(preds), "--data", str(tmp_path / "nowhere")]) == 2
    assert "no text shards matching text/test-*.parquet" in capsys.readouterr().err


def test_empty_prediction_file_is_an_error(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["score", str(empty), "--data", str(build_dir)]) == 2
    assert "empty.jsonl: no predictions" in capsys.readouterr().err


def test_duplicate_video_in_the_build_is_an_error(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = build_dir / sd.shard_dir("text") / sd.shard_name(sd.SPLIT, 1, 2)
    table = pa.Table.from_pylist(
        [_row("vid_a", *VIDEOS["vid_a"])], schema=sd.features("text").arrow_schema
    )
    pq.write_table(pa.concat_tables([pq.read_table(shard), table]), shard)
    preds = _write(tmp_path / "p.jsonl", "m", {"vid_a": [2, 1]})
    assert main(["score", str(preds), "--data", str(build_dir)]) == 2
    assert "video 'vid_a' appears twice in the text shards" in capsys.readouterr().err


def test_shard_without_a_needed_column_is_an_error_naming_it(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = build_dir / sd.shard_dir("text") / sd.shard_name(sd.SPLIT, 1, 2)
    pq.write_table(pq.read_table(shard).drop_columns([sd.DOMAIN]), shard)
    preds = _write(tmp_path / "p.jsonl", "m", {"vid_a": [2, 1]})
    assert main(["score", str(preds), "--data", str(build_dir)]) == 2
    assert f"{shard}: missing column(s) {sd.DOMAIN}" in capsys.readouterr().err
