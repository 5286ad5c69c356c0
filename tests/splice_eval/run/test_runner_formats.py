"""The question formats end to end through the command line on the demo build: ``splice
run --format`` against a fake endpoint on 127.0.0.1, ``splice score``, the random
baseline, resuming and refusing another format."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import splice_dataset as schema
import splice_formats
from splice_build.cli import main as splice_main
from splice_build.errors import UserError
from splice_eval.predictions import read_metadata, read_predictions
from splice_eval.run import prompts
from tests.support.fake_openai_server import (
    FakeOpenAIServer,
    Reply,
    Request,
    media_parts,
    prompt_text,
)

FORMATS = splice_formats.QUESTION_FORMATS


def question_rows(build: Path, config: str, fmt: str) -> list[dict]:
    return list(schema.load(config, source=str(build), format=fmt, decode=False))


def right_reply(row: dict, fmt: str) -> str:
    option = row[schema.ANSWER]["option"]
    if fmt == splice_formats.PAIRWISE:
        return f"The clip shown {'first' if option == 1 else 'second'} happened first."
    return f"<answer>{splice_formats.LETTERS[option - 1]}</answer>"


def oracle(rows: list[dict], config: str, fmt: str, wrong: set[str]):
    """Answers each question right (recognised by its whole prompt text), but prose for
    the questions in ``wrong``."""
    by_text: dict[str, dict] = {}
    for r in rows:
        by_text.setdefault(prompts.build_question_prompt(r, config, fmt).text, r)

    def script(request: Request) -> Reply:
        row = by_text[request.body["messages"][0]["content"][0]["text"]]  # the instruction
        if row[schema.QUESTION_ID] in wrong:
            return Reply(content="Hard to say, both look alike.")
        return Reply(content=right_reply(row, fmt))

    return script


def run_cli(argv: list[str]) -> int:
    return splice_main(["run", *argv])


def scores_of(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".scores.json").read_text())["scores"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_run_text_config_scores_resumes_and_refuses_another_format(
    demo_build, tmp_path, fmt, capsys
):
    rows = question_rows(demo_build, "text", fmt)
    texts = [prompts.build_question_prompt(r, "text", fmt).text for r in rows]
    # rows whose prompt another question shares cannot be told apart by the oracle
    unique = [r for r, t in zip(rows, texts, strict=True) if texts.count(t) == 1]
    wrong = {unique[0][schema.QUESTION_ID]}
    out = tmp_path / f"{fmt}.jsonl"
    argv = ["--endpoint", "", "--model", "oracle", "--config", "text", "--data", str(demo_build)]
    argv += ["--format", fmt, "--out", str(out), "--concurrency", "2"]
    with FakeOpenAIServer(oracle(rows, "text", fmt, wrong)) as server:
        argv[1] = server.url
        assert run_cli(argv) == 0
        assert len(server.requests) == len(rows)
        asked = [prompt_text(r) for r in server.requests]
    assert all("<answer>" in text for text in asked)
    captured = capsys.readouterr().out
    assert "accuracy" in captured and "chance" in captured
    scores = scores_of(out)
    shared = len(rows) - len(unique)  # answered as the first question with that prompt
    right = len(rows) - 1
    assert scores["count"] == len(rows)
    assert scores["unparsed_rate"] == pytest.approx(1 / len(rows))
    assert scores["accuracy"] <= right / len(rows)
    assert scores["accuracy"] >= (right - shared) / len(rows)
    chance = sum(1 / r[schema.ANSWER]["num_options"] for r in rows) / len(rows)
    assert scores["chance"] == pytest.approx(chance)
    meta = read_metadata(out)
    assert meta["format"] == fmt and meta["prompt_version"] == prompts.QUESTION_PROMPT_VERSION
    preds = read_predictions(out)
    assert [p.video_id for p in preds] == [r[schema.QUESTION_ID] for r in rows]
    # splice score reads the file back to the same numbers
    assert (
        splice_main(
            ["score", str(out), "--data", str(demo_build), "--json", str(tmp_path / "s.json")]
        )
        == 0
    )
    scored = json.loads((tmp_path / "s.json").read_text())["question_runs"][0]
    assert scored["accuracy"] == pytest.approx(scores["accuracy"]) and scored["format"] == fmt
    # a rerun asks nothing; another format on the same file is refused
    with FakeOpenAIServer(oracle(rows, "text", fmt, wrong)) as server:
        argv[1] = server.url
        assert run_cli(argv) == 0
        assert server.requests == []
        other = next(f for f in splice_formats.FORMATS if f != fmt)
        with pytest.raises(UserError, match=f"format {fmt!r} \\(in the file\\) vs {other!r}"):
            again = list(argv)
            again[again.index("--format") + 1] = other
            splice_main(["--debug", "run", *again])


def test_run_video_text_pairwise_shows_two_labelled_clips(demo_build, tmp_path):
    rows = question_rows(demo_build, "video_text", splice_formats.PAIRWISE)[:6]
    out = tmp_path / "pairs.jsonl"
    seen = []

    def script(request: Request) -> Reply:
        seen.append((prompt_text(request), len(media_parts(request))))
        return Reply(content="<answer>first</answer>")

    argv = ["--endpoint", "", "--model", "first", "--config", "video_text", "--data"]
    argv += [str(demo_build), "--format", "pairwise", "--limit", "6", "--out", str(out)]
    argv += ["--frames", "num_frames=1,long_side=64", "--concurrency", "1"]  # asked in row order
    with FakeOpenAIServer(script) as server:
        argv[1] = server.url
        assert run_cli(argv) == 0
    for (text, media), row in zip(seen, rows, strict=True):
        a, b = row[schema.LABELS]
        assert media == 2  # one frame per clip, two clips
        assert f"Video {a}: {row[schema.CAPTIONS][0]}" in text
        assert f"Video {b}: {row[schema.CAPTIONS][1]}" in text
        assert text.index(f"Video {a}:") < text.index(f"Video {b}:")
    scores = scores_of(out)
    assert scores["count"] == 6
    assert scores["accuracy"] == pytest.approx(
        sum(r[schema.ANSWER]["option"] == 1 for r in rows) / 6
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_baseline_reproduces_exact_chance(demo_build, tmp_path, fmt, capsys):
    out = tmp_path / f"random-{fmt}.jsonl"
    argv = ["baseline", "random", "--data", str(demo_build), "--config", "text"]
    assert splice_main([*argv, "--format", fmt, "--out", str(out)]) == 0
    report = tmp_path / "r.json"
    assert splice_main(["score", str(out), "--data", str(demo_build), "--json", str(report)]) == 0
    run = json.loads(report.read_text())["question_runs"][0]
    rows = question_rows(demo_build, "text", fmt)
    exact = sum(1 / r[schema.ANSWER]["num_options"] for r in rows) / len(rows)
    assert run["chance"] == pytest.approx(exact)
    if fmt == splice_formats.PAIRWISE:
        assert run["chance"] == 0.5
    sd = math.sqrt(
        sum(
            (1 / r[schema.ANSWER]["num_options"]) * (1 - 1 / r[schema.ANSWER]["num_options"])
            for r in rows
        )
    ) / len(rows)
    assert abs(run["accuracy"] - exact) < 3 * sd
    assert run["unparsed_rate"] == 0 and run["count"] == len(rows)


def test_report_shows_pairwise_consistency(demo_build, tmp_path, capsys):
    pairs, order = tmp_path / "pairs.jsonl", tmp_path / "order.jsonl"
    base = ["baseline", "random", "--data", str(demo_build), "--config", "text"]
    assert splice_main([*base, "--format", "pairwise", "--out", str(pairs)]) == 0
    assert splice_main([*base, "--out", str(order)]) == 0
    report = tmp_path / "r.json"
    assert (
        splice_main(
            ["score", str(pairs), str(order), "--data", str(demo_build), "--json", str(report)]
        )
        == 0
    )
    found = json.loads(report.read_text())["pairwise_consistency"]
    assert [c["model"] for c in found] == ["random"]
    # recomputed by hand: the pair answer against the order answer's relative order
    orders = {p.video_id: p.order for p in read_predictions(order)}
    agree = total = 0
    for p in read_predictions(pairs):
        q = next(
            r
            for r in question_rows(demo_build, "text", "pairwise")
            if r[schema.QUESTION_ID] == p.video_id
        )
        a, b = q[schema.LABELS]
        mine = orders[q[schema.VIDEO_ID]]
        agree += (1 if mine.index(a) < mine.index(b) else 2) == p.order[0]
        total += 1
    assert found[0]["pairs"] == total and found[0]["consistency"] == pytest.approx(agree / total)
    assert "Pairwise consistency" in capsys.readouterr().out


def test_one_score_run_for_every_format():
    """``runs.score_run`` is the one scorer of a run: an order run through the metric's
    ``score``, a question run through ``score_questions`` against the questions derived
    again from the same orders (a missing question wrong, counted apart), and options only
    the order metric has refused for a question run rather than silently dropped."""
    from splice_eval.predictions import Prediction
    from splice_eval.scoring.runs import Run, references_for, score_run

    orders = {"v1": [2, 1, 3], "v2": [1, 2]}
    order_run = Run.of([Prediction("v1", "text", "m", None, [2, 1, 3])])
    by_order = score_run(order_run, references_for(order_run, orders))
    assert by_order["count"] == 2 and by_order["binary_accuracy"] == 0.5  # v2 missing

    pairs = references_for(Run({}, format=splice_formats.PAIRWISE), orders)
    first = next(iter(pairs))
    answered = [Prediction(first, "text", "m", None, [pairs[first]["option"]])]
    pair_run = Run.of(answered, format=splice_formats.PAIRWISE)
    by_pair = score_run(pair_run, references_for(pair_run, orders))
    assert by_pair["count"] == len(pairs) > 1 and by_pair["missing"] == len(pairs) - 1
    assert math.isclose(by_pair["accuracy"], 1 / len(pairs))
    with pytest.raises(ValueError, match="pairwise run is scored without groups"):
        score_run(pair_run, pairs, groups=list(pairs))
