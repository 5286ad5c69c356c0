"""Fixtures of the lmms-eval task tests (the task, its question and probe variants, the
model classes): the task's ``utils.py`` and lmms-eval's Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lmms_tasks import load_utils
from tests.support.side_venvs import lmms_python


@pytest.fixture(scope="module")
def utils():
    return load_utils()


@pytest.fixture(scope="module")
def lmms() -> Path:
    return lmms_python("lmms_eval.tasks, lmms_eval.evaluator, splice_dataset")
