"""The Python of one of the side venvs that `make test` builds beside `.venv` (lmms-eval's,
the metric Space's, the datasets floor's, torch + transformers' for the local model backend,
and VLMEvalKit's): each peer tool needs an environment the project's own cannot be. Under
`make test` (its ``SPLICE_REQUIRE_*=1``) a missing or broken venv fails the test; elsewhere
the test is skipped with the command that makes it."""

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


def side_venv_python(
    folder: str, python_env: str, require_env: str, make_target: str, imports: str
) -> Path:
    """``$python_env`` or ``<repo>/<folder>/bin/python``, once it imports ``imports``."""
    path = Path(os.environ.get(python_env) or REPO / folder / "bin" / "python")
    if path.exists():
        probe = subprocess.run(
            [str(path), "-c", f"import {imports}"], capture_output=True, text=True, timeout=300
        )
        if probe.returncode == 0:
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
    """``.venv-lmms`` (``make lmms-venv``): lmms-eval, which pins PyAV<16 and needs torch, so
    it cannot share ``.venv``; once it imports ``imports``."""
    return side_venv_python(
        ".venv-lmms", "SPLICE_LMMS_PYTHON", "SPLICE_REQUIRE_LMMS", "lmms-venv", imports
    )


def vlmeval_python(imports: str = "vlmeval.run, splice_eval.toolkits.vlmeval") -> Path:
    """``.venv-vlmeval`` (``make vlmeval-venv``): VLMEvalKit (``ms-vlmeval``) with torch;
    once it imports ``imports``."""
    return side_venv_python(
        ".venv-vlmeval", "SPLICE_VLMEVAL_PYTHON", "SPLICE_REQUIRE_VLMEVAL", "vlmeval-venv", imports
    )


def torch_python(imports: str = "lmms_eval, torch, torchvision, transformers") -> Path:
    """``.venv-torch``: torch, torchvision, transformers, lmms-eval and VLMEvalKit WITHOUT this
    project, the toolkits as a user installs them (the exported tasks' parity tests run
    them there); once it imports ``imports``."""
    return side_venv_python(
        ".venv-torch", "SPLICE_TORCH_PYTHON", "SPLICE_REQUIRE_TORCH", "torch-venv", imports
    )
