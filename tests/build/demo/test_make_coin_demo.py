"""The demo's bundled annotations are real COIN entries, copied verbatim, and fit the demo."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from splice_build.stages import taxonomy
from splice_build.stages.ingest import load_annotations
from splice_dataset import MAX_CLIPS, MIN_CLIPS
from tests.support.paths import REPO

DEMO = resources.files("splice_build").joinpath("demo", "coin_demo.json")
PICKER = REPO / "build" / "demo" / "make_coin_demo.py"


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    return json.loads(DEMO.read_text(encoding="utf-8"))["database"]


@pytest.fixture(scope="module")
def real(coin_json_path: Path) -> dict[str, Any]:
    return json.loads(coin_json_path.read_text(encoding="utf-8"))["database"]


def test_every_entry_is_verbatim_from_the_real_file(
    demo: dict[str, Any], real: dict[str, Any]
) -> None:
    assert demo
    for vid, entry in demo.items():
        assert vid in real, vid
        # same fields, values, types (int vs float) and field order
        assert json.dumps(entry) == json.dumps(real[vid]), vid


def test_demo_covers_every_domain_and_clip_count(demo: dict[str, Any]) -> None:
    tax = taxonomy.load()
    domains = Counter(tax.domain_of(e["class"]) for e in demo.values())
    assert domains == dict.fromkeys(tax.domains, 2)
    counts = Counter(len(e["annotation"]) for e in demo.values())
    assert set(counts) == set(range(MIN_CLIPS, MAX_CLIPS + 1))
    assert all(e["duration"] < 120 for e in demo.values())  # stand-ins render full length
    assert len({e["class"] for e in demo.values()}) == len(demo)


def test_demo_ingests_without_skips(demo: dict[str, Any]) -> None:
    with resources.as_file(DEMO) as path:
        result = load_annotations(path)
    assert result.skips == []
    assert [e.video_id for e in result.entries] == sorted(demo)


def test_picker_reproduces_the_bundled_file(
    demo: dict[str, Any], real: dict[str, Any], tmp_path: Path
) -> None:
    spec = importlib.util.spec_from_file_location("make_coin_demo", PICKER)
    assert spec and spec.loader
    picker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(picker)
    assert json.dumps(picker.pick(real)["database"]) == json.dumps(demo)
