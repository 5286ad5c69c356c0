"""`splice vlmeval` end to end on the demo build's first videos, in VLMEvalKit's own venv (``make
models-venv``: ms-vlmeval, with torch; or set SPLICE_VLMEVAL_PYTHON): with test-only echo
models (tests/support/vlmeval_probe.py, no weights) and with VLMEvalKit's OpenAI-compatible
API model (``--base-url``) pointed at a scripted server on 127.0.0.1; clips as videos and as frames.
Each prompt must hold its row's clips, each after its label, and VLMEvalKit's scores must be
``splice score``'s on the same answers."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import splice_metric
from splice_build.cli import main as splice_main
from splice_build.errors import UserError
from splice_eval.builddata import read_meta
from splice_eval.predictions import read_metadata
from splice_eval.run import prompts
from splice_eval.toolkits.vlmeval import PAPER_1FPS, PAPER_16FRAME, VARIANTS
from tests.support import side_venvs
from tests.support.fake_openai_server import FakeOpenAIServer, count_clips, media_parts
from tests.support.paths import SUPPORT
from tests.support.scripted_runs import good

PROBE = SUPPORT / "vlmeval_probe.py"
DATASETS = ["SPLICE_video_text_1fps", "SPLICE_video_16frame", "SPLICE_text"]
VIDEOS = 4  # the demo's first videos (``rows``)


@pytest.fixture(scope="module")
def rows(subset_build) -> Path:
    """The build VLMEvalKit runs on: the demo's first ``VIDEOS`` videos. Every check is per
    row (or a score equal to ``splice score``'s); more rows add minutes of clip and frame
    writing, never a check."""
    return subset_build(VIDEOS)[0]


@pytest.fixture(scope="module")
def vlmeval_python() -> Path:
    return side_venvs.vlmeval_python()


def splice_vlmeval(python: Path, folder: Path, args: list[str], echo_log: Path, **env: str):
    """``splice vlmeval ARGS`` in VLMEvalKit's venv, run in ``folder`` (its outputs/ and
    LMUData/ there); the completed process."""
    (folder / "LMUData").mkdir(parents=True, exist_ok=True)
    environ = {**os.environ, "LMUData": str(folder / "LMUData"), **env}
    environ["PYTHONPATH"] = side_venvs.checkout_pythonpath()
    environ.pop("SPLICE_DATA", None)
    done = subprocess.run(
        [str(python), str(PROBE), str(echo_log), *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def echo_run(vlmeval_python, rows, tmp_path_factory):
    folder = tmp_path_factory.mktemp("vlmeval-echo")
    log = folder / "echo.jsonl"
    args = ["--data", *DATASETS, "--model", "splice-echo-clips", "splice-echo-frames"]
    splice_vlmeval(vlmeval_python, folder, [*args, "--splice-data", str(rows)], log)
    return folder, [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture(scope="module", params=["clips", "frames"])
def api_run(request, vlmeval_python, rows, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"vlmeval-api-{request.param}")
    with FakeOpenAIServer(good, lifetime=1400) as server:  # the labels, last to first
        args = ["--data", *DATASETS[:2], "--model", "served-model", "--base-url", server.url]
        args += ["--splice-data", str(rows), "--api-nproc", "2", "--retry", "1"]
        args += ["--video-llm"] if request.param == "clips" else []
        # PRED_FORMAT: VLMEvalKit's result as TSV and JSON too, which splice score reads
        fmt = "tsv" if request.param == "clips" else "json"
        done = splice_vlmeval(vlmeval_python, folder, args, folder / "none.jsonl", PRED_FORMAT=fmt)
        return request.param, folder, fmt, list(server.requests), done.stdout


def _groups(items: list[dict], text_key: str, is_media) -> list[tuple[str, int]]:
    """(label, media count) per "Video k" text item, in prompt order; media before the
    first label fail the check."""
    groups: list[tuple[str, int]] = []
    for item in items:
        if is_media(item):
            assert groups, f"media before any label: {items[:2]}"
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        elif item.get("type") == "text" and re.match(r"Video \d+", item[text_key]):
            assert item[text_key].endswith("\n"), item[text_key]
            groups.append((item[text_key].split(":")[0].strip(), 0))
    return groups


def _expected_frames(dataset: str) -> int | None:
    frames = VARIANTS[dataset].frames
    return frames.num_frames if frames is not None else None


def test_variants_are_the_papers_settings():
    """Appendix A.2: 1 fps with the long side capped at 448 px, or 16 uniform frames."""
    one_fps, sixteen = PAPER_1FPS.kwargs(), PAPER_16FRAME.kwargs()
    assert one_fps.pop("fps") == 1.0 and list(one_fps.values()) == [448]  # the long side cap
    assert sixteen.pop("num_frames") == 16 and "fps" not in sixteen
    assert {v.config for v in VARIANTS.values()} == {"video", "video_text", "text"}


def test_echo_prompts_hold_every_clip_after_its_label(echo_run, rows):
    _, messages = echo_run
    meta = read_meta(rows)
    seen = {(m["dataset"], "video" in {i["type"] for i in m["message"]}) for m in messages}
    assert ("SPLICE_video_text_1fps", True) in seen and ("SPLICE_video_16frame", False) in seen
    for m in messages:
        items = m["message"]
        assert items[0]["type"] == "text" and items[0]["value"].endswith("\n")
        if m["dataset"] == "SPLICE_text":
            assert len(items) == 1 and "Video 1: " in items[0]["value"]
            continue
        clips = "video" in {i["type"] for i in items}
        groups = _groups(items, "value", lambda i: i["type"] in ("video", "image"))
        n = len(groups)
        assert n in {v.num_clips for v in meta.values()}
        assert [g[0] for g in groups] == [prompts.clip_label(k) for k in range(1, n + 1)]
        if clips:
            assert all(count == 1 for _, count in groups)
            assert all(i["value"].endswith(".mp4") for i in items if i["type"] == "video")
        elif _expected_frames(m["dataset"]):
            assert all(count == 16 for _, count in groups)
        else:
            assert all(count >= 1 for _, count in groups)
        assert items[0]["value"].startswith(f"A video has been split into {n} clips")


def _splice_score(path: Path, build: Path, out: Path) -> dict:
    argv = ["score", str(path), "--data", str(build), "--random-baseline", "--json", str(out)]
    assert splice_main(argv) == 0
    (result,) = json.loads(out.read_text())["runs"]
    return result


def _same_scores(ours: dict, theirs: dict) -> None:
    for m in splice_metric.RATES:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-12), m
        assert ours["random_baseline"][m] == pytest.approx(theirs["random_baseline"][m]), m
        for n, cell in ours["by_num_clips"].items():
            assert cell[m] == pytest.approx(theirs["by_num_clips"][n][m], abs=1e-12), (n, m)
    assert ours["count"] == theirs["count"]


@pytest.mark.parametrize("model", ["splice-echo-clips", "splice-echo-frames"])
@pytest.mark.parametrize("dataset", DATASETS)
def test_echo_scores_are_splice_scores(echo_run, rows, tmp_path, model, dataset):
    folder, _ = echo_run
    stem = folder / "outputs" / model / f"{model}_{dataset}"
    ours = json.loads(Path(f"{stem}_splice_scores.json").read_text())
    assert ours["count"] == len(read_meta(rows))
    assert 0 < ours["binary_accuracy"] < 1 or ours["hamming_accuracy"] > 0
    _same_scores(ours, _splice_score(Path(f"{stem}.xlsx"), rows, tmp_path / "x.json"))
    jsonl = Path(f"{stem}_splice.jsonl")
    _same_scores(ours, _splice_score(jsonl, rows, tmp_path / "j.json"))
    meta = read_metadata(jsonl)
    config = VARIANTS[dataset].config
    assert meta["model"] == model and meta["config"] == config
    frames = VARIANTS[dataset].frames
    assert meta["frames"] == (frames.kwargs() if frames else None)
    if config != "text":
        assert meta["clips_as"] == ("video" if model.endswith("clips") else "images")


def test_api_model_gets_labels_and_media_interleaved(api_run, rows):
    mode, _, _, requests, _ = api_run
    meta = read_meta(rows)
    assert len(requests) == 2 * len(meta)  # one per video and dataset, none retried
    kinds = set()
    for request in requests:
        (msg,) = request.body["messages"]
        content = msg["content"]
        kinds |= {p["type"] for p in media_parts(request)}
        groups = _groups(content, "text", lambda p: p["type"] in ("video_url", "image_url"))
        n = count_clips(request)
        assert [g[0] for g in groups] == [prompts.clip_label(k) for k in range(1, n + 1)]
        if mode == "clips":
            assert all(count == 1 for _, count in groups)
            assert all(
                p["video_url"]["url"].startswith("data:video/mp4;base64,")
                for p in media_parts(request)
            )
        else:
            assert all(count >= 1 for _, count in groups)
    assert kinds == ({"video_url"} if mode == "clips" else {"image_url"})


@pytest.mark.parametrize("dataset", DATASETS[:2])
def test_api_scores_are_splice_scores(api_run, rows, tmp_path, dataset):
    _, folder, fmt, _, _ = api_run
    stem = folder / "outputs" / "served-model" / f"served-model_{dataset}"
    ours = json.loads(Path(f"{stem}_splice_scores.json").read_text())
    _same_scores(ours, _splice_score(Path(f"{stem}.{fmt}"), rows, tmp_path / "s.json"))
    # every answer reversed the labels: read back as such, never unparsed
    assert ours["unparsed_rate"] == 0


def _run_summary(stdout: str) -> dict[str, dict[str, str]]:
    """The rows of the last "Run Summary Report" VLMEvalKit printed, by benchmark: its
    tabulate table, cut into cells at the dashes of its rule line."""
    lines = stdout.splitlines()
    start = max(i for i, line in enumerate(lines) if line.endswith("Run Summary Report:"))
    rule = next(i for i in range(start + 1, len(lines)) if re.fullmatch(r"-+( +-+)*", lines[i]))
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
    header = [lines[rule - 1][a:b].strip() for a, b in spans]
    rows = {}
    for line in lines[rule + 1 :]:
        if not line.strip() or line.startswith("["):  # the table ends at the next record
            break
        row = dict(zip(header, (line[a:b].strip() for a, b in spans), strict=True))
        rows[row["benchmark"]] = row
    return rows


def test_api_run_summary_headline_is_the_overall_binary_accuracy(api_run):
    """VLMEvalKit's closing "Run Summary Report" (and status.json) name one primary metric
    per dataset: SPLICE's headline, the binary accuracy over every video, never a cell of
    one clip count (VLMEvalKit's own pick from the table's names)."""
    _, folder, _, _, stdout = api_run
    summary = _run_summary(stdout)
    status = json.loads((folder / "outputs" / "served-model" / "status.json").read_text())
    assert set(summary) == set(DATASETS[:2]), stdout[-3000:]
    for dataset in DATASETS[:2]:
        stem = folder / "outputs" / "served-model" / f"served-model_{dataset}"
        overall = json.loads(Path(f"{stem}_splice_scores.json").read_text())["binary_accuracy"]
        row = summary[dataset]
        assert row["primary_metric"] == "binary_accuracy", row
        assert float(row["primary_metric_value"]) == pytest.approx(overall, rel=1e-3), row
        assert status["datasets"][dataset]["primary_metric"] == "binary_accuracy"


@pytest.mark.parametrize("model", ["splice-echo-clips", "splice-echo-frames"])
def test_echo_status_names_the_overall_binary_accuracy(echo_run, model):
    """The text config too: status.json's primary metric of every dataset run."""
    folder, _ = echo_run
    status = json.loads((folder / "outputs" / model / "status.json").read_text())
    for dataset in DATASETS:
        assert status["datasets"][dataset]["primary_metric"] == "binary_accuracy", dataset


def test_a_wrong_data_folder_is_one_line_before_vlmeval_loads(tmp_path, capsys):
    """Checked before VLMEvalKit is imported, so it needs no VLMEvalKit at all."""
    argv = ["vlmeval", "--data", "SPLICE_text", "--model", "m", "--work-dir", str(tmp_path)]
    assert splice_main([*argv, "--splice-data", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("splice vlmeval: SPLICE data") and "\n" not in err
    assert "vlmeval" not in sys.modules


@pytest.mark.skipif(
    importlib.util.find_spec("vlmeval") is not None, reason="VLMEvalKit is installed here"
)
def test_without_vlmevalkit_one_line_says_how_to_install_it(tmp_path, capsys):
    """Issue 41 wall 3: a 12-line import traceback before; one line naming the toolkit's
    install now, before any data is read."""
    argv = ["vlmeval", "--data", "SPLICE_text", "--model", "m", "--work-dir", str(tmp_path)]
    assert splice_main([*argv, "--splice-data", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("splice vlmeval: VLMEvalKit is not installed")
    assert "pip install ms-vlmeval==0.0.20" in err and "make models-venv" in err


def test_vlmevalkits_options_pass_through_ours_do_not(tmp_path):
    from splice_build.cli import parse_command, subcommand_parser

    parser, _ = subcommand_parser("vlmeval")
    argv = ["--data", "SPLICE_text", "--model", "m", "--base-url", "http://h/v1", "--verbose"]
    args = parse_command(parser, [*argv, "--splice-data", str(tmp_path), "--mode", "infer"])
    assert args.data == ["SPLICE_text"] and args.model == ["m"]
    assert args.splice_data == str(tmp_path)
    assert args.pass_through == ["--base-url", "http://h/v1", "--verbose", "--mode", "infer"]
    parser, _ = subcommand_parser("score")  # any other subcommand still refuses them
    with pytest.raises(UserError, match="unrecognized arguments: --verbose"):
        parse_command(parser, ["p.jsonl", "--data", str(tmp_path), "--verbose"])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


def test_a_model_named_by_its_hub_id_is_found_without_modelscope(vlmeval_python, tmp_path):
    """The documented ``--model Qwen2-VL-7B-Instruct``: ms-vlmeval looks its Hub id up through
    ModelScope unless VLMEVALKIT_USE_MODELSCOPE is "0", and ModelScope is not installed;
    ``splice vlmeval`` sets it, so the id is found in Hugging Face's cache."""
    repo = tmp_path / "hf-home" / "hub" / "models--Qwen--Qwen2-VL-7B-Instruct"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    code = (
        "from splice_eval.toolkits.vlmeval_command import use_hugging_face_hub\n"
        "from vlmeval.smp import get_cache_path\n"
        "{}\n"
        "print('FOUND', get_cache_path('Qwen/Qwen2-VL-7B-Instruct', repo_type='models'))\n"
    )
    env = {k: v for k, v in side_venvs.offline_env(tmp_path).items() if "MODELSCOPE" not in k}
    for call, found in (("pass", "None"), ("use_hugging_face_hub()", str(snapshot))):
        done = subprocess.run(
            [str(vlmeval_python), "-c", code.format(call)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("FOUND ")]
        assert done.returncode == 0 and lines, (done.stdout + done.stderr)[-3000:]
        assert lines[-1] == f"FOUND {found}", (call, done.stdout[-2000:])
