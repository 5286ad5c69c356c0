"""lmms-eval's REAL model classes on the demo build: which class gives each of the paper's
model families its settings (Appendix A.2: Qwen2-VL at 1 fps with the long side at most
448 px; InternVL and LLaVA-OneVision at 16 uniform frames), with every clip right after its
own "Video k" heading.

Each family is a tiny random-weight checkpoint (tests/support/tiny_checkpoints.py --toolkit:
transformers' config classes, a tokenizer trained here, the real processor classes; nothing
downloaded), built once per test run in ``.venv-models``. Each case runs ``lmms-eval eval``
there as a user would, from the repository root, with ``--include_path lmms_eval_tasks``;
tests/support/lmms_record/ (a ``sitecustomize``) records what the model's ``generate`` received: the
prompt's tokens and the processor's tensors. The verdicts are read from that record, never
from the class's arguments, and ``CASES`` is docs/running-models.md's table
(``test_docs_table_is_the_measured_one``).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import splice_dataset as schema
import splice_metric
from splice_build.cli import main as splice_main
from splice_eval.builddata import iter_rows
from splice_eval.run import prompts
from tests.support.lmms_tasks import lmms_env, run_lmms
from tests.support.paths import REPO, SUPPORT
from tests.support.side_venvs import lmms_python

RECORDER = SUPPORT / "lmms_record"
TASK = "splice_video_text"
LIMIT = 3  # the demo's first videos: 2, 4 and 5 clips, up to 22.5 s (1 and 2 fps differ)
PAPER_LONG_SIDE = schema.PAPER_LONG_SIDE
PAPER_FRAMES = 16
# Qwen's processors cap pixels, not a side: 448 x 252 is the 448 px long side of a 16:9
# clip (COIN's videos are YouTube's 16:9), rounded to Qwen's 28 px grid it stays so.
QWEN_MAX_PIXELS = 448 * 252
# The Qwen classes' default floor (256 x 28 x 28) is above that cap, which qwen-vl-utils
# refuses: the floor goes down to one 2 x 2 merge of 28 px patches.
QWEN_PIXELS = f"max_pixels={QWEN_MAX_PIXELS},min_pixels={4 * 28 * 28}"
CPU = "device=cpu,device_map=cpu"


@dataclass(frozen=True)
class Case:
    """One row of docs/running-models.md's table: a family's checkpoint through one lmms-eval
    class."""

    family: str  # tests/support/tiny_checkpoints.py's name for the checkpoint
    label: str  # the family as docs/running-models.md names it
    model: str  # lmms-eval's --model
    args: str  # --model_args besides pretrained= (and the tests' device=cpu)
    paper: bool  # measured: the paper's frame settings, each clip beside its heading
    measured: str  # what the test measured, as docs/running-models.md says it
    error: str = ""  # a class that crashes: the error lmms-eval logs (and exits 0)


CASES = (
    Case(
        "qwen2_5_vl",
        "Qwen2.5-VL",
        "qwen2_5_vl",
        f"fps=1,{QWEN_PIXELS}",
        True,
        "1 fps, long side <= 448 px, each clip after its heading",
    ),
    Case(
        "qwen2_vl",
        "Qwen2-VL",
        "qwen2_vl",
        QWEN_PIXELS,
        False,
        "always 2 fps (no fps option), every clip before the text",
    ),
    Case(
        "internvl",
        "InternVL (transformers)",
        "internvl_hf",
        f"num_frames={PAPER_FRAMES}",
        True,
        "16 frames per clip, each clip after its heading",
    ),
    Case(
        "llava_onevision",
        "LLaVA-OneVision",
        "llava_hf",
        "",
        False,
        "crashes before the first answer (passes `images=[]`: IndexError)",
        "IndexError: list index out of range",
    ),
    Case(
        "smolvlm",
        "SmolVLM / Idefics3",
        "huggingface",
        "",
        False,
        "crashes before the first answer (passes `audios=`: ValueError)",
        "You passed keyword argument `audios` which is deprecated",
    ),
)


@pytest.fixture(scope="module")
def lmms() -> Path:
    return lmms_python("lmms_eval.tasks, torchvision, decord, qwen_vl_utils, splice_dataset")


@pytest.fixture(scope="session")
def tiny_vlms(toolkit_checkpoints: dict[str, dict]) -> dict[str, dict]:
    """Every family's checkpoint (the toolkits' conftest builds them once per run)."""
    return toolkit_checkpoints


@dataclass(frozen=True)
class Run:
    proc: subprocess.CompletedProcess
    records: list[dict]  # one per generate call: what the model received
    samples: list[dict]  # lmms-eval's --log_samples lines
    samples_file: Path | None
    out: Path  # lmms-eval's --output_path


def run_class(
    lmms: Path, case: Case, checkpoint: str, demo_build: Path, tmp_path: Path, force: str = ""
) -> Run:
    out, record = tmp_path / "out", tmp_path / "generate.jsonl"
    model_args = ",".join(a for a in (f"pretrained={checkpoint}", CPU, case.args) if a)
    command = [str(lmms.parent / "lmms-eval"), "eval", "--model", case.model]
    command += ["--model_args", model_args, "--tasks", TASK, "--limit", str(LIMIT)]
    command += ["--include_path", "lmms_eval_tasks", "--log_samples", "--output_path", str(out)]
    env = lmms_env(demo_build, tmp_path)
    env["PYTHONPATH"] = f"{RECORDER}:{env['PYTHONPATH']}"
    env |= {"SPLICE_RECORD_GENERATE": str(record), "CUDA_VISIBLE_DEVICES": ""}
    if force:
        env["SPLICE_FORCE_ANSWER"] = force
    proc = run_lmms(command, demo_build, tmp_path, timeout=1800, env=env)
    records = [json.loads(x) for x in record.read_text().splitlines()] if record.exists() else []
    files = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    samples = [json.loads(x) for x in files[0].read_text().splitlines()] if files else []
    return Run(proc, records, samples, files[0] if files else None, out)


def demo_docs(demo_build: Path) -> list[dict]:
    """The task's first LIMIT docs as lmms-eval takes them (the build's row order)."""
    return list(iter_rows(demo_build, "video_text"))[:LIMIT]


def doc_of(prompt: str, docs: list[dict]) -> dict:
    """The doc whose headings (with their captions) the recorded prompt holds."""
    found = [
        d
        for d in docs
        if all(c.heading in prompt for c in prompts.build_prompt(d, "video_text").clips)
    ]
    assert len(found) == 1, prompt[:2000]
    return found[0]


# --- what each family's processor produced, read from the prompt tokens ------------------


def qwen_clips(record: dict, doc: dict) -> dict:
    """Qwen2-VL / 2.5-VL: a clip is ``<|vision_start|><|video_pad|>...<|vision_end|>``; its
    frames are its grid's t x the temporal patch (2), its sides the grid's h, w x 14 px."""
    prompt = record["prompt"]
    blocks = list(re.finditer(r"<\|vision_start\|>(?:<\|video_pad\|>)+<\|vision_end\|>", prompt))
    grids = record["grids"].get("video_grid_thw", [])
    return {
        "clips": len(blocks),
        "frames": [t * 2 for t, _, _ in grids],
        "long_side": max((max(h, w) * 14 for _, h, w in grids), default=0),
        "beside": beside_headings(prompt, [(b.start(), b.end()) for b in blocks], doc),
    }


def internvl_clips(record: dict, doc: dict) -> dict:
    """InternVL: a clip's frames are ``FrameN: <img>...</img>`` lines, from Frame1."""
    prompt = record["prompt"]
    starts = [m.start() for m in re.finditer(r"Frame1: <img>", prompt)]
    spans, frames = [], []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(prompt)
        last = prompt.rfind("</img>", start, end) + len("</img>")
        spans.append((start, last))
        frames.append(prompt.count("<img>", start, last))
    return {
        "clips": len(starts),
        "frames": frames,
        "long_side": None,
        "beside": beside_headings(prompt, spans, doc),
    }


def beside_headings(prompt: str, spans: list[tuple[int, int]], doc: dict) -> bool:
    """Each clip k right after "\\nVideo k[: caption]\\n", and nothing but the next heading
    (and line breaks) between clips: the paper's layout."""
    clips = prompts.build_prompt(doc, "video_text").clips
    if len(spans) != len(clips):
        return False
    previous_end = None
    for (start, end), item in zip(spans, clips, strict=True):
        heading = f"\n{item.heading}\n"
        if not prompt[:start].endswith(heading):
            return False
        if previous_end is not None and prompt[previous_end:start].strip() != item.heading:
            return False
        previous_end = end
    return True


READERS = {"qwen2_vl": qwen_clips, "qwen2_5_vl": qwen_clips, "internvl": internvl_clips}


def paper_frames(case: Case, durations: list[float], measured: dict) -> bool:
    """The paper's settings for the family: Qwen at 1 fps (qwen_vl_utils rounds a clip's
    count down to even, at least 4) with the long side <= 448; the others 16 frames."""
    if case.family.startswith("qwen"):
        expected = [max(4, 2 * math.floor(d / 2)) for d in durations]
        return measured["frames"] == expected and measured["long_side"] <= PAPER_LONG_SIDE
    return measured["frames"] == [PAPER_FRAMES] * len(durations)


# A checkpoint forced to answer this after a paragraph of reasoning (the recorder replaces
# what ``generate`` made, after the model ran on every input).
FORCED_ANSWER = "Video 1 shows the last step.\n\nSo the order is <order>Video 2, Video 1</order>"


@pytest.fixture(scope="module")
def forced_run(lmms, tiny_vlms, demo_build, tmp_path_factory) -> Run:
    """``CASES[0]``'s class forced to ``FORCED_ANSWER``: its record is what the model was
    given, as in an unforced run (so its table row is read from it), and its samples what
    lmms-eval scored."""
    case = CASES[0]
    tmp = tmp_path_factory.mktemp("lmms-forced")
    return run_class(lmms, case, tiny_vlms[case.family]["path"], demo_build, tmp, FORCED_ANSWER)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.family}-{c.model}")
def test_lmms_class_gives_the_family_what_the_table_says(
    case, lmms, tiny_vlms, demo_build, tmp_path, request
):
    built = tiny_vlms[case.family]
    assert "error" not in built, built
    if case == CASES[0]:  # the forced run: the same inputs reached the model
        run = request.getfixturevalue("forced_run")
    else:
        run = run_class(lmms, case, built["path"], demo_build, tmp_path)
    log = (run.proc.stdout + run.proc.stderr)[-5000:]
    assert run.proc.returncode == 0, log  # lmms-eval exits 0 even when the model crashed
    docs = demo_docs(demo_build)
    if case.error:
        # the model never generated, lmms-eval logged the error, wrote no samples, exited 0
        assert not run.records and not run.samples, log
        assert case.error in run.proc.stdout + run.proc.stderr, log
        return
    assert len(run.records) == LIMIT and len(run.samples) == LIMIT, log
    verdicts = []
    for record in run.records:
        doc = doc_of(record["prompt"], docs)
        assert record["max_new_tokens"] == prompts.MAX_NEW_TOKENS  # the task's limit
        measured = READERS[case.family](record, doc)
        durations = list(doc[schema.CLIP_DURATIONS])
        verdicts.append(
            measured["clips"] == doc[schema.NUM_CLIPS]
            and measured["beside"]
            and paper_frames(case, durations, measured)
        )
    assert all(verdicts) is case.paper, (case, run.records[0]["prompt"][:3000])


def test_forced_answer_is_scored_as_splice_score_scores_it(forced_run, demo_build, tmp_path):
    """A checkpoint forced to answer "<order>Video 2, Video 1</order>" after a paragraph of
    reasoning: lmms-eval keeps the whole answer (no cut at the blank line) and its scores
    are what ``splice score`` gives the same samples file."""
    run, answer = forced_run, FORCED_ANSWER
    assert run.samples_file is not None, (run.proc.stdout + run.proc.stderr)[-4000:]
    answers = [s["filtered_resps"] for s in run.samples]
    assert [a[0] if isinstance(a, list) else a for a in answers] == [answer] * LIMIT
    (results_file,) = run.out.rglob("*_results.json")
    results = json.loads(results_file.read_text())["results"][TASK]
    report = tmp_path / "scores.json"
    cmd = ["score", str(run.samples_file), "--data", str(demo_build), "--json", str(report)]
    assert splice_main(cmd) == 0
    (scored,) = json.loads(report.read_text())["runs"]
    # lmms-eval scored the LIMIT docs it ran; `splice score` scores the whole build, the
    # videos the samples file lacks as invalid: both with the metric's parse of the answer
    parsed = splice_metric.parse_order(answer)
    asked = {d[schema.VIDEO_ID] for d in demo_docs(demo_build)}
    rows = list(iter_rows(demo_build, "video_text"))
    refs = [list(r[schema.ANSWER]["order"]) for r in rows]
    expected = splice_metric.score([parsed] * LIMIT, refs[:LIMIT])
    whole = splice_metric.score(
        [parsed if r[schema.VIDEO_ID] in asked else None for r in rows], refs
    )
    for name in splice_metric.RATES:
        assert results[f"{name},none"] == pytest.approx(expected[name]), name
        assert scored[name] == pytest.approx(whole[name]), name
    assert expected["invalid_rate"] < 1  # the answer was read: a cut one would not be


# --- docs/running-models.md's table ------------------------------------------------------


def render_table(cases: tuple[Case, ...] = CASES) -> str:
    """docs/running-models.md's table of lmms-eval classes, from ``CASES`` (measured)."""
    lines = [
        "| family | `--model` | `--model_args` (with `pretrained=`) "
        "| paper's settings | measured |",
        "|---|---|---|---|---|",
    ]
    for c in cases:
        args = f"`{c.args}`" if c.args else "(none works)"
        verdict = "yes" if c.paper else "no: use `splice run --backend transformers`"
        lines.append(f"| {c.label} | `{c.model}` | {args} | {verdict} | {c.measured} |")
    return "\n".join(lines)


def test_docs_table_is_the_measured_one():
    doc = (REPO / "docs" / "running-models.md").read_text(encoding="utf-8")
    assert render_table() in doc, "docs/running-models.md: paste render_table()"
