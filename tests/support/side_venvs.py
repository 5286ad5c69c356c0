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
        "torch, torchvision, transformers, splice_eval.local.adapters",
    )
