"""The exported lmms-eval task against the product's, in lmms-eval installed WITHOUT this
project (``.venv-torch``): the export is put into lmms-eval's own ``tasks/`` (an overlay of
the installed package, tests/support/toolkit_overlay.py) and run with ``lmms-eval eval`` as
lmms-eval's users run a task, with a real model class (``qwen2_5_vl``, at the paper's 1 fps
and 448 px) on a tiny checkpoint of the family (tests/support/tiny_checkpoints.py), forced to
one answer. The product's task runs the same way from the checkout. What the model received
(tests/support/lmms_record: prompt tokens and the pixels' digests, call by call) is the same,
and every variant's scores, the group's included, are what ``splice score`` gives the same
answers; the export's own test (lmms-eval's ``test/eval/``) passes there too.

One model class: Qwen2.5-VL, the family lmms-eval gives the paper's settings. The
single-frame probe is not run with it: qwen-vl-utils refuses a one-frame video ("nframes
should in interval [2, 1]"), in the product's task as in the export (docs/upstream.md).
The data is the first two demo videos (``subset_build(2)``), so a run answers every doc
(no ``--limit``) and ``splice score`` scores the same videos.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import splice_metric
from splice_build.cli import main as splice_main
from splice_eval.export import lmms_eval
from splice_eval.export.command import files_for, write_files
from tests.splice_eval.export.test_command import DATASET
from tests.splice_eval.toolkits.test_lmms_models import CASES, CPU
from tests.support.paths import REPO, SUPPORT
from tests.support.side_venvs import bare_env, checkout_pythonpath
from tests.support.toolkit_overlay import installed_package, overlay_package

RECORDER = SUPPORT / "lmms_record"
QWEN = next(c for c in CASES if c.family == "qwen2_5_vl")
ANSWER = "<order>Video 2, Video 1</order>\n<answer>Video 1</answer>"  # read by each format
SKIPPED = ("splice_video_single_frame",)
QUESTION_METRICS = ("accuracy", "chance", "unparsed_rate", "invalid_rate")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lmms-export")
    write_files(files_for("lmms-eval", DATASET), out)
    return out


def task_names(exported: Path) -> list[str]:
    """The exported task's group and variants, but those the class cannot take."""
    yamls = lmms_eval.task_yamls(exported / lmms_eval.TASK_FOLDER)
    variants = [t for t, _, _ in lmms_eval.variants(yamls)]
    return ["splice", *(t for t in variants if t not in SKIPPED and t not in GROUPED)]


GROUPED = ("splice_video", "splice_video_text", "splice_text")


def lmms_command(
    python: Path, tasks: list[str], checkpoint: str, build: Path, tmp: Path, pythonpath: str
) -> tuple[list[str], dict[str, str], Path, Path]:
    """``lmms-eval eval`` of ``tasks`` with the Qwen2.5-VL class, its environment (only what
    it needs: nothing of this shell's PYTHONPATH), and where its results and records go."""
    tmp.mkdir()
    out, record = tmp / "out", tmp / "generate.jsonl"
    args = f"pretrained={checkpoint},{CPU},{QWEN.args}"
    command = [str(python.parent / "lmms-eval"), "eval", "--model", QWEN.model]
    command += ["--model_args", args, "--tasks", ",".join(tasks)]
    command += ["--log_samples", "--output_path", str(out)]
    env = bare_env(
        tmp,
        pythonpath,
        build,
        record,
        ANSWER,
        SPLICE_CLIP_CACHE=str(tmp / "clips"),
        SPLICE_FRAME_CACHE=str(tmp / "frames"),
        HF_DATASETS_CACHE=str(tmp / "hf-datasets"),
    )
    return command, env, out, record


def lmms_run(command, env, out: Path, record: Path, cwd: Path) -> tuple[dict, list[dict], Path]:
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=1800)
    log = (proc.stdout + proc.stderr)[-5000:]
    assert proc.returncode == 0 and "Error during evaluation" not in log, log
    (results,) = out.rglob("*_results.json")
    records = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    return json.loads(results.read_text(encoding="utf-8")), records, results.parent


def splice_scores(samples: Path, build: Path, tmp: Path) -> dict:
    report = tmp / f"{samples.stem}.json"
    assert splice_main(["score", str(samples), "--data", str(build), "--json", str(report)]) == 0
    report = json.loads(report.read_text(encoding="utf-8"))
    (scored,) = report["runs"] + report["question_runs"]
    return scored


def test_exported_task_gives_the_model_and_the_scores_of_the_products(
    torch_env, exported, qwen_checkpoint, subset_build, tmp_path
):
    build, _ = subset_build(2)
    tasks = task_names(exported)
    # the export, inside lmms-eval's own tasks/, with nothing of this project importable
    installed = installed_package(torch_env, "lmms_eval")
    overlay = overlay_package(
        installed,
        tmp_path / "overlay",
        {"tasks/splice": exported / lmms_eval.TASK_FOLDER},
    )
    command, env, out, record = lmms_command(
        torch_env, tasks, qwen_checkpoint, build, tmp_path / "export", f"{overlay}:{RECORDER}"
    )
    results, records, samples_dir = lmms_run(command, env, out, record, tmp_path / "export")
    # the product's task from the checkout, the same model and answers
    # (build/ is imported as splice_build: a link of that name, as an install maps it)
    links = tmp_path / "links"
    links.mkdir()
    (links / "splice_build").symlink_to(REPO / "build", target_is_directory=True)
    command, env, out, record = lmms_command(
        torch_env,
        tasks,
        qwen_checkpoint,
        build,
        tmp_path / "product",
        f"{RECORDER}:{checkout_pythonpath(links)}",
    )
    command += ["--include_path", "lmms_eval_tasks/splice"]
    product, product_records, _ = lmms_run(command, env, out, record, REPO)

    # what the model received: the same prompt tokens and pixels, call by call
    def key(r: dict) -> str:
        return json.dumps(r, sort_keys=True)

    def without_pixels(r: dict) -> str:
        return json.dumps({k: v for k, v in r.items() if k != "digests"}, sort_keys=True)

    assert len(records) == len(product_records) > 0
    assert sorted(map(without_pixels, records)) == sorted(map(without_pixels, product_records))
    same_pixels = sorted(map(key, records)) == sorted(map(key, product_records))
    assert any(r["digests"] for r in records)  # clips reached the model as pixels
    assert any("<|video_pad|>" in r["prompt"] for r in records)

    # every variant: lmms-eval's scores are the product's and `splice score`'s
    sizes = {}
    for task in [t for t in tasks if t != "splice"] + list(GROUPED):
        (samples,) = samples_dir.glob(f"*_samples_{task}.jsonl")
        scored = splice_scores(samples, build, tmp_path)
        names = QUESTION_METRICS if task.endswith(("_choice", "_pairwise")) else splice_metric.RATES
        for name in names:
            got = results["results"][task][f"{name},none"]
            assert got == pytest.approx(product["results"][task][f"{name},none"]), (task, name)
            assert got == pytest.approx(scored[name]), (task, name)
        sizes[task] = results["n-samples"][task]["effective"]
    # the group's row: each metric over the three configs' answers pooled
    total = sum(sizes[t] for t in GROUPED)
    for name in splice_metric.RATES:
        pooled = sum(results["results"][t][f"{name},none"] * sizes[t] for t in GROUPED) / total
        assert results["results"]["splice"][f"{name},none"] == pytest.approx(pooled), name
    order_answers = [results["results"][t]["invalid_rate,none"] for t in GROUPED]
    assert min(order_answers) < 1  # the forced answer was read, not all scored invalid

    # the export's own test, as lmms-eval's CI runs it, from the overlay
    test = exported / lmms_eval.TEST_FILE
    proc = subprocess.run(
        [str(torch_env), str(test)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(overlay)},
    )
    assert proc.returncode == 0 and "OK" in proc.stderr, (proc.stdout + proc.stderr)[-4000:]

    if not same_pixels:
        # Found when the branches were merged (transformers 5.24 in .venv-torch): one clip of
        # the reversed probe reaches the model with other pixels through the export than
        # through the product's task, every prompt token and grid equal. Not yet explained;
        # reported as xfailed, never passed, until it is (see the closing note of stop 38).
        pytest.xfail("the export's pixels differ from the product's for one probe clip")
