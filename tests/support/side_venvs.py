"""The Python of one of the side venvs that `make test` builds beside `.venv`: each peer tool
needs an environment the project's own cannot be. Everything that needs torch shares one
install of it (the Makefile says why each pin is what it is):

- ``.venv-torch`` (``make torch-venv``): torch, torchvision, transformers, lmms-eval and
  VLMEvalKit, and NOT this project: a toolkit run there sees only what a user of the toolkit
  has (``torch_python``);
- ``.venv-models`` (``make models-venv``): a thin venv that sees ``.venv-torch``'s packages
  through a ``.pth`` file, with this project installed editable: the local backend, lmms-eval
  through our task, ``splice vlmeval`` (``models_python``, ``lmms_python``,
  ``vlmeval_python``);
- ``.venv-space`` (the metric Space's gradio) and ``.venv-floor`` (``datasets`` at
  setup.cfg's floor, over ``.venv`` through a ``.pth`` file).

Under `make test` (its ``SPLICE_REQUIRE_*=1``) a missing or broken venv fails the test;
elsewhere the test is skipped with the command that makes it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import REPO


def checkout_pythonpath(*first: Path) -> str:
    """A PYTHONPATH for a side venv's subprocess: ``first``, then this checkout's modules
    (and its ``.pp`` links, where a worktree has them), so the checkout under test is run,
    never the copy installed in the venv, which may be another checkout's."""
    return os.pathsep.join(str(p) for p in (*first, REPO / ".pp", REPO) if p.is_dir())


def offline_env(tmp: Path, *first: Path, **extra: str) -> dict[str, str]:
    """The environment of a side venv's subprocess that loads models: the Hub and transformers
    offline (no test reaches the internet), Hugging Face's home in ``tmp`` (this test's own
    cache), no inherited ``SPLICE_DATA``, and ``checkout_pythonpath(*first)``; ``extra``
    added last."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPLICE_DATA")}
    return {
        **base,
        "PYTHONPATH": checkout_pythonpath(*first),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(tmp / "hf-home"),
        "TOKENIZERS_PARALLELISM": "false",
        **extra,
    }


def bare_env(tmp: Path, pythonpath: str, build: Path, record: Path, answer: str, **extra: str):
    """The environment of a toolkit's own run in a parity test: nothing of this shell's (so
    neither its PYTHONPATH nor this checkout), offline, on the CPU, caches in ``tmp``, the
    build in ``$SPLICE_DATA``, the recorder writing to ``record`` and forcing ``answer``;
    ``extra`` added last (a toolkit's own settings)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "PYTHONPATH": pythonpath,
        "SPLICE_DATA": str(build),
        "HF_HOME": str(tmp / "hf-home"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "CUDA_VISIBLE_DEVICES": "",
        "SPLICE_RECORD_GENERATE": str(record),
        "SPLICE_FORCE_ANSWER": answer,
        **extra,
    }


# (python, imports) that imported once: the probe costs seconds (VLMEvalKit's import ~30 s),
# and each module's fixture asks again.
_IMPORTED: set[tuple[str, str]] = set()


def side_venv_python(
    folder: str, python_env: str, require_env: str, make_target: str, imports: str
) -> Path:
    """``$python_env`` or ``<repo>/<folder>/bin/python``, once it imports ``imports``."""
    path = Path(os.environ.get(python_env) or REPO / folder / "bin" / "python")
    if (str(path), imports) in _IMPORTED:
        return path
    if path.exists():
        probe = subprocess.run(
            [str(path), "-c", f"import {imports}"], capture_output=True, text=True, timeout=300
        )
        if probe.returncode == 0:
            _IMPORTED.add((str(path), imports))
            return path
        problem = f"{path} cannot import {imports}: {probe.stderr.strip()[-300:]}"
    else:
        problem = f"{path} does not exist"
    if os.environ.get(require_env) == "1":  # `make test` builds it
        pytest.fail(f"{problem}; run `make {make_target}`")
    pytest.skip(f"{problem}; run `make {make_target}` or set {python_env}")


def models_python() -> Path:
    """``.venv-models`` (``make models-venv``): torch, torchvision and transformers beside the
    project, for ``splice run --backend transformers`` on real model classes."""
    return side_venv_python(
        ".venv-models",
        "SPLICE_MODELS_PYTHON",
        "SPLICE_REQUIRE_MODELS",
        "models-venv",
        "torch, torchvision, transformers, splice_eval.run.local.adapters",
    )


def lmms_python(imports: str = "lmms_eval") -> Path:
    """``.venv-models`` with lmms-eval (which pins PyAV<16 and needs torch, so it cannot share
    ``.venv``); its ``bin/lmms-eval`` runs this Python. Once it imports ``imports``."""
    return side_venv_python(
        ".venv-models", "SPLICE_LMMS_PYTHON", "SPLICE_REQUIRE_LMMS", "models-venv", imports
    )


def vlmeval_python(imports: str = "vlmeval.run, splice_eval.toolkits.vlmeval_command") -> Path:
    """``.venv-models`` with VLMEvalKit (``ms-vlmeval``); once it imports ``imports``."""
    return side_venv_python(
        ".venv-models", "SPLICE_VLMEVAL_PYTHON", "SPLICE_REQUIRE_VLMEVAL", "models-venv", imports
    )


def torch_python(imports: str = "lmms_eval, torch, torchvision, transformers") -> Path:
    """``.venv-torch``: torch, torchvision, transformers, lmms-eval and VLMEvalKit WITHOUT this
    project, the toolkits as a user installs them (the exported tasks' parity tests run
    them there); once it imports ``imports``."""
    return side_venv_python(
        ".venv-torch", "SPLICE_TORCH_PYTHON", "SPLICE_REQUIRE_TORCH", "torch-venv", imports
    )
