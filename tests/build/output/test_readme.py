"""The repository README.md is the card of the full build: rendered, never hand-edited."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import DatasetCard

from splice_build.output.readme import render_readme
from splice_dataset import DEFAULT_BUILD_DIR, DEFAULT_CONFIG, WRITTEN_CONFIGS
from tests.support.paths import REPO

README = REPO / "README.md"


def test_readme_is_rendered_from_the_card_template(coin_json_path: Path) -> None:
    assert README.read_text("utf-8") == render_readme(coin_json_path), (
        "README.md is stale: run `make readme`"
    )


def test_readme_yaml_names_every_config_and_the_two_commands() -> None:
    text = README.read_text("utf-8")
    data = DatasetCard(text).data.to_dict()
    configs = {c["config_name"]: c for c in data["configs"]}
    assert set(configs) == set(WRITTEN_CONFIGS)
    assert configs[DEFAULT_CONFIG].get("default") is True
    assert data["license"] == "cc-by-nc-4.0"
    assert "make demo" in text and "make test" in text


def test_readme_python_example_runs(demo_build: Path, tmp_path: Path, monkeypatch) -> None:
    """The README's load/decode/prompt/score example, run as written from a folder that,
    like the repository root after `make demo`, holds ./splice-data and ./splice_metric."""
    text = README.read_text("utf-8")
    section = text.split("## Load, decode, prompt, score", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / DEFAULT_BUILD_DIR).symlink_to(demo_build, target_is_directory=True)
    (tmp_path / "splice_metric").symlink_to(README.parent / "splice_metric")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = code.replace("path/to/splice", DEFAULT_BUILD_DIR)  # the documented placeholder
    exec(compile(code, "README.md", "exec"), namespace)
    num_clips = namespace["row"]["num_clips"]
    assert namespace["order"] == list(range(num_clips, 0, -1))
    assert namespace["result"]["invalid_rate"] == 0.0
    assert namespace["frames"].ndim == 4 and namespace["frames"].shape[-1] == 3
    row = namespace["row"]
    assert namespace["prompt"].labels == tuple(f"Video {k}" for k in range(1, row["num_clips"] + 1))
