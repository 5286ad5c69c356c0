"""VLMEvalKit imports every dataset module when it starts (``vlmeval/dataset/__init__.py``),
so the exported class module is imported by every VLMEvalKit user once the pull request is
merged, whatever they run. It may import at module level only what VLMEvalKit itself
declares (PyPI's ``ms-vlmeval``): tested in a venv of those distributions alone, where
``evaluate`` (which the metric imports) is not."""

from __future__ import annotations

import subprocess

from splice_eval.export.command import files_for, write_files
from tests.splice_eval.export.conftest import declared_deps_python
from tests.splice_eval.export.test_command import DATASET
from tests.splice_eval.export.test_vlmevalkit import overlay


def test_vlmeval_starts_with_the_export_where_only_its_declared_dependencies_are(
    torch_env, tmp_path
):
    python, have = declared_deps_python(torch_env, "ms-vlmeval", tmp_path / "venv")
    assert "evaluate" not in have and "datasets" in have
    write_files(files_for("vlmevalkit", DATASET), tmp_path / "export")
    root = overlay(torch_env, tmp_path / "export", tmp_path / "overlay")
    code = (
        "import sys, vlmeval, vlmeval.dataset as d\n"
        "assert d.SPLICE.__name__ == 'SPLICE' and 'vlmeval.dataset.splice' in sys.modules\n"
        "assert 'evaluate' not in sys.modules\n"
        "from vlmeval.dataset.video_dataset_config import supported_video_datasets as s\n"
        "print(sorted(n for n in s if n.startswith('SPLICE')))"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(root)}
    done = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SPLICE_video_1fps" in done.stdout and "SPLICE_text" in done.stdout
