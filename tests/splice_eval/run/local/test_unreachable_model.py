"""A Hub model id that cannot be reached is one line at once: before `datasets` (the build's
rows) and torch (the backend) are imported, which took 18-20 s (issue 49 section 4)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

HEAVY = re.compile(r"^import time:.*\|\s+(torch|datasets|transformers)$", re.M)


def test_an_offline_model_id_is_refused_before_the_heavy_imports(demo_build, tmp_path):
    env = os.environ | {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, "-X", "importtime", "-m", "splice_build.cli", "run"]
    argv += ["--backend", "transformers", "--model", "nobody/no-such-model", "--data"]
    argv += [str(demo_build), "--config", "video_text", "--out", str(tmp_path / "p.jsonl")]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert done.returncode == 2 and len(said) == 1, done.stderr[-2000:]
    assert said[0].startswith("splice run: --model nobody/no-such-model: HF_HUB_OFFLINE")
    assert not HEAVY.findall(done.stderr), HEAVY.findall(done.stderr)
    assert not (tmp_path / "p.jsonl").exists()
