"""A COIN build from the same inputs keeps its ``build_id`` and its shard bytes now that COIN
is one adapter among several (issue 48). The expected values were computed by the demo build
(`splice demo`'s: bundled COIN entries, rendered stand-ins, seed 0) of the code before the
adapters existed (commit 8f3597b); the same av/pyarrow give the same bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from splice_build.output.card_reader import read_card

BUILD_ID = "a39b79577f22f333897a96793ee652f4145800ec01bdbfd0865c98df5976f14c"
SHARDS = {
    "text/test-00000-of-00001.parquet": (
        "4cd2a3d547195d3ced308d732f35bcfc5422dbaa63eb773f38f5dfc50925e14f"
    ),
    "text_choice/test-00000-of-00001.parquet": (
        "0d9a665ba3f1a1e837f47ed48c1558c7e9e7945fd53896ca4c661e9e2097e34d"
    ),
    "text_pairwise/test-00000-of-00001.parquet": (
        "4030a00e0cd0a7661e4c5aa3377af6d09f2878cdfacf76e03c0f609e3e5a0f26"
    ),
    "video/test-00000-of-00001.parquet": (
        "871ee327c978b6df92a8aac20d61505df51af3723c2e24f8327452676dfbfb01"
    ),
    "video_text/test-00000-of-00001.parquet": (
        "b3f3445ecf94ecc45691c7e0764fb2888cb9e4d9e8b018fda4a1525d0b8463f3"
    ),
}


def test_coin_build_keeps_its_build_id_and_shard_bytes(demo_build: Path):
    card = read_card(demo_build)
    assert card.source == "coin"
    assert card.splice_build["source"]["name"] == "coin"  # named, yet not in the identity
    assert card.build_id == BUILD_ID
    found = {
        p.relative_to(demo_build).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(demo_build.rglob("*.parquet"))
    }
    assert found == SHARDS


def test_the_coin_card_names_its_source_licence_and_citation(demo_build: Path):
    text = read_card(demo_build).text
    assert "- **Source:** COIN (`--source coin`, adapter version 1)" in text
    assert "- **Source licence:** Creative Commons Attribution-NonCommercial 4.0" in text
    assert "- **Source rules:** min_step_seconds=0.0, repeated_steps=keep" in text


def test_the_repeat_rule_is_available_on_coin_and_off_by_default():
    from splice_build.sources import registry
    from splice_build.sources.base import SourceOptions
    from splice_build.sources.rules import skip_counts
    from splice_build.stages.ingest import BUNDLED_ANNOTATIONS

    published = registry.load("coin", BUNDLED_ANNOTATIONS)
    merged = registry.load("coin", BUNDLED_ANNOTATIONS, SourceOptions(repeated_steps="merge"))
    assert "repeated-step" not in skip_counts(published.skips)
    assert any(len({s.label for s in e.steps}) < e.num_steps for e in published.entries)
    skipped = skip_counts(merged.skips)["repeated-step"]
    assert 0 < skipped and len(merged.entries) == len(published.entries) - skipped
    assert all(len({s.label for s in e.steps}) == e.num_steps for e in merged.entries)
