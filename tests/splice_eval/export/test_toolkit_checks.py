"""The toolkits' own pre-commit checks pass on the exported files, run as their contributors
run them: the hooks, versions and arguments of their ``.pre-commit-config.yaml`` (VLMEvalKit
at e8e78f0, lmms-eval at 75571cf), the tools installed from PyPI at those versions by
``.[test]``, each run from the command line on a folder laid out as their checkout, with
their settings file where the hook reads one. Settings are written here from their files,
not imported from the exporter, so that the exporter's formatting is checked, not restated.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from splice_eval.export.command import files_for, write_files
from tests.splice_eval.export.test_command import DATASET

# VLMEvalKit's setup.cfg, the sections its hooks read (isort's; flake8's own settings are
# overridden by the hook's arguments, and its per-file ignores name none of the export's).
VLMEVAL_SETUP_CFG = """[isort]
line_length = 99
multi_line_output = 0
known_first_party = vlmeval
no_lines_before = STDLIB,LOCALFOLDER
sections = FUTURE,STDLIB,THIRDPARTY,FIRSTPARTY,LOCALFOLDER
"""
HOOKS = {
    "vlmevalkit": [
        ["flake8", "--max-line-length=120", "--ignore=W503"],
        ["isort", "--check-only", "--diff"],
        ["yapf", "--diff", "--style={column_limit=120}"],
    ],
    "lmms-eval": [
        ["black", "--check", "--diff", "--line-length=240"],
        ["isort", "--check-only", "--diff", "--profile", "black"],
    ],
}
VERSIONS = {"flake8": "7.1.2", "isort": "6.0.1", "yapf": "0.43.0", "black": "25.1.0"}


def hook(tool: list[str], files: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *tool, *files], capture_output=True, text=True, cwd=cwd,
        timeout=900,
    )  # fmt: skip


@pytest.mark.parametrize("toolkit", ["vlmevalkit", "lmms-eval"])
def test_the_toolkits_pre_commit_checks_pass_on_the_export(toolkit, tmp_path):
    from importlib.metadata import version

    for tool, pinned in VERSIONS.items():
        assert version(tool) == pinned, tool  # the hooks' revisions
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    if toolkit == "vlmevalkit":
        (checkout / "setup.cfg").write_text(VLMEVAL_SETUP_CFG)
    write_files(files_for(toolkit, DATASET), checkout)
    python = sorted(
        p.relative_to(checkout).as_posix()
        for p in checkout.rglob("*.py")
        if p.parent != checkout  # the patches and settings beside the export are no files of it
    )
    assert python
    for tool in HOOKS[toolkit]:
        done = hook(tool, python, checkout)
        assert done.returncode == 0, (tool, (done.stdout + done.stderr)[-3000:])
    # pre-commit-hooks' trailing-whitespace, end-of-file-fixer, mixed-line-ending (VLMEvalKit)
    for path in (p for p in checkout.rglob("*") if p.is_file() and p.suffix != ".patch"):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(checkout).as_posix()
        assert text.endswith("\n") and not text.endswith("\n\n"), name
        assert "\r" not in text, name
        assert not [n for n, line in enumerate(text.split("\n"), 1) if line != line.rstrip()], name
