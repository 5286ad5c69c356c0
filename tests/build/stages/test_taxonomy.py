"""The packaged COIN taxonomy against COIN's own taxonomy.xlsx (kept in tests/data/coin)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from splice_build.stages import taxonomy


@pytest.fixture(scope="module")
def tax() -> taxonomy.Taxonomy:
    return taxonomy.load()


@pytest.fixture(scope="module")
def summary(coin_dir: Path) -> list[dict[str, str]]:
    with open(coin_dir / "coin_videos_all11827_summary.csv", newline="") as f:
        return list(csv.DictReader(f))


def _sheet_as_csv(coin_dir: Path, sheet: str) -> str:
    """One sheet of COIN's workbook written as the packaged CSVs were (csv module defaults)."""
    import openpyxl

    book = openpyxl.load_workbook(coin_dir / "taxonomy.xlsx", read_only=True)
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in book[sheet].iter_rows(values_only=True):
        writer.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def test_packaged_csvs_are_the_unchanged_coin_sheets(coin_dir: Path) -> None:
    packaged = resources.files("splice_build").joinpath("data", "taxonomy")
    for name, sheet in (
        (taxonomy.DOMAIN_CSV, "domain_target_mapping"),
        (taxonomy.STEP_CSV, "target_action_mapping"),
    ):
        text = packaged.joinpath(name).read_bytes().decode("utf-8")
        assert text == _sheet_as_csv(coin_dir, sheet), name
    assert packaged.joinpath("COIN_LICENSE.txt").is_file()
    assert "CC BY-NC 4.0" in packaged.joinpath("SOURCES.md").read_text()


def test_sizes_match_coin(tax: taxonomy.Taxonomy) -> None:
    assert len(tax.tasks) == 180
    assert len(tax.domains) == 12
    assert len(tax.steps) == 778
    assert sum(len(t.steps) for t in tax.tasks.values()) == 778
    assert sorted(tax.by_recipe_type) == sorted(t.recipe_type for t in tax.tasks.values())
    assert Counter(t.domain for t in tax.tasks.values())["Gadgets"] == 21


def test_steps_keep_the_sheet_order(tax: taxonomy.Taxonomy, coin_dir: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_sheet_as_csv(coin_dir, "target_action_mapping"))))
    for name, task in tax.tasks.items():
        expected = [
            (int(r["Action Id"]), r["Action Label"]) for r in rows if r["Target Label"] == name
        ]
        assert [(s.step_id, s.label) for s in task.steps] == expected
        assert {int(r["Target Id"]) for r in rows if r["Target Label"] == name} == {
            task.recipe_type
        }
    balance = tax.task("UseAnalyticalBalance")
    assert balance.recipe_type == 0
    assert balance.step_label(65) == "clean inner wall of container"
    assert balance.step_label(587) is None  # a step of ArcWeld
    assert tax.steps[587][0] == "ArcWeld"


def test_every_coin_video_task_domain_and_recipe_type_agree(
    tax: taxonomy.Taxonomy, summary: list[dict[str, str]]
) -> None:
    assert len(summary) == 11827
    for row in summary:
        task = tax.task(row["task"])
        assert (task.name, task.domain, task.recipe_type) == (
            row["task"],
            row["domain"],
            int(row["recipe_type"]),
        ), row["video_id"]
        ids = [int(i) for i in row["step_ids"].split(";") if i]
        assert all(task.step_label(i) is not None for i in ids), row["video_id"]


def test_2019_aliases_resolve_to_current_names(tax: taxonomy.Taxonomy) -> None:
    sources = resources.files("splice_build").joinpath("data", "taxonomy", "SOURCES.md").read_text()
    assert len(taxonomy.TASK_ALIASES) == 3
    for old, new in taxonomy.TASK_ALIASES.items():
        assert f"{old} -> {new}" in sources
        assert old not in tax.tasks and new in tax.tasks
        assert tax.resolve(old) == new
        assert tax.task(old) is tax.task(new)
        assert tax.domain_of(old) == tax.tasks[new].domain
    assert tax.resolve("ArcWeld") == "ArcWeld"


def test_unknown_task_is_named(tax: taxonomy.Taxonomy) -> None:
    with pytest.raises(KeyError, match="MakeTeleporter"):
        tax.task("MakeTeleporter")


def test_tasks_in_domain_partition_the_tasks(tax: taxonomy.Taxonomy) -> None:
    names = [t.name for d in tax.domains for t in tax.tasks_in(d)]
    assert sorted(names) == sorted(tax.tasks)
