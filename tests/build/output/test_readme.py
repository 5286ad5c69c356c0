"""The repository README.md is the card of the full build: rendered, never hand-edited. The
manual is in docs/, one file per topic, linked from the README's "Using this repository"."""

from __future__ import annotations

import os
import re
from pathlib import Path

from huggingface_hub import DatasetCard

from splice_build.output.readme import render_readme
from splice_dataset import DEFAULT_BUILD_DIR, DEFAULT_CONFIG, WRITTEN_CONFIGS
from tests.support.paths import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
# The dataset card's sections, in the order of `datasets`' card template (issue 33).
CARD_SECTIONS = (
    "## Configs",
    "### Fields",
    "## Load",
    "## Decode",
    "## Score",
    "## Statistics of this build",
    "## Provenance",
    "## Dataset Creation",
    "### Curation rationale",
    "### Source data",
    "### Annotations",
    "## Personal and Sensitive Information",
    "## Considerations for Using the Data",
    "### Social impact",
    "### Discussion of biases",
    "### Other known limitations",
    "## Licensing Information",
    "## Citation",
)


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


def test_readme_is_the_card_and_points_to_the_manual() -> None:
    """The README is the dataset card, its sections in the card's order with one Load, plus
    the quick start and "Using this repository", which links every manual page in docs/."""
    text = README.read_text("utf-8")
    headings = re.findall(r"^#{2,3} .+$", text, re.M)
    assert headings == ["## Quick start", "## Using this repository", *CARD_SECTIONS]
    assert headings.count("## Load") == 1
    manual = {p.name for p in DOCS.glob("*.md")} - {"readme_intro.md"}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", text))
    assert manual == linked, manual ^ linked
    assert len(text.splitlines()) < 500  # the card; the manual is in docs/


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_of_the_readme_and_the_manual_resolve() -> None:
    """Every relative link of README.md and docs/*.md names a file that exists, and its
    #anchor a heading of that file: moving the manual into docs/ broke no link."""
    for doc in (README, *sorted(DOCS.glob("*.md"))):
        if doc.name == "readme_intro.md":
            continue  # rendered into README.md, whose links are checked
        text = doc.read_text("utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.S)):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            linked = (doc.parent / path).resolve() if path else doc
            assert linked.exists(), f"{doc.name}: no {target}"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", linked.read_text("utf-8"), re.M)
                assert anchor in {_slug(h) for h in headings}, f"{doc.name}: no #{anchor} in {path}"


def test_loading_doc_python_example_runs(demo_build: Path, tmp_path: Path, monkeypatch) -> None:
    """docs/loading.md's load/decode/prompt/score example, run as written from a folder that,
    like the repository root after `make demo`, holds ./splice-data and ./splice_metric."""
    text = (DOCS / "loading.md").read_text("utf-8")
    section = text.split("## Load, decode, prompt, score", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / DEFAULT_BUILD_DIR).symlink_to(demo_build, target_is_directory=True)
    (tmp_path / "splice_metric").symlink_to(README.parent / "splice_metric")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = code.replace("path/to/splice", DEFAULT_BUILD_DIR)  # the documented placeholder
    exec(compile(code, "docs/loading.md", "exec"), namespace)
    num_clips = namespace["row"]["num_clips"]
    assert namespace["order"] == list(range(num_clips, 0, -1))
    assert namespace["result"]["invalid_rate"] == 0.0
    assert namespace["frames"].ndim == 4 and namespace["frames"].shape[-1] == 3
    row = namespace["row"]
    assert namespace["prompt"].labels == tuple(f"Video {k}" for k in range(1, row["num_clips"] + 1))


def test_make_demo_and_the_readme_say_where_the_splice_command_lives() -> None:
    """Issue 41 wall 1: after `make demo`, `splice` was "command not found" (it lives in
    .venv) and nothing said so. `make demo` ends with the two ways in, and the README's quick
    start shows them. (`make -n`: what the target runs, without building the demo again.)"""
    import subprocess

    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "demo", "VENV=.venv"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        # not the outer `make test`'s flags (under it, make -n says "Leaving directory")
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")},
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("echo") and "splice demo" not in last, last
    for way in (".venv/bin/splice --help", "source .venv/bin/activate"):
        assert way in last, last
        assert way in README.read_text("utf-8"), way
