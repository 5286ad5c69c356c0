"""Helpers for tests that run the pipeline on subsets of the demo's real annotations."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from splice_build.demo import demo_annotations_path
from splice_build.pipeline import BuildConfig


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def subset_annotations(tmp: Path, ids: list[str], name: str = "coin.json") -> Path:
    full = json.loads(demo_annotations_path().read_text("utf-8"))["database"]
    path = tmp / name
    path.write_text(json.dumps({"database": {i: full[i] for i in ids}}), "utf-8")
    return path


def config(annotations: Path, sources: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(
        annotations=annotations, videos=sources, out=out, progress=False, workers=1, **kw
    )
