"""``splice run --backend transformers`` / ``vllm`` without torch: the options, the prompt
layout, the batching and Ctrl-C, and the runner's path through a local model (a scripted
stand-in for the model; the real classes run in
tests/splice_eval/run/local/test_transformers_backend.py)."""

from __future__ import annotations

import _thread
import json
import threading
import time
from pathlib import Path

import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_build.remote.breaker import EndpointDown
from splice_eval.run import prompts
from splice_eval.run.chat import CallResult
from splice_eval.run.jobs import FramesRequest
from splice_eval.run.local import families, load
from splice_eval.run.local.backend import BatchCaller, LocalModel
from splice_eval.run.sampling import sample_frames
from tests.support.terminal import python_sigint

FORCED = "<order>Video 2, Video 1</order>"


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    code = splice_main(["run", *argv])
    return code, capsys.readouterr().err


# --- options ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--backend", "openai"], "--endpoint is required with --backend openai"),
        (
            ["--endpoint", "http://127.0.0.1:9/v1", "--device", "cuda"],
            "--device applies to --backend transformers or vllm",
        ),
        (
            ["--backend", "transformers", "--endpoint", "http://127.0.0.1:9/v1"],
            "--endpoint is for --backend openai",
        ),
        (["--backend", "transformers", "--as", "video"], "--as is for --backend openai"),
        (["--backend", "vllm", "--device", "cpu"], "--device applies to --backend transformers"),
        (["--backend", "vllm"], "--backend vllm needs vllm, which is not installed"),
        (["--backend", "transformers"], "needs torch, which is not installed: pip install"),
    ],
)
def test_backend_options_are_refused_in_one_line(extra, message, demo_build, tmp_path, capsys):
    argv = ["--model", "m", "--config", "video", "--data", str(demo_build)]
    code, err = run_cli([*argv, "--out", str(tmp_path / "o.jsonl"), *extra], capsys)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_families_and_their_paper_settings():
    assert families.family_of("qwen2_vl").frames == "fps=1"
    assert families.family_of("qwen2_5_vl").frames == "fps=1"
    assert families.family_of("internvl").frames == "num_frames=16"
    assert families.family_of("llava_onevision").frames == "num_frames=16"
    assert families.family_of("idefics3").name == families.SMOLVLM
    assert families.family_of("gemma3").name == families.GENERIC
    assert families.family_of("gemma3").clips_as == "images"


def test_interleaved_text_puts_each_clip_after_its_heading():
    row = {
        schema.VIDEO_ID: "v",
        schema.CLIPS: [b"a", b"b", b"c"],
        schema.CAPTIONS: ["add water", "cut", "serve"],
    }
    prompt = prompts.build_prompt(row, "video_text")
    text = prompts.interleaved_text(prompt, ["<c1>", "<c2>", "<c3>"])
    assert text == (
        prompt.text + "\nVideo 1: add water\n<c1>\nVideo 2: cut\n<c2>\nVideo 3: serve\n<c3>"
    )
    with pytest.raises(ValueError, match="2 placeholders for 3 clips"):
        prompts.interleaved_text(prompt, ["<c1>", "<c2>"])
    text_row = {schema.VIDEO_ID: "v", schema.CAPTIONS: ["a", "b"]}
    text_prompt = prompts.build_prompt(text_row, "text")
    assert prompts.interleaved_text(text_prompt, []) == text_prompt.text


# --- batching and interrupts ------------------------------------------------------------------


def request(n: int = 2) -> FramesRequest:
    row = {schema.VIDEO_ID: "v", schema.CLIPS: [b"x"] * n}
    return FramesRequest(prompts.build_prompt(row, "video"), None)


def test_batch_caller_runs_waiting_rows_together():
    sizes: list[int] = []
    gate = threading.Event()

    def run_batch(requests):
        gate.wait(5)
        sizes.append(len(requests))
        return [CallResult(FORCED, None, 1) for _ in requests]

    caller = BatchCaller(run_batch, batch_size=3, gather=0.5)
    results: list[CallResult] = []
    threads = [threading.Thread(target=lambda: results.append(caller(request()))) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)  # the first batch has taken its first row; the others wait
    gate.set()
    for t in threads:
        t.join(10)
    assert sorted(sizes) in ([1, 3], [2, 2], [1, 1, 2], [1, 1, 1, 1], [1, 2, 1]) or sum(sizes) == 4
    assert max(sizes) > 1 and sum(sizes) == 4
    assert [r.raw_output for r in results] == [FORCED] * 4
    with pytest.raises(TypeError, match="FramesRequest"):
        caller([{"role": "user", "content": []}])


def test_batch_caller_interrupted_mid_batch_answers_nothing():
    caller = BatchCaller(lambda requests: [CallResult(FORCED, None, 1)] * len(requests), 1)

    def interrupted(requests):
        caller.breaker.stop("interrupted")  # what the job loop does on Ctrl-C
        return [CallResult("half an answer", None, 1)] * len(requests)

    caller.run_batch = interrupted
    with pytest.raises(EndpointDown, match="interrupted"):
        caller(request())


# --- the runner through a local model -------------------------------------------------------


def fake_local(family: str, run_batch) -> LocalModel:
    meta = {"backend": "transformers", "family": family}
    fam = families.family_of(family)
    return LocalModel(fam, BatchCaller(run_batch, 2), 2, "cpu", meta)


@pytest.mark.parametrize(("family", "frames"), [("qwen2_vl", None), ("internvl", 16)])
def test_runner_sends_the_family_frames_and_records_them(
    family, frames, demo_build, tmp_path, capsys, monkeypatch
):
    seen: list[FramesRequest] = []

    def run_batch(requests):
        seen.extend(requests)
        sent = [{"frames_per_clip": [len(f.frames) for f in r.frames]} for r in requests]
        return [CallResult(FORCED, {"prompt_tokens": 7}, 1, sent=s) for s in sent]

    monkeypatch.setattr(load, "open_local", lambda args: fake_local(family, run_batch))
    out = tmp_path / "o.jsonl"
    argv = ["--backend", "transformers", "--model", "tiny", "--config", "video"]
    code, err = run_cli(
        [*argv, "--data", str(demo_build), "--limit", "3", "--out", str(out)], capsys
    )
    assert code == 0, err
    assert "on cpu (transformers, " + family in err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    meta = lines[0]["splice_metadata"] if "splice_metadata" in lines[0] else lines[0]
    assert meta["backend"] == "transformers" and meta["family"] == family
    assert meta["endpoint"] is None
    clip = seen[0].prompt.clips[0].clip
    if frames is None:  # 1 fps, the paper's 448 px cap on the long side
        assert len(seen[0].frames[0].frames) == len(sample_frames(clip, fps=1.0).frames)
    else:
        assert {len(f.frames) for r in seen for f in r.frames} == {frames}
    assert [len(r.frames) for r in seen] == [len(r.prompt.clips) for r in seen]
    rows = lines[1:]
    assert all(r["sent"]["frames_per_clip"] for r in rows) and len(rows) == 3


def test_ctrl_c_with_a_local_model_is_one_line_and_exit_130(
    demo_build, tmp_path, capsys, monkeypatch
):
    calls = []

    def run_batch(requests):
        calls.append(len(requests))
        if len(calls) == 2:
            _thread.interrupt_main()  # Ctrl-C while the model generates
            time.sleep(1)
        return [CallResult(FORCED, None, 1) for _ in requests]

    monkeypatch.setattr(load, "open_local", lambda args: fake_local("qwen2_vl", run_batch))
    out = tmp_path / "o.jsonl"
    argv = ["--backend", "transformers", "--model", "tiny", "--config", "text"]
    argv += ["--concurrency", "1", "--data", str(demo_build), "--out", str(out)]
    with python_sigint():
        code, err = run_cli(argv, capsys)
    assert code == 130
    assert [line for line in err.splitlines() if "interrupted" in line] == [
        f"splice run: interrupted; the answers already in are kept in {out}; run the same "
        "command again to resume."
    ]
    answered = [json.loads(line) for line in out.read_text().splitlines()][1:]
    assert 1 <= len(answered) < len(list(Path(demo_build).glob("text/*"))) + 24
    assert all(r["raw_output"] == FORCED for r in answered)


def test_text_config_sends_no_frames(demo_build, tmp_path, capsys, monkeypatch):
    seen: list[FramesRequest] = []

    def run_batch(requests):
        seen.extend(requests)
        return [CallResult(FORCED, None, 1) for _ in requests]

    monkeypatch.setattr(load, "open_local", lambda args: fake_local("qwen2_vl", run_batch))
    out = tmp_path / "o.jsonl"
    argv = ["--backend", "transformers", "--model", "tiny", "--config", "text", "--limit", "2"]
    code, err = run_cli([*argv, "--data", str(demo_build), "--out", str(out)], capsys)
    assert code == 0, err
    assert [r.frames for r in seen] == [None, None]
    assert all("Video 1:" in r.prompt.text for r in seen)
    meta = json.loads(out.read_text().splitlines()[0])["splice_metadata"]
    assert meta["frames"] is None and meta["backend"] == "transformers"
