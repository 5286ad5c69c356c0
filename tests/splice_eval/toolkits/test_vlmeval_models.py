"""VLMEvalKit's REAL model classes on the demo build through ``splice vlmeval``: which of
the paper's model families the toolkit feeds correctly with several clips, measured.

Each family is a tiny random-weight checkpoint (tests/support/tiny_checkpoints.py --toolkit,
built in
``.venv-models``, nothing downloaded), named for VLMEvalKit as its own config.py names a
checkpoint (tests/support/vlmeval_models_probe.py, which also lets the GPU-only classes run on this
CPU: device calls only). Each class runs ``splice vlmeval`` end to end on two variants, the
paper's 1 fps with captions and 16 frames without; tests/support/lmms_record/ records what the
model's ``generate`` received (the prompt's tokens decoded, the processor's grids). The
verdicts are read from that record, and ``CASES`` is the docs' table
(``test_docs_table_is_the_measured_one``): a class whose behaviour changes fails here.

A class's mode is its own: VLMEvalKit hands a local class clips as videos when its
``VIDEO_LLM`` is true, else sampled frames; the command line cannot change it (``--video-llm``
is the API model's). Gemini is an API and cannot run here: its row says what its code does.
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
from splice_dataset import PAPER_LONG_SIDE
from splice_eval.builddata import iter_rows
from splice_eval.run import prompts
from splice_eval.run.sampling import sample_frames
from splice_eval.toolkits.vlmeval import PAPER_1FPS, VARIANTS
from tests.support import side_venvs
from tests.support.paths import REPO, SUPPORT

PROBE = SUPPORT / "vlmeval_models_probe.py"
RECORDER = SUPPORT / "lmms_record"
DATASETS = ("SPLICE_video_text_1fps", "SPLICE_video_16frame")
PATCH = 14  # Qwen's vision patch: a grid's h and w count patches of 14 px
IN_PLACE = "in place"  # each "Video k" label followed by its own clip (or frames), in order
FRAMES_FIRST = "frames first"  # every frame before the prompt's text, the labels after them
REFUSED = "refused"  # no answer: the class raises, `splice vlmeval` exits 1
VIDEOS = 3  # the demo's first videos the classes run on (``rows``)


@dataclass(frozen=True)
class Case:
    """One VLMEvalKit class on one family's tiny checkpoint: a row of the docs' table."""

    family: str  # tests/support/tiny_checkpoints.py's name for the checkpoint
    label: str  # the family as the docs name it
    cls: str  # VLMEvalKit's class
    kwargs: tuple[tuple[str, str], ...]  # besides model_path, as VLMEvalKit's config.py has it
    clips_as: str  # "video" or "images": the class's own VIDEO_LLM decides
    verdict: str  # IN_PLACE, FRAMES_FIRST or REFUSED, as measured
    measured: str  # what the test measured, as the docs say it
    todo: str  # what a user should do
    error: str = ""  # REFUSED: the error VLMEvalKit logs
    paper_size: bool = True  # a video's frames reach the model with a long side <= 448 px
    # Qwen2.5-VL's second_per_grid_ts match each clip's real seconds (None: no such input)
    paper_times: bool | None = None


INSTEAD = (
    "serve it behind an OpenAI-compatible endpoint (vLLM, SGLang, LMDeploy) and use "
    "`--base-url`, or `splice run --backend transformers` on its transformers checkpoint"
)
QWEN_MEASURED = (
    "each label followed by its own clip, at the variant's 1 fps (qwen-vl-utils: an even "
    "count, at least 4) or 16 frames, long side at most 448 px (the dataset class writes "
    "clips for video classes at 448 px: a build's 796x448 clip reached it at 784x448)"
)
CASES = (
    Case(
        "qwen2_vl",
        "Qwen2-VL",
        "Qwen2VLChat",
        (),
        "video",
        IN_PLACE,
        QWEN_MEASURED,
        "usable (the class needs a CUDA GPU and flash-attention 2)",
    ),
    Case(
        "qwen2_5_vl",
        "Qwen2.5-VL",
        "Qwen2VLChat",
        (),
        "video",
        IN_PLACE,
        QWEN_MEASURED,
        "usable (the class needs a CUDA GPU and flash-attention 2); its time positions are "
        "not the clip's: each 2-frame step is given as 1/12 s (`second_per_grid_ts` 0.083 "
        "at 1 fps and 16 frames alike; a 3 s clip spans 0.17 s), since the class calls "
        "qwen-vl-utils without `return_video_kwargs` and hands the processor no fps, which "
        "then assumes 24 fps; a dataset item carries only a path, so no SPLICE setting can "
        "reach it: for the paper's time positions use `splice run --backend transformers` "
        "or the lmms-eval task",
        paper_times=False,
    ),
    Case(
        "internvl_chat",
        "InternVL2.5",
        "InternVLChat",
        (("version", "V2.0"),),
        "images",
        FRAMES_FIRST,
        "every frame moved before the instruction, as lines `Frame-i: <image>`; after each "
        "label only text references `<Frame-i>` to its frames, deleted in runs of 8, so at "
        "16 frames the labels stand together (`reorganize_prompt`, `build_video_prompt`)",
        INSTEAD,
    ),
    Case(
        "llava_onevision",
        "LLaVA-OneVision",
        "LLaVA_OneVision_HF",
        (),
        "video",
        REFUSED,
        "every row raises `LLaVA-OneVision does not support multiple videos as input.`, "
        "no answer is written and `splice vlmeval` exits 1",
        INSTEAD,
        "LLaVA-OneVision does not support multiple videos as input.",
    ),
)


@pytest.fixture(scope="module")
def vlmeval() -> Path:
    return side_venvs.vlmeval_python("vlmeval.run, vlmeval.vlm, qwen_vl_utils, decord")


def probe_env(tmp: Path, **extra: str) -> dict[str, str]:
    """No Hub, caches of this test, the recorder and this checkout's modules first (the
    venv's editable install may be another checkout)."""
    return side_venvs.offline_env(
        tmp, RECORDER, LMUData=str(tmp / "LMUData"), CUDA_VISIBLE_DEVICES="", **extra
    )


@pytest.fixture(scope="module")
def tiny(toolkit_checkpoints: dict[str, dict]) -> dict[str, dict]:
    """Each case's checkpoint (the toolkits' conftest builds them once per run)."""
    built = {c.family: toolkit_checkpoints[c.family] for c in CASES}
    assert all("error" not in b for b in built.values()), built
    return built


@dataclass(frozen=True)
class Run:
    proc: subprocess.CompletedProcess
    records: list[dict]  # one per generate call, in VLMEvalKit's order
    folder: Path


def model_name(case: Case) -> str:
    return f"tiny-{case.family}-{case.cls}"


@pytest.fixture(scope="module")
def rows(subset_build) -> Path:
    """The build the classes run on: the demo's first ``VIDEOS`` videos. Every verdict is
    read per row and holds for each; a row more adds minutes (InternVL's 16 frames per clip
    at 448 px), never a verdict."""
    return subset_build(VIDEOS)[0]


@pytest.fixture(scope="module")
def runs(vlmeval, tiny, rows, tmp_path_factory) -> dict[str, Run]:
    """``splice vlmeval --data DATASETS --model <case>`` per case, all started at once."""
    started = {}
    for case in CASES:
        folder = tmp_path_factory.mktemp(f"vlmeval-{case.family}")
        (folder / "LMUData").mkdir()
        record = folder / "generate.jsonl"
        names = {model_name(case): [case.cls, tiny[case.family]["path"], dict(case.kwargs)]}
        command = [str(vlmeval), str(PROBE), json.dumps(names), "--data", *DATASETS]
        command += ["--model", model_name(case), "--splice-data", str(rows)]
        env = probe_env(folder, SPLICE_RECORD_GENERATE=str(record))
        started[case.family] = (
            folder,
            record,
            command,
            subprocess.Popen(
                command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            ),
        )
    made = {}
    for family, (folder, record, command, process) in started.items():
        out, err = process.communicate(timeout=2400)
        proc = subprocess.CompletedProcess(command, process.returncode, out.decode(), err.decode())
        lines = record.read_text().splitlines() if record.exists() else []
        records = [json.loads(x) for x in lines]
        made[family] = Run(proc, records, folder)
    return made


# --- reading the record ------------------------------------------------------------------

# One clip's (or frame's) tokens as the family's processor or chat() expands them.
BLOCKS = {
    "Qwen2VLChat": r"<\|vision_start\|>(?:<\|video_pad\|>)+<\|vision_end\|>",
    "InternVLChat": r"<img>(?:<IMG_CONTEXT>)+</img>",
}


def user_turn(prompt: str) -> str:
    """The user's part of a ChatML prompt (what the class built from SPLICE's message)."""
    match = re.search(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", prompt, re.S)
    assert match, prompt[:2000]
    return match.group(1)


def in_place(turn: str, block: str, headings: list[str]) -> bool:
    """The paper's layout: the instruction, then each heading on its own line followed at
    once by its one clip, and nothing after the last clip."""
    parts = re.split(f"({block})", turn)
    texts, media = parts[0::2], parts[1::2]
    return (
        len(media) == len(headings)
        and texts[0].endswith(f"\n{headings[0]}\n")
        and all(t == f"{h}\n" for t, h in zip(texts[1:-1], headings[1:], strict=True))
        and texts[-1] == ""
    )


def frames_first(turn: str, block: str, frames: list[int], headings: list[str]) -> bool:
    """InternVLChat's layout (``reorganize_prompt``, ``build_video_prompt``): every frame as
    a line ``Frame-<i>: <frame>`` (``frames``: the frames of each clip), then the
    instruction, then the headings with no frame after any of them, only text references
    ``<Frame-i>`` to the heading's own frames, deleted in aligned runs of 8 (so none after
    a clip of 16 frames among the first 64)."""
    head = "".join(re.findall(rf"(?:Frame|Image)-\d+: {block}\n", turn))
    numbers = [int(i) for i in re.findall(rf"(?:Frame|Image)-(\d+): {block}\n", head)]
    rest = turn[len(head) :]
    if not (
        turn.startswith(head)
        and numbers == list(range(1, sum(frames) + 1))
        and re.search(block, rest) is None
        and rest.startswith("A video has been split into")
    ):
        return False
    starts, at = [], 0  # where each heading's line ends, found in order
    for h in headings:
        at = rest.index(f"{h}\n", at) + len(h) + 1
        starts.append(at)
    first = 1
    for k, (start, count) in enumerate(zip(starts, frames, strict=True)):
        end = starts[k + 1] - len(headings[k + 1]) - 1 if k + 1 < len(headings) else len(rest)
        refs = [int(i) for i in re.findall(r"<(?:Frame|Image)-(\d+)>", rest[start:end])]
        own = range(first, first + count)
        if rest[start:end] != "".join(f"<Frame-{i}>" for i in refs) or not set(refs) <= set(own):
            return False
        if count == 16 and first + count - 1 <= 64 and refs:
            return False
        first += count
    return True


def qwen_frames(row: dict, dataset: str) -> list[int]:
    """Frames per clip as qwen-vl-utils samples them for the variant: 16 (the class's
    ``nframes``), or at 1 fps its clip's seconds rounded down to even, at least 4."""
    frames = VARIANTS[dataset].frames
    if frames is not None and frames.num_frames:
        return [frames.num_frames] * row[schema.NUM_CLIPS]
    return [max(4, 2 * math.floor(d / 2)) for d in row[schema.CLIP_DURATIONS]]


def qwen_seconds_per_grid(row: dict, dataset: str) -> list[float]:
    """The clip seconds each temporal grid step (2 frames) stands for, from the clip's real
    duration: Qwen2.5-VL's ``second_per_grid_ts`` when its time positions are the clip's."""
    return [
        2 * d / n
        for d, n in zip(row[schema.CLIP_DURATIONS], qwen_frames(row, dataset), strict=True)
    ]


def sampled_frames(row: dict, dataset: str) -> list[int]:
    """Frames per clip the dataset class sends an image model: ``sample_frames`` at the
    variant's setting."""
    frames = VARIANTS[dataset].frames or PAPER_1FPS
    return [len(sample_frames(c, **frames.kwargs()).frames) for c in row[schema.CLIPS]]


def asked_rows(build: Path) -> list[tuple[str, dict]]:
    """(dataset, row) in the order VLMEvalKit asks them: DATASETS in turn, rows in the
    TSV's index order, which is the build's."""
    return [(name, row) for name in DATASETS for row in iter_rows(build, VARIANTS[name].config)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.family}-{c.cls}")
def test_vlmeval_class_gives_the_family_what_the_table_says(case, runs, rows):
    run = runs[case.family]
    log = (run.proc.stdout + run.proc.stderr)[-6000:]
    if case.verdict == REFUSED:
        # never reached the model; VLMEvalKit logged the error; splice vlmeval named the pairs
        assert not run.records, run.records[:1]
        assert case.error in run.proc.stdout + run.proc.stderr, log
        assert run.proc.returncode == 1, log
        for name in DATASETS:
            assert f"{model_name(case)} x {name}" in run.proc.stderr, log
        return
    assert run.proc.returncode == 0, log
    asked = asked_rows(rows)
    assert len(run.records) == len(asked), log
    verdicts = set()
    for record, (dataset, row) in zip(run.records, asked, strict=True):
        config = VARIANTS[dataset].config
        headings = [c.heading for c in prompts.build_prompt(row, config).clips]
        turn = user_turn(record["prompt"])
        block = BLOCKS[case.cls]
        if case.clips_as == "video":
            grids = record["grids"]["video_grid_thw"]
            assert [t * 2 for t, _, _ in grids] == qwen_frames(row, dataset), (dataset, grids)
            assert "image_grid_thw" not in record["grids"]
            sizes = {(h * PATCH, w * PATCH) for _, h, w in grids}
            assert (max(max(hw) for hw in sizes) <= PAPER_LONG_SIDE) == case.paper_size, sizes
            if case.paper_times is not None:
                seconds = record["second_per_grid_ts"]
                real = qwen_seconds_per_grid(row, dataset)
                assert (seconds == pytest.approx(real, rel=0.02)) == case.paper_times, (
                    dataset,
                    seconds,
                    real,
                )
        else:
            assert len(re.findall(block, turn)) == sum(sampled_frames(row, dataset)), dataset
        if in_place(turn, block, headings):
            verdicts.add(IN_PLACE)
        elif case.clips_as == "images" and frames_first(
            turn, block, sampled_frames(row, dataset), headings
        ):
            verdicts.add(FRAMES_FIRST)
        else:
            verdicts.add(f"neither: {turn[:1500]}")
    assert verdicts == {case.verdict}, verdicts
    for name in DATASETS:  # VLMEvalKit's evaluate: splice score's numbers over every video
        scores = run.folder / "outputs" / model_name(case) / f"{model_name(case)}_{name}"
        result = json.loads(Path(f"{scores}_splice_scores.json").read_text())
        assert result["count"] == len(list(iter_rows(rows, VARIANTS[name].config)))


# --- the docs' table ---------------------------------------------------------------------

# Classes this machine cannot run, each with what its code does (ms-vlmeval 0.0.20).
FROM_CODE = (
    (
        "LLaVA-OneVision (`LLaVA_OneVision`, lmms-lab checkpoints)",
        "refuses several videos, as `LLaVA_OneVision_HF` does (`vlmeval/vlm/llava/llava.py`, "
        "`generate_inner_video`); read from its code: it needs LLaVA-NeXT's `llava` package, "
        "which is not on PyPI",
        "not offered",
        INSTEAD,
    ),
    (
        "Gemini (`Gemini`, an API)",
        "every video before all the text (`vlmeval/api/gemini.py`, `build_msgs_genai`: "
        "`video_parts + text_and_images`); read from its code: an API, not run here",
        "16-frame variants (and the vertex backend): frames in place, each after its label "
        "(`vlmeval/inference_video.py` turns `VIDEO_LLM` off); read from its code",
        "a `*_16frame` variant, or `splice run` against Gemini's OpenAI-compatible endpoint",
    ),
    (
        "any model behind an OpenAI-compatible server (`--base-url`: `LMDeployAPI`)",
        "in place (`--video-llm`): measured, `tests/splice_eval/toolkits/test_vlmeval.py`",
        "in place: measured, `tests/splice_eval/toolkits/test_vlmeval.py`",
        "use it: serve the model with vLLM, SGLang or LMDeploy",
    ),
)


def render_table(cases: tuple[Case, ...] = CASES) -> str:
    """The docs' table of VLMEvalKit classes: ``CASES`` (measured here) and ``FROM_CODE``."""
    lines = [
        "| model family (VLMEvalKit class) | clips as videos | clips as frames | what to do |",
        "|---|---|---|---|",
    ]
    for c in cases:
        cell = f"{c.verdict}: {c.measured} (measured)"
        videos, frames = (cell, "not offered") if c.clips_as == "video" else ("not offered", cell)
        lines.append(f"| {c.label} (`{c.cls}`) | {videos} | {frames} | {c.todo} |")
    lines += [f"| {' | '.join(row)} |" for row in FROM_CODE]
    return "\n".join(lines)


def test_docs_table_is_the_measured_one():
    doc = (REPO / "docs" / "running-models.md").read_text(encoding="utf-8")
    assert render_table() in doc, "docs/running-models.md: paste render_table()"
