"""The repository README.md is the card of the full build: rendered, never hand-edited."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import DatasetCard

from splice_build.readme import render_readme
from splice_dataset import CONFIGS, DEFAULT_CONFIG

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_is_rendered_from_the_card_template(coin_json_path: Path) -> None:
    assert README.read_text("utf-8") == render_readme(coin_json_path), (
        "README.md is stale: run `make readme`"
    )


def test_readme_yaml_names_every_config_and_the_two_commands() -> None:
    text = README.read_text("utf-8")
    data = DatasetCard(text).data.to_dict()
    configs = {c["config_name"]: c for c in data["configs"]}
    assert set(configs) == set(CONFIGS)
    assert configs[DEFAULT_CONFIG].get("default") is True
    assert data["license"] == "cc-by-nc-4.0"
    assert "make demo" in text and "make test" in text
