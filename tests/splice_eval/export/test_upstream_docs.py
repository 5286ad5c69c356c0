"""docs/upstream.md as a maintainer reads it: the sizes its tables state are the export's
(computed here, so a change that grows the export fails until the docs say so), and its
"Regenerating after a change" blocks run as written, in order, against checkouts laid out
as the toolkits' (VLMEvalKit's own files from the installed ms-vlmeval)."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from splice_eval.export.command import files_for
from tests.splice_eval.export.test_command import DATASET
from tests.support.paths import REPO
from tests.support.toolkit_overlay import installed_package

DOC = REPO / "docs" / "upstream.md"
ROW = re.compile(r"^\| `(?P<path>[^`]+)` \| (?P<size>[^|]+?) \|", re.M)


def kilobytes(n: int) -> str:
    """A size as the docs write it: 0.1 k steps below 10 k, whole k above."""
    return f"{n / 1000:.1f} k" if n < 10_000 else f"{round(n / 1000)} k"


def expand(pattern: str) -> list[str]:
    """``a_{x,y}.yaml`` -> ``a_x.yaml``, ``a_y.yaml`` (the docs' shorthand)."""
    parts = re.split(r"\{([^}]*)\}", pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_docs_sizes_are_the_exports():
    text = DOC.read_text(encoding="utf-8")
    for title, toolkit in (("lmms-eval", "lmms-eval"), ("VLMEvalKit", "vlmevalkit")):
        sizes = {f.path: len(f.text.encode("utf-8")) for f in files_for(toolkit, DATASET)}
        rows = ROW.findall(section(text, title))
        assert rows, title
        named = set()
        for pattern, stated in rows:
            if pattern.endswith("/"):
                inside = [p for p in sizes if p.startswith(pattern)]
                named |= set(inside)
                want = f"{kilobytes(sum(sizes[p] for p in inside))} in {len(inside)} files"
                assert stated == want, (pattern, stated, want)
                continue
            paths = expand(pattern)
            named |= set(paths)
            assert set(paths) <= set(sizes), (pattern, sorted(set(paths) - set(sizes)))
            got = {kilobytes(sizes[p]) for p in paths}
            want = f"{got.pop()}{' each' if len(paths) > 1 else ''}" if len(got) == 1 else got
            assert stated == want, (pattern, stated, want)
        assert named == set(sizes), sorted(set(sizes) - named)  # every file has its row


def regenerating_blocks(text: str) -> list[str]:
    """The bash blocks under every "Regenerating after a change" heading."""
    blocks = []
    for part in text.split("### Regenerating after a change")[1:]:
        blocks.append(re.search(r"```bash\n(.*?)```", part, re.S).group(1))
    return blocks


def test_the_regenerating_blocks_run_as_written(torch_env, tmp_path):
    blocks = regenerating_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == 2
    work = tmp_path / "splice-benchmark"  # where the docs' commands run: the clone
    work.mkdir()
    (tmp_path / "lmms-eval").mkdir()
    vlmeval = installed_package(torch_env, "vlmeval")
    for rel in (
        "dataset/__init__.py",
        "dataset/video_dataset_config.py",
        "vlm/qwen2_vl/model.py",
    ):
        target = tmp_path / "VLMEvalKit" / "vlmeval" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(vlmeval / rel, target)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    for block in blocks:
        done = subprocess.run(
            ["bash", "-e", "-c", block], cwd=work, capture_output=True, text=True, env=env,
            timeout=1800,
        )  # fmt: skip
        assert done.returncode == 0, (block, done.stdout[-2000:], done.stderr[-2000:])
        assert "are current" in done.stdout, done.stdout
    config = (tmp_path / "VLMEvalKit/vlmeval/dataset/video_dataset_config.py").read_text()
    assert "partial(SPLICE, dataset='SPLICE_video_1fps')" in config
    model = (tmp_path / "VLMEvalKit/vlmeval/vlm/qwen2_vl/model.py").read_text()
    assert "return_video_metadata=True" in model
    assert not list(work.iterdir())  # nothing written into the clone
