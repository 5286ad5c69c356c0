"""The exported VLMEvalKit class against the product's, in VLMEvalKit installed WITHOUT this
project (``.venv-torch``): a copy of the installed ``vlmeval`` package (nothing in the venv
is written) gets the exported files and the registries' patch (``git apply``), and
VLMEvalKit's own ``run.main()`` runs every variant with a real model class (``Qwen2VLChat``)
on a tiny Qwen2.5-VL checkpoint (tests/support/tiny_checkpoints.py), forced to one answer.
The product's ``splice vlmeval`` runs the same way from the checkout. What the model received
(tests/support/lmms_record: prompt tokens, grids and pixels' digests, call by call) is the
same, and every variant's scores are the product's and what ``splice score`` gives the same
answers.

The data is the first two demo videos (``subset_build(2)``): each variant loads the model
again (one run per variant, as ``splice vlmeval`` runs them), so a row more adds minutes.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import splice_metric
from splice_build.cli import main as splice_main
from splice_eval.builddata import iter_rows
from splice_eval.export import vlmevalkit
from splice_eval.export.command import files_for, write_files
from splice_eval.run.sampling import clip_bytes
from splice_eval.toolkits.vlmeval import VARIANTS
from tests.splice_eval.export.test_command import DATASET
from tests.support.paths import REPO, SUPPORT
from tests.support.side_venvs import bare_env, checkout_pythonpath
from tests.support.toolkit_overlay import installed_package

RECORDER = SUPPORT / "lmms_record"
ANSWER = "<order>Video 2, Video 1</order>"
MODEL = "tiny-qwen2_5_vl-Qwen2VLChat"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vlmevalkit-export")
    write_files(files_for("vlmevalkit", DATASET), out)
    return out


def overlay(torch_env: Path, exported: Path, root: Path, files: bool = True) -> Path:
    """A copy of the installed vlmeval with the export's patches applied (``git apply``, as
    docs/upstream.md does) and, unless not ``files``, its files in it."""
    installed = installed_package(torch_env, "vlmeval")
    shutil.copytree(installed, root / "vlmeval", symlinks=True)
    if files:
        shutil.copytree(exported / "vlmeval", root / "vlmeval", dirs_exist_ok=True)
    patches = [vlmevalkit.PATCH_FILE] if files else []
    for name in [*patches, vlmevalkit.QWEN_PATCH_FILE]:
        proc = subprocess.run(
            ["git", "apply", "--unsafe-paths", str(exported / name)],
            cwd=root, capture_output=True, text=True,
        )  # fmt: skip
        assert proc.returncode == 0, (name, proc.stderr)
    return root


def run_env(tmp: Path, build: Path, pythonpath: str) -> dict[str, str]:
    return bare_env(
        tmp,
        pythonpath,
        build,
        tmp / "generate.jsonl",
        ANSWER,
        LMUData=str(tmp / "LMUData"),
        VLMEVALKIT_USE_MODELSCOPE="0",
    )


def run(command: list[str], env: dict[str, str], tmp: Path) -> tuple[list[dict], Path]:
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp, timeout=3000)
    log = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, log
    records = [json.loads(x) for x in (tmp / "generate.jsonl").read_text().splitlines()]
    return records, tmp / "outputs"


def scores_of(outputs: Path, name: str) -> tuple[dict, Path]:
    (scores,) = outputs.rglob(f"{MODEL}_{name}_splice_scores.json")
    (answers,) = outputs.rglob(f"{MODEL}_{name}_splice.jsonl")
    return json.loads(scores.read_text()), answers


def clip_lengths(row: dict) -> list[float]:
    """Each clip's length in seconds (frames / average rate), in the row's order."""
    import av

    lengths = []
    for clip in row["clips"]:
        with av.open(io.BytesIO(clip_bytes(clip))) as container:
            stream = container.streams.video[0]
            frames = sum(1 for _ in container.decode(stream))
            lengths.append(frames / float(stream.average_rate))
    return lengths


def test_exported_class_gives_the_model_and_the_scores_of_the_products(
    torch_env,
    exported,
    qwen_checkpoint,
    subset_build,
    tmp_path,
):
    build, _ = subset_build(2)
    names = {MODEL: ["Qwen2VLChat", qwen_checkpoint, {}]}
    data = list(VARIANTS)
    # the export, in a copy of VLMEvalKit's package, nothing of this project importable
    root = overlay(torch_env, exported, tmp_path / "overlay")
    tmp = tmp_path / "export"
    tmp.mkdir()
    command = [str(torch_env), str(SUPPORT / "vlmevalkit_run_probe.py"), json.dumps(names)]
    command += ["--data", *data, "--model", MODEL]
    env = run_env(tmp, build, f"{root}:{RECORDER}:{SUPPORT}")
    records, outputs = run(command, env, tmp)
    # the product's `splice vlmeval` from the checkout, the same model and answers
    links = tmp_path / "links"
    links.mkdir()
    (links / "splice_build").symlink_to(REPO / "build", target_is_directory=True)
    tmp = tmp_path / "product"
    tmp.mkdir()
    command = [str(torch_env), str(SUPPORT / "vlmeval_models_probe.py"), json.dumps(names)]
    command += ["--data", *data, "--model", MODEL, "--splice-data", str(build)]
    # in the VLMEvalKit the export is for: Qwen2VLChat with the export's fps patch alone
    patched = overlay(torch_env, exported, tmp_path / "product-vlmeval", files=False)
    env = run_env(tmp, build, f"{patched}:{RECORDER}:{checkout_pythonpath(links)}")
    product_records, product_outputs = run(command, env, tmp)

    # what the model received: the same prompt tokens and grids, call by call
    def without_pixels(r: dict) -> str:
        return json.dumps({k: v for k, v in r.items() if k != "digests"}, sort_keys=True)

    assert len(records) == len(product_records) > 0
    assert list(map(without_pixels, records)) == list(map(without_pixels, product_records))
    assert records == product_records  # the pixels too
    assert any("<|video_pad|>" in r["prompt"] for r in records)
    assert any("<|image_pad|>" not in r["prompt"] for r in records)

    # the time positions are the clips' own (the fps patch): Qwen2.5-VL's temporal step of
    # 2 frames stands for 2 x seconds / frames of its clip, so steps x seconds per step is the
    # clip's length, for each clip of a row in the order the model saw them
    lengths = [clip_lengths(row) for row in iter_rows(build, "video", ["clips"])]
    timed = [r for r in records if r["second_per_grid_ts"]]
    assert len(timed) == 8  # two videos in each of the four variants with clips
    for r in timed:
        steps = [t for t, _, _ in r["grids"]["video_grid_thw"]]
        seen = [s * t for s, t in zip(r["second_per_grid_ts"], steps, strict=True)]
        assert any(seen == pytest.approx(want, rel=0.02) for want in lengths), (seen, lengths)

    # every variant: VLMEvalKit's scores are the product's and `splice score`'s
    for name in data:
        got, answers = scores_of(outputs, name)
        want, _ = scores_of(product_outputs, name)
        report = tmp_path / f"{name}.json"
        assert (
            splice_main(["score", str(answers), "--data", str(build), "--json", str(report)]) == 0
        )
        (scored,) = json.loads(report.read_text())["runs"]
        for metric in splice_metric.RATES:
            assert got[metric] == pytest.approx(want[metric]), (name, metric)
            assert got[metric] == pytest.approx(scored[metric]), (name, metric)
        assert got["count"] == scored["count"] > 0
