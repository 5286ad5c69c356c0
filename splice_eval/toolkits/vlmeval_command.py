"""``splice vlmeval``: registers the SPLICE datasets in VLMEvalKit, then hands the rest of its
command line to VLMEvalKit's own ``run.main()``, once per dataset.

VLMEvalKit has no plugin mechanism, so ``register()`` does at run time what its own modules
do at import (and what the exported pull request's patch writes into them): it adds the
class to ``vlmeval.dataset``'s lists and the variants to
``video_dataset_config.supported_video_datasets``. Kept apart from the class module
(``vlmeval``), which is exported upstream as it is.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import sys
import time
from pathlib import Path

from splice_build.errors import UserError
from splice_eval.toolkits.vlmeval import (
    DATA_ENV,
    DEFAULT_DATA,
    NAME,
    VARIANTS,
    data_source,
    dataset_class,
)


def register() -> type:
    """Make SPLICE and its variants known to VLMEvalKit (idempotent); returns the class."""
    import vlmeval.dataset as vdata
    from vlmeval.dataset import video_dataset_config

    cls = dataset_class()
    for registry in (vdata.DATASET_CLASSES, vdata.VIDEO_DATASET):
        if cls not in registry:
            registry.append(cls)
    vdata.SUPPORTED_DATASETS.extend(n for n in VARIANTS if n not in vdata.SUPPORTED_DATASETS)
    setattr(vdata, NAME, cls)
    for name in VARIANTS:
        video_dataset_config.supported_video_datasets[name] = functools.partial(cls, dataset=name)
    return cls


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run VLMEvalKit (ms-vlmeval) on SPLICE: registers the SPLICE datasets "
        f"({', '.join(VARIANTS)}) and passes every other option to VLMEvalKit's run.py "
        "(--model, --base-url, --work-dir, --mode, --api-nproc, --video-llm, ...)."
    )
    parser.allow_abbrev = False  # never read one of VLMEvalKit's options as a prefix of ours
    parser.set_defaults(pass_through=[])  # the dispatcher hands unknown options over here
    parser.add_argument(
        "--data",
        nargs="+",
        required=True,
        choices=list(VARIANTS),
        metavar="NAME",
        help=f"VLMEvalKit dataset name(s): {', '.join(VARIANTS)}",
    )
    parser.add_argument(
        "--model", nargs="+", required=True, help="VLMEvalKit model name(s), passed on as given"
    )
    parser.add_argument(
        "--splice-data",
        default=None,
        help=f"a built SPLICE folder or a Hub dataset id (default: ${DATA_ENV}, else "
        f"{DEFAULT_DATA})",
    )


# How to get the toolkit: no pip extra brings it, since ms-vlmeval declares some 70
# dependencies (models, judges) SPLICE never calls; docs/running-models.md says the same.
INSTALL_HINT = (
    "pip install ms-vlmeval==0.0.20 (with its dependencies, torch among them), or in a clone "
    "`make models-venv` and run .venv-models/bin/splice vlmeval (docs/running-models.md)"
)


def require_vlmeval() -> None:
    """VLMEvalKit missing: one line saying how to install it, not an import traceback."""
    if importlib.util.find_spec("vlmeval") is None:
        raise UserError(f"VLMEvalKit is not installed: {INSTALL_HINT}")


# ms-vlmeval looks a model's Hub id up through ModelScope unless this is "0" (its
# `smp.misc.modelscope_flag_set`, default "True"), and ModelScope is not among what it
# installs: the documented `--model Qwen2-VL-7B-Instruct` failed before loading the model.
# Set to "0" (Hugging Face's cache and Hub) unless the user chose otherwise.
MODELSCOPE_ENV = "VLMEVALKIT_USE_MODELSCOPE"


def use_hugging_face_hub() -> None:
    """VLMEvalKit's model lookups through the Hugging Face cache, unless the user set
    ``$VLMEVALKIT_USE_MODELSCOPE`` themselves."""
    os.environ.setdefault(MODELSCOPE_ENV, "0")


def run(args: argparse.Namespace) -> int:
    use_hugging_face_hub()
    if args.splice_data:
        os.environ[DATA_ENV] = args.splice_data
    data_source()  # a wrong folder is one line here, not a traceback inside VLMEvalKit
    require_vlmeval()
    work_dir, infer_only = _vlmeval_options(args.pass_through)
    started = time.time()
    register()
    from vlmeval import run as vlmeval_run

    argv = sys.argv
    try:
        # One VLMEvalKit run per dataset: within one run a local model object serves every
        # dataset and its frame settings leak from one to the next (after a 1 fps variant
        # Qwen2VLChat keeps neither fps nor nframe and samples the next variant at
        # qwen-vl-utils' default 2 fps: vlmeval/inference_video.py; measured in
        # tests/splice_eval/toolkits/test_vlmeval_models.py). A fresh run loads the model again
        # instead.
        for name in args.data:
            sys.argv = ["vlmeval", "--data", name, "--model", *args.model, *args.pass_through]
            vlmeval_run.main()
    finally:
        sys.argv = argv
    return _check_outcomes(work_dir, args.model, args.data, started, infer_only)


def _vlmeval_options(options: list[str]) -> tuple[Path, bool]:
    """VLMEvalKit's --work-dir (its MMEVAL_ROOT wins, as in its run.py) and whether its
    --mode is infer (answers, no scores)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--work-dir", default="./outputs")
    parser.add_argument("--mode", default="all")
    known, _ = parser.parse_known_args(options)
    return Path(os.environ.get("MMEVAL_ROOT") or known.work_dir), known.mode == "infer"


def _check_outcomes(
    work_dir: Path, models: list[str], data: list[str], started: float, infer_only: bool
) -> int:
    """VLMEvalKit logs a failed (model, dataset) and goes on with exit 0: each pair must have
    left this run's scores (in --mode infer, its answers), else exit 1 naming it."""
    failed = []
    for model in models:
        for name in data:
            if infer_only:
                done = list((work_dir / model).glob(f"{model}_{name}.*"))
            else:
                done = [work_dir / model / f"{model}_{name}_splice_scores.json"]
            if not any(p.exists() and p.stat().st_mtime >= started for p in done):
                failed.append(f"{model} x {name}")
    if failed:
        print(
            f"splice vlmeval: no result for {', '.join(failed)} (see VLMEvalKit's log above)",
            file=sys.stderr,
        )
        return 1
    return 0
