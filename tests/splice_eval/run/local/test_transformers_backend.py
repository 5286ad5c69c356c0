"""``splice run --backend transformers`` on real model classes: tiny random-weight checkpoints
of each family (``tests/support/tiny_checkpoints.py``, built once per session, nothing downloaded)
run end to end on the demo build, in ``.venv-models`` (torch + transformers; ``make
models-venv``).

What is checked, per family: the prompt the processor's input ids spell carries each clip
right after its own "Video k: caption" heading (``tests/support/local_probe.py`` decodes them); the
frames per clip and their size are the paper's settings (Appendix A.2), counted from the
processor's output; and the forced answer every checkpoint gives is parsed and scored
exactly as ``splice score`` scores the same text.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_eval.builddata import iter_rows
from splice_eval.predictions import Prediction, read_metadata, write_predictions
from splice_eval.run import prompts
from splice_eval.run.sampling import sample_frames
from tests.support.paths import SUPPORT
from tests.support.side_venvs import models_python, offline_env
from tests.support.tiny_checkpoints import FORCED, PRINTED

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "internvl", "llava_onevision", "smolvlm")
LIMIT = 2  # videos per run: enough for two clip counts, cheap on a CPU
CONFIG = "video_text"
# Appendix A.2: Qwen2-VL at 1 fps, 448 px on the long side; InternVL2.5 and LLaVA-OneVision
# at 16 uniform frames. SmolVLM is not in the paper: 1 fps like every fps-default model.
PAPER = {
    "qwen2_vl": {"fps": 1.0},
    "qwen2_5_vl": {"fps": 1.0},
    "internvl": {"num_frames": 16},
    "llava_onevision": {"num_frames": 16},
    "smolvlm": {"fps": 1.0},
}
PAPER_LONG_SIDE = 448
# the tiny checkpoints' own frame sizes (tiny_checkpoints.py); Qwen keeps the frames' size,
# rounded to its 28 px grid
MODEL_SIZE = {"internvl": (56, 56), "llava_onevision": (28, 28), "smolvlm": (28, 28)}


@pytest.fixture(scope="session")
def python() -> Path:
    return models_python()


def env(tmp: Path) -> dict[str, str]:
    """No Hub, caches of this test, and this checkout's modules first (not the venv's copy)."""
    return offline_env(tmp, HF_DATASETS_CACHE=str(tmp / "hf-datasets"), OMP_NUM_THREADS="1")


@pytest.fixture(scope="session")
def tiny(python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every family's tiny checkpoint, saved once per session: {family: {path, parameters}}."""
    out = tmp_path_factory.mktemp("tiny-checkpoints")
    done = subprocess.run(
        [str(python), str(SUPPORT / "tiny_checkpoints.py"), str(out)],
        capture_output=True,
        text=True,
        env=env(out),
        timeout=600,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(PRINTED + " ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    built = json.loads(lines[-1].split(" ", 1)[1])
    assert all("error" not in b for b in built.values()), built
    return built


def splice_run(python: Path, tmp: Path, *argv: str) -> subprocess.CompletedProcess:
    code = "import sys; from splice_build.cli import main; sys.exit(main())"
    return subprocess.run(
        [str(python), "-c", code, "run", *argv],
        capture_output=True,
        text=True,
        env=env(tmp),
        timeout=900,
    )


@pytest.fixture(scope="session")
def runs(python, tiny, demo_build, tmp_path_factory) -> dict[str, Path]:
    """One ``splice run --backend transformers`` per family on the demo build's first
    videos, all at once: {family: prediction file}."""
    code = "import sys; from splice_build.cli import main; sys.exit(main())"
    started = {}
    for family in FAMILIES:
        tmp = tmp_path_factory.mktemp(f"run-{family}")
        out = tmp / f"{family}.jsonl"
        argv = ["--backend", "transformers", "--model", tiny[family]["path"], "--config", CONFIG]
        argv += ["--data", str(demo_build), "--limit", str(LIMIT), "--out", str(out)]
        argv += ["--frame-cache", str(tmp / "frames")]
        started[family] = (
            out,
            subprocess.Popen(
                [str(python), "-c", code, "run", *argv],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env(tmp),
            ),
        )
    made = {}
    for family, (out, process) in started.items():
        _stdout, stderr = process.communicate(timeout=1800)
        assert process.returncode == 0, f"{family}: {stderr[-3000:]}"
        made[family] = out
    return made


@pytest.fixture(scope="session")
def probed(python, tiny, demo_build, tmp_path_factory) -> dict[str, list[dict]]:
    """What each family's processor made of the first rows (tests/support/local_probe.py)."""
    tmp = tmp_path_factory.mktemp("probe")
    done = subprocess.run(
        [str(python), str(SUPPORT / "local_probe.py"), str(demo_build), CONFIG]
        + [str(LIMIT), *(tiny[f]["path"] for f in FAMILIES)],
        capture_output=True,
        text=True,
        env=env(tmp),
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {f: [r for r in rows if r["family"] == f] for f in FAMILIES}


def read_lines(path: Path) -> tuple[dict, list[dict]]:
    """A prediction file's metadata (``predictions.read_metadata``) and its rows."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return read_metadata(path), lines[1:]


def expected_frames(demo_build: Path, family: str) -> dict[str, list[tuple[int, int, int]]]:
    """Per video: (frames, width, height) of each clip as the paper's setting samples it,
    decoded here with the project's sampler (in this venv, without the model side)."""
    out = {}
    for row in list(iter_rows(demo_build, CONFIG))[:LIMIT]:
        clips = []
        for clip in row[schema.CLIPS]:
            frames = sample_frames(clip, **PAPER[family]).frames
            clips.append((len(frames), frames.shape[2], frames.shape[1]))
        out[str(row[schema.VIDEO_ID])] = clips
    return out


def qwen_size(width: int, height: int) -> tuple[int, int]:
    """Qwen2-VL's video processor's size for a frame (its ``smart_resize`` with its default
    bounds, 128 to 768 tiles of 28 x 28 px): the demo's 320 x 180 frames are below its least
    pixel count, so the model sees them at 448 x 252."""
    factor, low, high = 28, 128 * 28 * 28, 768 * 28 * 28
    h, w = round(height / factor) * factor, round(width / factor) * factor
    if h * w > high:
        beta = math.sqrt(height * width / high)
        h, w = (
            math.floor(height / beta / factor) * factor,
            math.floor(width / beta / factor) * factor,
        )
    elif h * w < low:
        beta = math.sqrt(low / (height * width))
        h, w = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return w, h


# --- the runs -----------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_frames_per_clip_and_size_follow_the_paper(family, runs, demo_build):
    metadata, rows = read_lines(runs[family])
    assert metadata["backend"] == "transformers" and metadata["family"] == family
    assert metadata["frames"] == {**PAPER[family], "max_side": PAPER_LONG_SIDE} or metadata[
        "frames"
    ] == {**PAPER[family], "long_side": PAPER_LONG_SIDE}
    expected = expected_frames(demo_build, family)
    assert [r["video_id"] for r in rows] == list(expected)
    for row in rows:
        clips = expected[row["video_id"]]
        sent = row["sent"]
        assert sent["frames_per_clip"] == [n for n, _w, _h in clips]
        width, height = clips[0][1:]
        assert max(width, height) <= PAPER_LONG_SIDE
        assert sent["frame_size"] == [width, height]
        if family in PAPER and "num_frames" in PAPER[family]:
            assert sent["frames_per_clip"] == [16] * len(clips)
        if family.startswith("qwen"):  # frames paired in time; a 28 px grid
            assert sent["model_frames_per_clip"] == [2 * math.ceil(n / 2) for n, _w, _h in clips]
            assert sent["model_frame_size"] == list(qwen_size(width, height))
        else:
            assert sent["model_frames_per_clip"] == sent["frames_per_clip"]
            assert sent["model_frame_size"] == list(MODEL_SIZE[family])
        assert sent["media_tokens"] > 0 and sent["prompt_tokens"] > sent["media_tokens"]
        assert row["usage"]["prompt_tokens"] == sent["prompt_tokens"]


@pytest.mark.parametrize("family", FAMILIES)
def test_forced_answer_is_scored_as_splice_score_scores_it(family, runs, demo_build, tmp_path):
    """The run's file and a file holding only the same text (another tool's answers, read
    by ``splice score`` through ``parse_order``) score the same, metric for metric."""
    _, rows = read_lines(runs[family])
    assert [r["raw_output"] for r in rows] == [FORCED] * LIMIT
    assert [r["order"] for r in rows] == [prompts.parse_order(FORCED)] * LIMIT
    same = tmp_path / "same.jsonl"
    write_predictions(
        same,
        [Prediction(r["video_id"], CONFIG, "by-hand", FORCED, None) for r in rows],
        {"producer": "by hand", "model": "by-hand", "config": CONFIG},
    )
    run_scores, by_hand = (
        splice_score(path, demo_build, tmp_path) for path in (runs[family], same)
    )
    # the by-hand file's orders were read from its text; the run's were stored by the runner
    assert by_hand["orders_from_raw"] == {"rows": LIMIT, "readable": LIMIT}
    assert run_scores["orders_from_raw"] == {"rows": 0, "readable": 0}
    assert _metrics(run_scores) == _metrics(by_hand)
    assert run_scores["count"] == len(list(iter_rows(demo_build, CONFIG)))  # every video


def splice_score(path: Path, demo_build: Path, tmp: Path) -> dict:
    out = tmp / f"{path.stem}.scores.json"
    argv = ["score", str(path), "--data", str(demo_build), "--json", str(out)]
    assert splice_main(argv) == 0
    (result,) = json.loads(out.read_text())["runs"]
    return result


def _metrics(scores: dict) -> dict:
    """What the metric and the invalid counts say, without the file's own names."""
    drop = {"file", "model", "config", "probe", "metadata", "orders_from_raw"}
    return {k: v for k, v in scores.items() if k not in drop}


def test_rerun_resumes_and_batches_give_the_same_answers(python, tiny, runs, demo_build, tmp_path):
    """A rerun into the same file asks nothing; a batch of two (left-padded) gives the same
    answers and the same inputs as one row at a time."""
    args = ("--backend", "transformers", "--model", tiny["qwen2_vl"]["path"], "--config", CONFIG)
    args += ("--data", str(demo_build), "--limit", str(LIMIT))
    again = tmp_path / "again.jsonl"
    again.write_bytes(runs["qwen2_vl"].read_bytes())
    done = splice_run(python, tmp_path, *args, "--out", str(again))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"asked 0 rows ({LIMIT} already in" in done.stderr
    batched = tmp_path / "batched.jsonl"
    done = splice_run(python, tmp_path, *args, "--batch-size", "2", "--out", str(batched))
    assert done.returncode == 0, done.stderr[-2000:]
    _, one = read_lines(runs["qwen2_vl"])
    _, two = read_lines(batched)
    assert [(r["raw_output"], r["sent"]) for r in two] == [
        (r["raw_output"], r["sent"]) for r in one
    ]


# --- the prompt the model reads -------------------------------------------------------------


def clip_pattern(family: str, media: str, frames: int) -> tuple[str, int]:
    """One clip's part of the decoded input ids as the family's processor expands it, and
    how many runs of the media token it holds."""
    m = re.escape(media)
    if family.startswith("qwen"):
        return rf"<\|vision_start\|>{m}\*\d+<\|vision_end\|>", 1
    if family == "internvl":
        return "\n".join(rf"Frame{i + 1}: <img>{m}\*4</img>" for i in range(frames)), frames
    if family == "llava_onevision":
        return rf"{m}\*{frames + 1}", 1  # one pooled token per frame, plus a newline token
    one = rf"<fake_token_around_image><global-img>{m}\*1<fake_token_around_image>"
    return one * frames, frames


@pytest.mark.parametrize("family", FAMILIES)
def test_each_clip_follows_its_own_heading(family, probed):
    assert len(probed[family]) == LIMIT
    for row in probed[family]:
        text, media, frames = row["text"], row["media"], row["sent"]["model_frames_per_clip"]
        headings = row["headings"]
        assert len(headings) == len(frames) >= 2
        # every heading on its own line and its clip on the next, in the prompt's order...
        parts = [clip_pattern(family, media, n) for n in frames]
        layout = "".join(
            rf"\n{re.escape(h)}\n{pattern}" for h, (pattern, _) in zip(headings, parts, strict=True)
        )
        assert re.search(layout, text), text[:3000]
        # ...and no clip anywhere else
        assert text.count(f"{media}*") == sum(runs for _, runs in parts)
        assert row["sent"]["prompt_tokens"] == row["input_tokens"]


def test_question_formats_and_probes_run_through_a_real_model(python, tiny, demo_build, tmp_path):
    """``--format pairwise`` with ``--probe reversed``: the question's two clips, each after
    its heading, probed as the endpoint path probes them; the answer read by the pairwise
    parser (the forced order answer is not an option answer: unparsed, not an error)."""
    out = tmp_path / "pairwise.jsonl"
    done = splice_run(
        python,
        tmp_path,
        *("--backend", "transformers", "--model", tiny["qwen2_vl"]["path"]),
        *("--config", "video", "--format", "pairwise", "--probe", "reversed"),
        *("--data", str(demo_build), "--limit", "2", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    metadata, rows = read_lines(out)
    assert (metadata["format"], metadata["probe"], metadata["family"]) == (
        "pairwise",
        "reversed",
        "qwen2_vl",
    )
    assert len(rows) == 2 and all(len(r["sent"]["frames_per_clip"]) == 2 for r in rows)
    assert all(r["raw_output"] == FORCED and "error" not in r for r in rows)
    assert "2 unparsed answers" in done.stderr
