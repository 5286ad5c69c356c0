"""The lmms-eval task folder as the tests read and run it: its YAML as lmms-eval merges it,
its ``utils.py`` loaded from the file, its docs made from a build, and ``lmms-eval`` run from
the repository in its own venv (``.venv-models``). The task's tests, its question and probe
variants, the model-class tests and the build-identity tests share them."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from types import ModuleType

import datasets
import yaml

import splice_dataset as schema
from tests.support.paths import REPO
from tests.support.side_venvs import checkout_pythonpath

TASK_DIR = REPO / "lmms_eval_tasks" / "splice"


class FunctionTag:
    """A ``!function module.name`` tag of a task YAML, kept as its name."""

    def __init__(self, name: str):
        self.name = name


class TaskYamlLoader(yaml.SafeLoader):
    """PyYAML loader that keeps lmms-eval's ``!function module.name`` tags as names."""


TaskYamlLoader.add_constructor(
    "!function", lambda loader, node: FunctionTag(loader.construct_scalar(node))
)


def load_task_yaml(path: Path) -> dict:
    """A task YAML with its ``include`` merged, the way lmms-eval merges it."""
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=TaskYamlLoader)
    include = config.pop("include", None)
    if include is None:
        return config
    return {**load_task_yaml(path.parent / include), **config}


def load_utils() -> ModuleType:
    """The task folder's ``utils.py`` as lmms-eval loads it: from its file, a fresh module."""
    spec = importlib.util.spec_from_file_location("splice_lmms_utils", TASK_DIR / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs(build: Path, config: str, utils) -> list[dict]:
    """Docs as lmms-eval gets them: load_dataset(path, name), then the task's process_docs."""
    ds = datasets.load_dataset(str(build), config, split=schema.SPLIT)
    return list(utils.process_docs(ds))


def lmms_env(build: Path, tmp_path: Path) -> dict[str, str]:
    """The build through $SPLICE_DATA, and caches of this test only. The project is
    installed in lmms-eval's venv; PYTHONPATH puts this checkout's modules first (and its
    ``.pp`` links, where a worktree has them), so a checkout other than the installed one
    is tested as it is, never the venv's copy."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {
        **env,
        "PYTHONPATH": checkout_pythonpath(),
        "SPLICE_DATA": str(build),
        "SPLICE_CLIP_CACHE": str(tmp_path / "clips"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HF_HUB_OFFLINE": "1",
    }


def run_lmms(
    command: list[str],
    demo_build: Path,
    tmp_path: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``lmms-eval`` as the README runs it: from the repository, on the demo build (``env``:
    ``lmms_env``'s, as a caller changed it)."""
    env = env or lmms_env(demo_build, tmp_path)
    return subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=timeout, cwd=REPO
    )


def eval_dummy(
    lmms: Path, demo_build: Path, tmp_path: Path, task: str, response: str
) -> tuple[Path, dict, str]:
    """``lmms-eval eval --model dummy`` answering ``response`` on ``task``, as the README
    runs it; (its output folder, its results file, its stdout) once it ran cleanly."""
    out = tmp_path / "out"
    command = [str(lmms.parent / "lmms-eval"), "eval", "--model", "dummy", "--tasks", task]
    command += ["--include_path", "lmms_eval_tasks/splice", "--log_samples"]
    command += ["--output_path", str(out), "--model_args", f"response={response}"]
    proc = run_lmms(command, demo_build, tmp_path, timeout=1800)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (proc.stdout + proc.stderr)[
        -4000:
    ]
    (results_file,) = out.rglob("*_results.json")
    return out, json.loads(results_file.read_text(encoding="utf-8")), proc.stdout
