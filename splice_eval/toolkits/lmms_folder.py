"""``splice lmms-tasks``: the folder of the lmms-eval task files, for ``--include_path``.

The task folder (``lmms_eval_tasks/splice/`` in the repository: YAMLs and ``utils.py``)
ships inside the package, at ``splice_eval/lmms_tasks/`` (setup.py maps it there), so a
user who installed the wheel and has no checkout passes it to lmms-eval as
``--include_path "$(splice lmms-tasks)"``. In a checkout (the editable install of
``make demo``) the folder is the repository's own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from splice_build.errors import UserError

TASK_GROUP_YAML = "splice.yaml"  # the `splice` group: present in every copy of the folder
_PACKAGE = Path(__file__).resolve().parents[1]  # splice_eval/ (this is toolkits/lmms_folder.py)
INSTALLED = _PACKAGE / "lmms_tasks"  # where a wheel puts the folder
CHECKOUT = _PACKAGE.parent / "lmms_eval_tasks" / "splice"


def task_folder() -> Path:
    """The installed copy of the task folder, else the checkout's."""
    for folder in (INSTALLED, CHECKOUT):
        if (folder / TASK_GROUP_YAML).is_file():
            return folder
    raise UserError(
        f"no lmms-eval task files ({TASK_GROUP_YAML}) in {INSTALLED} or {CHECKOUT}: "
        "reinstall splice-benchmark"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the command prints one path."""


def run(args: argparse.Namespace) -> int:
    print(task_folder())
    return 0
