"""The results report: adjacency against exact chance, the reasoning-group data file, the
tables and figures (PNG files read back), on hand-made runs and on the demo build."""

from __future__ import annotations

import csv
import itertools
import json
import math
import random

import pytest

from splice_build.cli import main as splice_main
from splice_build.output.card_reader import read_card
from splice_build.stages import taxonomy
from splice_eval.builddata import VideoMeta, read_meta
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.report import figures, report
from splice_eval.scoring.runs import Run
from splice_metric.splice_metric import random_baseline, score
from tests.support.paths import REPO
from tests.support.png_checks import assert_real_png


def _meta(vid: str, order: list[int], domain="Dish", task="MakePizza", duration=50.0):
    return VideoMeta(vid, task, domain, len(order), duration, tuple(order))


# --- first/last adjacency -------------------------------------------------------------


@pytest.mark.parametrize("n", [4, 5, 6])
def test_adjacency_chance_is_exact_over_all_permutations(n):
    """Over every permutation, the adjacency rate is the 2/n the report uses as chance."""
    truth = list(range(1, n + 1))
    perms = [list(p) for p in itertools.permutations(truth)]
    videos = [_meta(f"v{i}", truth) for i in range(len(perms))]
    run = Run({v.video_id: p for v, p in zip(videos, perms, strict=True)}, model="all")
    adj = report.adjacency(run, videos)
    assert adj["adjacent_rate"] == pytest.approx(2 / n)
    assert adj["chance"] == pytest.approx(2 / n)
    assert adj["first_before_last_rate"] == pytest.approx(0.5)


def test_adjacency_counts_only_valid_answers_with_four_or_more_clips():
    videos = [
        _meta("a", [2, 4, 1, 3]),  # first 2, last 3
        _meta("b", [1, 2, 3, 4, 5]),  # first 1, last 5
        _meta("c", [1, 2, 3, 4]),
        _meta("d", [1, 2, 3]),  # too short: ignored
    ]
    orders = [[4, 2, 3, 1], [5, 2, 3, 4, 1], None, [3, 1, 2]]
    adj = report.adjacency(
        Run({v.video_id: o for v, o in zip(videos, orders, strict=True)}), videos
    )
    assert adj["videos"] == 3 and adj["valid"] == 2
    # a: 2 at 1, 3 at 2 -> adjacent, first before last; b: 1 at 4, 5 at 0 -> not adjacent
    assert adj["adjacent_rate"] == pytest.approx(0.5)
    assert adj["first_before_last_rate"] == pytest.approx(0.5)
    assert adj["chance"] == pytest.approx((2 / 4 + 2 / 5 + 2 / 4) / 3)


# --- reasoning groups -----------------------------------------------------------------


def test_reasoning_groups_file_is_grounded_in_taxonomy_and_paper():
    data = json.loads((REPO / "splice_eval" / "data" / "reasoning_groups.json").read_text())
    assert "derived" in data["about"].lower() and "180" in data["about"]
    tax = taxonomy.load()
    with (REPO / "build" / "data" / "taxonomy" / "taxonomy_domain_target_mapping.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == len(tax.tasks) == 180
    groups = {g["name"]: g for g in data["groups"]}
    assert set(groups) == {
        "electrical_change_replace",
        "electrical_other",
        "change_replace",
        "make",
        "everyday",
        "technical",
        "spatial",
    }
    for g in groups.values():
        assert g["table"] in ("Table 3", "Table 4") and g["section"].startswith("7.5")
        assert g["quote"] and g["definition"] and g["rule"] in ("name prefix", "judgement")
        assert g["tasks"] and len(set(g["tasks"])) == len(g["tasks"])
        for t in g["tasks"]:
            assert t in tax.tasks, f"{g['name']}: {t} is not a COIN task"
    cr = set(groups["change_replace"]["tasks"])
    assert cr == {t for t in tax.tasks if t.startswith(("Change", "Replace"))}
    assert set(groups["make"]["tasks"]) == {t for t in tax.tasks if t.startswith("Make")}
    elec = {t.name for t in tax.tasks_in("Electrical Appliance")}
    assert (
        set(groups["electrical_change_replace"]["tasks"]) | set(groups["electrical_other"]["tasks"])
        == elec
    )
    assert set(groups["electrical_change_replace"]["tasks"]) <= cr
    # the paper excludes change/replace from both general-knowledge groups
    assert not (set(groups["everyday"]["tasks"]) | set(groups["technical"]["tasks"])) & cr
    assert not set(groups["everyday"]["tasks"]) & set(groups["technical"]["tasks"])
    # the paper's named examples are where it puts them
    assert {"WashDish", "IronClothes"} <= set(groups["everyday"]["tasks"])
    assert {"DrawBlood", "InstallCeilingFan"} <= set(groups["technical"]["tasks"])
    assert {"PractiseSkiingAerials", "PractisePoleVault", "PractiseWeightLift"} <= set(
        groups["spatial"]["tasks"]
    )
    assert {tax.domain_of(t) for t in groups["spatial"]["tasks"]} == {"Sport"}
    assert len(groups["spatial"]["tasks"]) == 8  # "8 out of its 10 sub-domains"


# --- PNG checks -----------------------------------------------------------------------


# --- a report of hand-made runs -------------------------------------------------------


def _synthetic(num: int = 90, seed: int = 0):
    rng = random.Random(seed)
    domains = ["Dish", "Sport", "Vehicle"]
    tasks = {"Dish": "MakePizza", "Sport": "PractiseSkiingAerials", "Vehicle": "ChangeCarTire"}
    meta = {}
    for i in range(num):
        n = 2 + i % 6
        order = list(range(1, n + 1))
        rng.shuffle(order)
        d = domains[i % 3]
        meta[f"v{i:03d}"] = _meta(f"v{i:03d}", order, d, tasks[d], 10 + 3.3 * i)
    return meta


def test_build_report_numbers_come_from_the_metric(tmp_path):
    meta = _synthetic()
    videos = [meta[v] for v in sorted(meta)]
    truth = [list(v.order) for v in videos]
    rng = random.Random(1)
    guess = [rng.sample(o, len(o)) for o in truth]
    ids = [v.video_id for v in videos]
    runs = [
        Run(dict(zip(ids, truth, strict=True)), model="human", config="video"),
        Run(dict(zip(ids, guess, strict=True)), model="guess", config="video"),
        Run(dict(zip(ids[5:], guess[5:], strict=True)), model="guess", config="text"),  # 5 missing
    ]
    rep = report.build_report(runs, meta)
    human, g_video, g_text = rep["runs"]
    assert human["overall"]["binary_accuracy"]["mean"] == 1.0
    assert human["overall"]["edit_distance"]["mean"] == 0.0
    direct = score(guess, truth)
    assert g_video["overall"]["hamming_accuracy"]["mean"] == pytest.approx(
        direct["hamming_accuracy"]
    )
    lo, hi = (g_video["overall"]["binary_accuracy"][k] for k in ("lo", "hi"))
    assert lo <= g_video["overall"]["binary_accuracy"]["mean"] <= hi
    exact = random_baseline([v.num_clips for v in videos])
    assert rep["random_exact"]["binary_accuracy"] == pytest.approx(exact["binary_accuracy"])
    assert rep["random_by_clips"]["2"] == pytest.approx(0.5)
    assert rep["random_by_clips"]["3"] == pytest.approx(1 / 6)
    # breakdowns add up and carry intervals
    assert sum(r["videos"] for r in g_video["by_domain"]) == len(videos)
    assert sum(r["videos"] for r in g_video["by_duration"]) == len(videos)
    assert [r["key"] for r in g_video["by_clips"]] == [str(n) for n in range(2, 8)]
    for r in g_video["by_domain"]:
        assert r["lo"] <= r["mean"] <= r["hi"]
    # missing predictions are invalid: scored, not dropped
    assert g_text["missing"] == 5 and g_text["invalid"] == 0
    with_missing = score([None] * 5 + guess[5:], truth)
    assert with_missing["invalid_rate"] == pytest.approx(5 / len(videos))
    assert g_text["overall"]["binary_accuracy"]["mean"] == pytest.approx(
        with_missing["binary_accuracy"]
    )
    # reasoning groups: Vehicle videos are ChangeCarTire (change/replace), Sport ones spatial
    groups = {g["group"]: g for g in human["reasoning_groups"]}
    assert groups["change_replace"]["videos"] == 30 and groups["spatial"]["videos"] == 30
    assert groups["make"]["videos"] == 30 and groups["everyday"]["videos"] == 0
    assert groups["spatial"]["binary"] == 1.0
    assert math.isnan(groups["everyday"]["binary"])

    drawn = {"clips": figures.plot_by_clips(rep, tmp_path / "clips.png").name}
    for what in ("domain", "duration"):
        figures.plot_by_key(rep, what, "video", tmp_path / f"{what}.png")
        drawn[f"{what}:video"] = f"{what}.png"
    for name in ("clips.png", "domain.png", "duration.png"):
        assert_real_png(tmp_path / name)
    md = report.render_markdown(rep, drawn, ["x.jsonl"])
    assert "| Random (exact) |" in md and "| human |" in md
    assert "Vision Only Binary | Vision Only Hamming | Text Binary" in md  # Table 2 layout
    assert "Vision Only LCS | Vision Only Edit" in md  # Table 5 layout
    assert "![binary accuracy by number of clips](clips.png)" in md


# --- the report on the demo build -----------------------------------------------------


def test_report_on_demo_build(demo_build, tmp_path):
    files = []
    for name, config in [
        ("random", "video"),
        ("identity", "video"),
        ("visual-similarity", "video"),
        ("random", "video_text"),
        ("taxonomy-prior", "text"),
    ]:
        out = tmp_path / f"{name}-{config}.jsonl"
        cmd = ["baseline", name, "--data", str(demo_build), "--config", config, "--out", str(out)]
        assert splice_main(cmd) == 0
        files.append(out)
    meta = read_meta(demo_build)
    human = tmp_path / "human.jsonl"
    vids = sorted(meta)
    write_predictions(
        human,
        [
            Prediction(v, "video", "human", "x", list(meta[v].order) if i else None)
            for i, v in enumerate(vids)
        ],
    )
    files.append(human)
    out = tmp_path / "report"
    assert (
        splice_main(["report", *map(str, files), "--data", str(demo_build), "--out", str(out)]) == 0
    )

    md = (out / "report.md").read_text()
    data = json.loads((out / "report.json").read_text())
    assert data["videos"] == len(meta)
    pngs = sorted(out.glob("*.png"))
    names = {p.name for p in pngs}
    assert {
        "accuracy_by_clips.png",
        "accuracy_by_domain_video.png",
        "accuracy_by_duration_video.png",
        "accuracy_by_domain_text.png",
        "accuracy_by_domain_video_text.png",
    } <= names
    for p in pngs:
        assert_real_png(p)
        assert f"]({p.name})" in md
    runs = {(r["model"], r["config"]): r for r in data["runs"]}
    assert runs[("human", "video")]["unparsed"] == 1 and runs[("human", "video")]["invalid"] == 0
    assert runs[("human", "video")]["overall"]["binary_accuracy"]["mean"] == pytest.approx(
        (len(vids) - 1) / len(vids)
    )
    # how each file's answers were produced: the baselines' metadata lines, or none
    assert "## How the answers were produced" in md
    assert (
        "| random | video | `random-video.jsonl` | producer splice baseline; model random; "
        f"config video; build_id {read_card(demo_build).build_id[:16]}; seed 0; "
        "splice_version "
    ) in md
    assert "| human | video | `human.jsonl` | no metadata line" in md
    (source,) = runs[("identity", "video")]["sources"]
    assert source["metadata"]["producer"] == "splice baseline"
    assert source["metadata"]["model"] == "identity" and "seed" not in source["metadata"]
    for section in ("Table 2", "Table 5", "Fig. 2", "Section 7.5", "Tables 3-4"):
        assert section in md
    assert "| taxonomy-prior | text |" in md
