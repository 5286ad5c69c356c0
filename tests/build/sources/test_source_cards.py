"""A non-COIN build's card is its source's from top to bottom (issue 48, "The card"): the
YAML header, source data, biases and limitations, licence and citation are the source's,
and COIN's words, licence and figures (its counts, the paper's curated build, the
taxonomy-prior 0.625) appear on a COIN card only. Over the session's one CrossTask, YouCook2
and Goal-Step builds (`source_builds.build_source`); `splice validate` still passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from splice_build.output.card_reader import read_card
from splice_build.sources import registry
from tests.build.sources.test_crosstask import write_release as write_crosstask
from tests.build.sources.test_goalstep import write_file as write_goalstep
from tests.build.sources.test_youcook2 import write_with_test as write_youcook2
from tests.support.source_builds import build_source, splice

WRITERS = {"crosstask": write_crosstask, "youcook2": write_youcook2, "goalstep": write_goalstep}
# COIN's facts and words as COIN's card states them: none belongs on another source's card
COIN_ONLY = (
    "COIN (Tang et al., 2019)",
    "11,827",
    "10,070",
    "9,458",
    "3,381",
    "11,423",
    "binary accuracy 0.625",
    "human binary accuracy is about 0.85",
    "tang2019coin",
    "cc-by-nc-4.0",
    "Creative Commons Attribution-NonCommercial",
    "YouTube instructional videos of 180 tasks",
)
# the schema's two COIN columns, which every card's Fields table must name
COIN_COLUMNS = ("`recipe_type`", "`coin_subset`")


@pytest.fixture(scope="module", params=sorted(WRITERS))
def built(request, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = request.param
    return name, Path(build_source(tmp_path_factory, name, WRITERS[name])["out"])


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_a_non_coin_card_holds_no_coin_words_licence_or_figures(built):
    name, out = built
    card = read_card(out)
    assert card.source == name
    for fact in COIN_ONLY:
        assert fact not in card.text, fact
    # COIN is named only where the schema's COIN-only columns are
    coin_lines = [line for line in card.text.splitlines() if "COIN" in line or "coin" in line]
    assert all(any(c in line for c in COIN_COLUMNS) for line in coin_lines), coin_lines
    source = registry.card(name)
    assert card.data["license"] == source.license
    assert "coin" not in card.data["tags"] and name in card.data["tags"]
    assert card.data["source_datasets"] == [source.title]
    assert source.title in card.data["pretty_name"]
    assert card.data["task_categories"] == ["video-text-to-text"]


def test_a_non_coin_card_gives_its_sources_licence_and_citation(built):
    name, out = built
    text = read_card(out).text
    source = registry.card(name)
    licence = _section(text, "Licensing Information")
    assert source.license_note in licence and source.videos in licence
    citation = _section(text, "Citation")
    assert "@misc{ballout2025splice," in citation and source.citation in citation
    assert source.title in _section(text, "Dataset Creation")
    assert source.title in _section(text, "Considerations for Using the Data")
    if name == "youcook2":
        assert "unclear" in licence and "does not guess" in licence
    if name == "goalstep":
        assert "Ego4D licence" in licence and "local folder" in licence


def test_a_non_coin_card_still_validates(built):
    _, out = built
    code, stdout, stderr = splice("validate", out)
    assert code == 0, stdout + stderr
