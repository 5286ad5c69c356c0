"""The checkpoint a local backend is given is refused before anything could run its code: a
remote-code checkpoint (InternVL2.5's ``internvl_chat``, as the paper's InternVL2.5-78B, or
any ``auto_map`` config transformers has no class for) gets our one line, never
transformers' "Do you wish to run the custom code? [y/N]" first, and its Python files are
never imported. Run as a user runs ``splice run --backend transformers``, in
``.venv-models`` (real transformers), with the answer to any question ready on stdin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from splice_eval.run.local.families import REMOTE_CODE_TYPES
from tests.support.side_venvs import models_python, offline_env

PROMPT = "Do you wish to run the custom code"


def remote_code_checkpoint(folder: Path, model_type: str) -> Path:
    """A checkpoint folder whose config names its own Python class (``auto_map``); importing
    that file leaves a marker beside it."""
    folder.mkdir()
    config = {
        "model_type": model_type,
        "architectures": ["InternVLChatModel"],
        "auto_map": {"AutoConfig": "configuration_remote.RemoteConfig"},
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    marker = folder / "RAN"
    (folder / "configuration_remote.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "from transformers import PretrainedConfig\n\n\n"
        "class RemoteConfig(PretrainedConfig):\n"
        f"    model_type = {model_type!r}\n",
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize(
    ("model_type", "said"),
    [
        ("internvl_chat", REMOTE_CODE_TYPES["internvl_chat"]),
        ("some_remote_vlm", "cannot load it"),
    ],
)
def test_remote_code_checkpoint_is_refused_before_any_question(
    model_type, said, demo_build, tmp_path
):
    python = models_python()
    model = remote_code_checkpoint(tmp_path / model_type, model_type)
    code = "import sys; from splice_build.cli import main; sys.exit(main())"
    argv = ["run", "--backend", "transformers", "--model", str(model), "--config", "text"]
    argv += ["--data", str(demo_build), "--limit", "1", "--out", str(tmp_path / "out.jsonl")]
    done = subprocess.run(
        [str(python), "-c", code, *argv],
        input="y\n",  # had transformers asked, it would have been told yes
        capture_output=True,
        text=True,
        env=offline_env(tmp_path),
        timeout=600,
    )
    assert done.returncode == 2, (done.stdout + done.stderr)[-3000:]
    assert PROMPT not in done.stdout + done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert f"--model {model}" in line and said in line, line
    assert not (model / "RAN").exists()  # the checkpoint's code never ran
