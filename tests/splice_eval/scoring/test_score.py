"""``splice score``: prediction files joined to a build's text shards."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import splice_dataset as sd
from splice_build.cli import main, subcommand_parser
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.run import prompts
from splice_metric import RATES, score

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


def _build(root: Path, videos: dict[str, tuple[str, str, list[int]]]) -> Path:
    """A build folder holding only what scoring reads: text shards, real schema, 2 shards."""
    (root / sd.shard_dir("text")).mkdir(parents=True)
    schema = sd.features("text").arrow_schema
    rows = [_row(v, *info) for v, info in videos.items()]
    for i, part in enumerate((rows[:2], rows[2:])):
        table = pa.Table.from_pylist(part, schema=schema)
        pq.write_table(table, root / sd.shard_dir("text") / sd.shard_name(sd.SPLIT, i, 2))
    return root


@pytest.fixture()
def build_dir(tmp_path: Path) -> Path:
    return _build(tmp_path / "splice", VIDEOS)


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


def test_score_and_report_share_one_rule_for_videos_not_in_the_build(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wall 5 (issue 30): ``score`` stopped on a row for a video the build does not hold,
    while ``report`` listed such rows under "not in build". One rule now
    (`runs.not_in_build`): the rows are left out of the scores and counted, by both; a
    run with no video in the build at all (the wrong --data) is refused by both, in the same
    one line."""
    some = _write(tmp_path / "some.jsonl", "m", {"vid_a": [2, 1], "nope": [1, 2], "gone": [1]})
    out_json = tmp_path / "scores.json"
    assert main(["score", str(some), "--data", str(build_dir), "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "2 row(s) for videos not in the build left out ('gone', 'nope')" in printed, printed
    (run,) = json.loads(out_json.read_text())["runs"]
    assert run["not_in_build"] == 2 and run["missing"] == 3

    report = tmp_path / "report"
    assert main(["report", str(some), "--data", str(build_dir), "--out", str(report)]) == 0
    capsys.readouterr()
    (row,) = json.loads((report / "report.json").read_text())["runs"]
    assert row["not_in_build"] == 2 and row["missing"] == 3
    assert "| not in build |" in (report / "report.md").read_text()

    wrong = _write(tmp_path / "wrong.jsonl", "m", {"nope": [1, 2], "gone": [2, 1]})
    lines = []
    for argv in (["score"], ["report", "--out", str(tmp_path / "r2")]):
        assert main([*argv, str(wrong), "--data", str(build_dir)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err
        lines.append(err.split(": ", 1)[1])
    assert lines[0] == lines[1]
    assert (
        "wrong.jsonl: none of its 2 videos (model 'm', config 'text') is in the build" in lines[0]
    )
    for command in ("score", "report"):  # the rule is in both commands' --help
        help_text = " ".join(subcommand_parser(command)[0].format_help().split())
        assert "left out of the scores and counted as 'not in build'" in help_text


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
    assert f"--data {tmp_path / 'nowhere'}: no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["score", str(preds), "--data", str(tmp_path / "empty")]) == 2
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


# --- answers given as raw text only, minimal files (issue 20, defect 5) -------------------

RAW = {  # what a model wrote, per video; the parsed orders below
    "vid_a": "<order>Video 2, Video 1</order>",
    "vid_b": "I think <order>Video 1, Video 3, Video 2</order>",
    "vid_c": '{"order": [1, 3, 4, 2]}',
    "vid_d": "I cannot tell.",
}
PARSED = {"vid_a": [2, 1], "vid_b": [1, 3, 2], "vid_c": [1, 3, 4, 2], "vid_d": None}
METRIC_KEYS = ("count", "by_num_clips", "missing", "errors", "unparsed", "invalid")


def _scores(path: Path, build_dir: Path, tmp_path: Path) -> tuple[dict, str]:
    out_json = tmp_path / f"{path.name}.scores.json"
    assert main(["score", str(path), "--data", str(build_dir), "--json", str(out_json)]) == 0
    (run,) = json.loads(out_json.read_text())["runs"]
    return run, run["file"]


def _same_numbers(a: dict, b: dict) -> None:
    for key in (*METRIC_KEYS, *RATES):
        assert a[key] == b[key], key


def test_null_order_with_raw_output_is_parsed_and_counted(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = [
        Prediction(v, "text", "m", raw, None) for v, raw in RAW.items()
    ]  # the rows: "order": null beside a readable raw_output
    nulls = write_predictions(tmp_path / "nulls.jsonl", full)
    parsed = _write(tmp_path / "parsed.jsonl", "m", PARSED)
    got, _ = _scores(nulls, build_dir, tmp_path)
    printed = capsys.readouterr().out
    want, _ = _scores(parsed, build_dir, tmp_path)
    _same_numbers(got, want)
    assert got["binary_accuracy"] == 0.5 and got["unparsed"] == 1
    assert "4 row(s) without an order: read from raw_output by parse_order (3 readable)" in printed
    assert got["orders_from_raw"] == {"rows": 4, "readable": 3}


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_minimal_raw_only_file_gives_the_numbers_of_the_parsed_orders(
    form: str, build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw_only = tmp_path / f"qwen_raw.{form}"
    orders_only = tmp_path / f"qwen_orders.{form}"
    if form == "jsonl":
        raw_only.write_text(
            "".join(json.dumps({"video_id": v, "raw_output": r}) + "\n" for v, r in RAW.items())
        )
        orders_only.write_text(
            "".join(json.dumps({"video_id": v, "order": o}) + "\n" for v, o in PARSED.items())
        )
    else:  # VLMEvalKit's column name for the model's answer is "prediction"
        with raw_only.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["video_id", "prediction"])
            writer.writerows(RAW.items())
        with orders_only.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["video_id", "order"])
            writer.writerows((v, json.dumps(o) if o else "") for v, o in PARSED.items())
    got, _ = _scores(raw_only, build_dir, tmp_path)
    assert "4 row(s) without an order: read from raw_output" in capsys.readouterr().out
    want, _ = _scores(orders_only, build_dir, tmp_path)
    _same_numbers(got, want)
    full, _ = _scores(_write(tmp_path / "full.jsonl", "m", PARSED), build_dir, tmp_path)
    _same_numbers(got, full)
    assert got["model"] == "qwen_raw"  # no model field: the file's name stands for it
    assert got["config"] == ""


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [
                {"video_id": "vid_a", "config": "text", "model": "m", "order": [2, 1]},
                {"video_id": "vid_b", "config": "videos", "model": "m", "order": [3, 1, 2]},
            ],
            "p.jsonl:2: config 'videos' is not a SPLICE config (video, video_text, text)",
        ),
        ([{"video_id": "vid_a"}], "p.jsonl:1: neither 'order' nor 'raw_output' given"),
        ([{"order": [2, 1]}], "p.jsonl:1: missing field video_id"),
    ],
)
def test_bad_rows_are_refused_naming_file_line_and_value(
    lines: list[dict],
    message: str,
    build_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["score", str(path), "--data", str(build_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(message) and len(err.splitlines()) == 1


def test_csv_with_a_bad_config_names_its_line(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.csv"
    path.write_text('video_id,config,order\nvid_a,text,"[2, 1]"\nvid_b,Video,"3 1 2"\n')
    assert main(["score", str(path), "--data", str(build_dir)]) == 2
    assert "p.csv:3: config 'Video' is not a SPLICE config" in capsys.readouterr().err


def test_report_refuses_the_empty_file_score_refuses(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One reader: ``splice report`` used to drop the empty file silently (issue 21, wall 7)."""
    good = _write(tmp_path / "good.jsonl", "m", PARSED)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    out = tmp_path / "report"
    for cmd in (
        ["score", str(good), str(empty)],
        ["report", str(good), str(empty), "--out", str(out)],
    ):
        assert main([*cmd, "--data", str(build_dir)]) == 2
        assert capsys.readouterr().err.strip().endswith("empty.jsonl: no predictions")


def test_report_reads_a_raw_only_csv_and_says_so(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "vlm.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([("video_id", "prediction"), *RAW.items()])
    out = tmp_path / "report"
    assert main(["report", str(path), "--data", str(build_dir), "--out", str(out)]) == 0
    (run,) = json.loads((out / "report.json").read_text())["runs"]
    assert (run["model"], run["config"], run["orders_from_raw"], run["unparsed"]) == (
        "vlm",
        "",
        4,
        1,
    )
    assert run["overall"]["binary_accuracy"]["mean"] == 0.5
    md = (out / "report.md").read_text()
    assert "| Model | Config not stated Binary |" in md
    assert "| vlm |  | 0 | 0 | 1 | 0 | 0 | 4 |" in md  # coverage: 4 orders read from raw_output
    assert (out / "accuracy_by_domain_config_not_stated.png").is_file()


def test_groups_num_clips_rows_are_sorted_numerically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows came in the order of first appearance (2, 4, 5, 3, 6, 7; issue 21, wall 7)."""
    counts = (2, 4, 5, 3, 6, 7, 10)
    videos = {f"v{i}": ("Dish", f"T{n}", list(range(1, n + 1))) for i, n in enumerate(counts)}
    build = _build(tmp_path / "splice", videos)
    preds = _write(tmp_path / "p.jsonl", "m", {v: info[2] for v, info in videos.items()})
    out_json = tmp_path / "s.json"
    cmd = ["score", str(preds), "--data", str(build), "--groups", "num_clips", "task"]
    assert main([*cmd, "--random-baseline", "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out

    def first_column(title: str) -> list[str]:  # the table's rows, under header and rule
        table = printed.split(f"p.jsonl:m/text by {title}")[1].split("\n\n")[0]
        return [line.split()[0] for line in table.splitlines()[2:]]

    assert first_column("num_clips") == [str(n) for n in sorted(counts)]
    assert first_column("task") == sorted(f"T{n}" for n in counts)
    (run,) = json.loads(out_json.read_text())["runs"]
    assert list(run["by_group"]["num_clips"]) == [str(n) for n in sorted(counts)]
    assert list(run["random_baseline"]["by_group"]["num_clips"]) == [str(n) for n in sorted(counts)]


# --- issue 31, defects 7 and 8: answers read as the model wrote them, degenerate ones unparsed


ORDINALS = ["first", "second", "third", "fourth"]


def _positions(order: list[int]) -> str:
    """The right answer written as a position per clip: "Video k: <its position>"."""
    clips = sorted(order)
    return "\n".join(f"Video {k}: {ORDINALS[order.index(k)]}" for k in clips)


def test_right_answers_as_positions_per_clip_score_one(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Right answers written as "Video k: first/second/..." scored binary 0.083 with invalid
    0.0 (read as 1, 2, 3 ...); they are the right orders."""
    forms = [
        _positions,
        lambda o: f"<order>{_positions(o).replace(chr(10), ', ')}</order>",
        lambda o: json.dumps({f"Video {k}": o.index(k) + 1 for k in sorted(o)}),
    ]
    for i, form in enumerate(forms):
        preds = [Prediction(v, "text", "m", form(o), None) for v, (_, _, o) in VIDEOS.items()]
        run, _ = _scores(write_predictions(tmp_path / f"pos{i}.jsonl", preds), build_dir, tmp_path)
        assert run["binary_accuracy"] == 1.0, form(VIDEOS["vid_c"][2])
        assert run["invalid_rate"] == 0.0


def test_degenerate_answers_score_as_unparsed(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thousand ``[`` raised RecursionError out of `splice score`, and a 200 kB loop took
    minutes: the file scores, each such row counted unparsed."""
    loop = ("Video 1: the person cuts. Answer: Step 2: then: Video 3: wait: " * 4_000)[:200_000]
    raws = {"vid_a": "[" * 1_000, "vid_b": "{" * 5_000, "vid_c": loop, "vid_d": ":" * 32_768}
    preds = [Prediction(v, "text", "m", raw, None) for v, raw in raws.items()]
    run, _ = _scores(write_predictions(tmp_path / "junk.jsonl", preds), build_dir, tmp_path)
    assert run["unparsed"] == 4 and run["invalid_rate"] == 1.0
    assert "4 row(s) without an order: read from raw_output by parse_order (0 readable)" in (
        capsys.readouterr().out
    )


def _lmms_samples(path: Path, answers: dict[str, str | None]) -> Path:
    """An lmms-eval ``--log_samples`` file as the SPLICE task logs it: the task's record
    under each metric's name, beside lmms-eval's own keys."""
    lines = []
    for doc_id, (video, raw) in enumerate(answers.items()):
        record = {"video_id": video, "config": "text", "raw_output": raw, "order": None}
        record["reference"] = VIDEOS[video][2]
        resps = [[raw]] if raw is not None else [[]]
        line = {"doc_id": doc_id, "resps": resps, "filtered_resps": resps[0]}
        line |= {name: record for name in RATES}
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_lmms_samples_with_only_empty_answers_are_refused(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lmms-eval exits 0 when its model crashed: a class that catches the error (such as
    ``internvl_hf``) logs "" for every document. That file is no model's answers."""
    crashed = _lmms_samples(tmp_path / "crashed.jsonl", {v: "" for v in VIDEOS})
    assert main(["score", str(crashed), "--data", str(build_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(crashed) in err, err
    assert f"all {len(VIDEOS)} answers are empty" in err and "crashed" in err
    nulls = _lmms_samples(tmp_path / "nulls.jsonl", {v: None for v in VIDEOS})
    assert main(["score", str(nulls), "--data", str(build_dir)]) == 2
    assert "answers are empty" in capsys.readouterr().err
    # one real answer among empty ones is a run: the empty ones are scored as invalid
    answers = {v: "" for v in VIDEOS} | {"vid_a": "<order>Video 2, Video 1</order>"}
    partly = _lmms_samples(tmp_path / "partly.jsonl", answers)
    report = tmp_path / "partly.json"
    assert main(["score", str(partly), "--data", str(build_dir), "--json", str(report)]) == 0
    (run,) = json.loads(report.read_text())["runs"]
    assert run["binary_accuracy"] == pytest.approx(1 / len(VIDEOS))
    assert run["invalid_rate"] == pytest.approx(1 - 1 / len(VIDEOS))


def test_groups_then_the_file_scores_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``score --groups domain qwen.jsonl`` (issue 30, wall 9): the file is not a column."""
    videos = {"v1": ("Dish", "T1", [1, 2]), "v2": ("Vehicle", "T2", [2, 1, 3])}
    build = _build(tmp_path / "splice", videos)
    preds = _write(tmp_path / "qwen.jsonl", "m", {v: info[2] for v, info in videos.items()})
    assert main(["score", "--groups", "domain", str(preds), "--data", str(build)]) == 0
    printed = capsys.readouterr().out
    assert "qwen.jsonl:m/text by domain" in printed and "Vehicle" in printed
    assert main(["score", "--groups", "domain", "--data", str(build)]) == 2
    assert "give at least one prediction file" in capsys.readouterr().err


def _vlmevalkit_result(path: Path, rows: list[dict]) -> Path:
    """A result file as VLMEvalKit writes one (``dump``: pandas to xlsx, TSV or a JSON list
    of records): its dataset's columns, ``video`` the id, plus ``prediction``."""
    if path.suffix == ".xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        book.active.append(list(rows[0]))
        for row in rows:
            book.active.append(list(row.values()))
        book.save(path)
    elif path.suffix == ".tsv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, list(rows[0]), delimiter="\t", quoting=csv.QUOTE_ALL)
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text(json.dumps(rows, indent=4), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".xlsx", ".tsv", ".json"])
def test_vlmevalkit_result_files_score_as_their_answers(
    suffix: str, build_dir: Path, tmp_path: Path
) -> None:
    """VLMEvalKit's result of a run (the default .xlsx, or PRED_FORMAT tsv / json) scores as
    the same answers in the project's own format (issue 34: .xlsx was "not UTF-8")."""
    rows = [
        {"index": i, "video": v, "question": "A video has\nbeen split", "prediction": raw}
        | {"config": "text", "answer": json.dumps({"order": VIDEOS[v][2]})}
        for i, (v, raw) in enumerate(RAW.items())
    ]
    got, _ = _scores(_vlmevalkit_result(tmp_path / f"m_SPLICE{suffix}", rows), build_dir, tmp_path)
    want, _ = _scores(_write(tmp_path / "full.jsonl", "m", PARSED), build_dir, tmp_path)
    _same_numbers(got, want)
    assert got["orders_from_raw"] == {"rows": 4, "readable": 3}
    assert got["config"] == "text" and got["model"] == "m_SPLICE"


def test_a_vlmevalkit_result_without_video_names_the_column(
    build_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"index": 0, "prediction": "<order>Video 1</order>"}]
    path = _vlmevalkit_result(tmp_path / "m_SPLICE.json", rows)
    assert main(["score", str(path), "--data", str(build_dir)]) == 2
    assert "m_SPLICE.json:1: no video or video_id column" in capsys.readouterr().err


def test_a_broken_xlsx_is_one_line(build_dir: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "m_SPLICE.xlsx"
    path.write_bytes(b"PK\x03\x04 not really a workbook")
    assert main(["score", str(path), "--data", str(build_dir)]) == 2
    assert "m_SPLICE.xlsx: not a readable .xlsx file" in capsys.readouterr().err
