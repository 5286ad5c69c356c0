"""Baselines: the answer rules on hand-made inputs, every baseline on the demo build, scored
with the metric, and the taxonomy prior on the real COIN annotation file."""

from __future__ import annotations

import json
import math

import evaluate
import numpy as np
import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_build.stages import shuffle, taxonomy
from splice_eval.builddata import iter_rows, read_meta
from splice_eval.predictions import read_predictions
from splice_eval.run import prompts
from splice_eval.scoring import baselines
from splice_metric.splice_metric import parse_order, random_baseline
from tests.support.paths import REPO

# --- answer rules ---------------------------------------------------------------------


def test_random_order_is_a_seeded_permutation():
    a = baselines.random_order(0, "vid", 6)
    assert sorted(a) == [1, 2, 3, 4, 5, 6]
    assert a == baselines.random_order(0, "vid", 6)
    # different seeds / videos give different orders at least sometimes
    others = {tuple(baselines.random_order(s, "vid", 6)) for s in range(20)}
    assert len(others) > 10


def test_random_order_is_uniform_enough():
    counts = {}
    for s in range(3000):
        key = tuple(baselines.random_order(s, "v", 3))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    assert all(400 < c < 600 for c in counts.values()), counts


def test_identity_and_answer_text_roundtrip():
    assert baselines.identity_order(4) == [1, 2, 3, 4]
    text = prompts.answer_text([3, 1, 2])
    assert text == "<order>Video 3, Video 1, Video 2</order>"
    assert parse_order(text) == [3, 1, 2]


def test_taxonomy_prior_recovers_the_taxonomy_order():
    task = taxonomy.load().task("MakeOrangeJuice")
    labels = [s.label for s in task.steps]
    # shown shuffled: Video 1 = step 2, Video 2 = step 0, Video 3 = step 1
    captions = [labels[2], labels[0], labels[1]]
    assert baselines.taxonomy_prior_order("MakeOrangeJuice", captions) == [2, 3, 1]
    # an unknown caption goes last, ties keep label order
    assert baselines.taxonomy_prior_order("MakeOrangeJuice", ["??", labels[0], labels[0]]) == [
        2,
        3,
        1,
    ]
    with pytest.raises(ValueError, match="NoSuchTask"):
        baselines.taxonomy_prior_order("NoSuchTask", ["x"])


def test_colour_histogram_is_normalised_and_separates_colours():
    red = np.zeros((8, 8, 3), np.uint8)
    red[..., 0] = 250
    blue = np.zeros((8, 8, 3), np.uint8)
    blue[..., 2] = 250
    hr, hb = baselines.colour_histogram(red), baselines.colour_histogram(blue)
    assert hr.shape == (baselines.HIST_BINS**3,)
    assert math.isclose(hr.sum(), 1.0) and math.isclose(hb.sum(), 1.0)
    assert np.minimum(hr, hb).sum() == 0
    assert np.minimum(hr, hr).sum() == pytest.approx(1.0)


def _onehot(i: int, size: int = 10) -> np.ndarray:
    h = np.zeros(size)
    h[i] = 1.0
    return h


def test_chain_follows_last_to_first_similarity():
    # Chronological clips c0..c3 where c_k ends like c_{k+1} starts; shown as labels
    # Video 1 = c2, Video 2 = c0, Video 3 = c3, Video 4 = c1.
    shown = [2, 0, 3, 1]
    first = [_onehot(c) for c in shown]
    last = [_onehot(c + 1) for c in shown]
    assert baselines.chain_order(first, last) == [2, 4, 1, 3]


def test_chain_start_is_the_clip_nothing_leads_to():
    # Clip 2's first frame resembles nobody's last frame: the chain starts there.
    first = [_onehot(0), _onehot(9), _onehot(1)]
    last = [_onehot(1), _onehot(0), _onehot(5)]
    order = baselines.chain_order(first, last)
    assert order[0] == 2
    assert sorted(order) == [1, 2, 3]
    assert baselines.chain_order([_onehot(0)], [_onehot(0)]) == [1]


def test_unknown_baseline_and_wrong_config_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown baseline"):
        list(baselines.run_baseline("oracle", tmp_path, "text"))
    with pytest.raises(ValueError, match="text only|answers configs"):
        list(baselines.run_baseline("taxonomy-prior", tmp_path, "video"))
    with pytest.raises(ValueError, match="answers configs"):
        list(baselines.run_baseline("visual-similarity", tmp_path, "text"))


# --- the taxonomy prior on the real COIN annotation file ------------------------------


def test_taxonomy_prior_on_real_coin_annotations(coin_json_path, capsys):
    database = json.loads(coin_json_path.read_text("utf-8"))["database"]
    cases = baselines.taxonomy_prior_on_coin(database, seed=0)
    eligible = [
        vid
        for vid, e in database.items()
        if schema.MIN_CLIPS <= len(e["annotation"]) <= schema.MAX_CLIPS
    ]
    # every 2..7-step entry that ingest accepts is scored (ingest may reject a few)
    assert 0.98 * len(eligible) <= len(cases) <= len(eligible)
    for c in cases[:200]:
        entry = database[c.video_id]
        perm = shuffle.permutation(0, c.video_id, c.num_clips)
        # the reference is the build's: chronological step i is shown as label k with perm[k-1]=i
        assert [perm[k - 1] for k in c.reference] == list(range(c.num_clips))
        assert sorted(c.prediction) == list(range(1, c.num_clips + 1))
        assert len(entry["annotation"]) == c.num_clips

    scores = baselines.score_cases(cases)
    print("\nTaxonomy prior on", coin_json_path.name)
    print(baselines.markdown_prior_table(scores))
    assert "Taxonomy prior" in capsys.readouterr().out
    overall = scores["all"]
    assert overall["videos"] == len(cases)
    assert sum(s["videos"] for k, s in scores.items() if k != "all") == len(cases)
    # binary accuracy cross-checked by plain counting
    exact = sum(c.prediction == c.reference for c in cases) / len(cases)
    assert overall["binary_accuracy"] == pytest.approx(exact)
    rnd = random_baseline([c.num_clips for c in cases])
    # The prior solves far more than chance: the text config is largely solvable by it.
    assert overall["binary_accuracy"] > 2.5 * rnd["binary_accuracy"]
    assert overall["hamming_accuracy"] > rnd["hamming_accuracy"] + 0.3
    assert overall["edit_distance"] < rnd["edit_distance"]
    # and, as for models, it gets worse with more clips
    per_n = [scores[str(n)]["binary_accuracy"] for n in range(2, 8)]
    assert per_n == sorted(per_n, reverse=True)


def test_taxonomy_prior_cli_on_coin(coin_json_path, tmp_path, capsys):
    out = tmp_path / "prior.jsonl"
    code = splice_main(
        ["baseline", "taxonomy-prior", "--coin", str(coin_json_path), "--out", str(out)]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "| all |" in text and "| 7 |" in text
    preds = read_predictions(out)
    assert len(preds) > 9000
    p = preds[0]
    assert p.model == "taxonomy-prior" and p.config == "text"
    assert parse_order(p.raw_output) == p.order
    assert sorted(p.extra["reference"]) == sorted(p.order)


# --- every baseline on the demo build -------------------------------------------------


@pytest.mark.parametrize(
    "name,config",
    [(name, config) for name in baselines.NAMES for config in baselines.CONFIGS_OF[name]],
)
def test_baseline_on_demo_build_is_scored(demo_build, tmp_path, name, config):
    out = tmp_path / f"{name}-{config}.jsonl"
    args = ["baseline", name, "--data", str(demo_build), "--config", config, "--out", str(out)]
    assert splice_main(args) == 0
    preds = read_predictions(out)
    meta = read_meta(demo_build)
    assert sorted(p.video_id for p in preds) == sorted(meta)
    for p in preds:
        assert p.model == name and p.config == config
        assert parse_order(p.raw_output) == p.order
        assert sorted(p.order) == list(range(1, meta[p.video_id].num_clips + 1))

    metric = evaluate.load(str(REPO / "splice_metric"))
    refs = [list(meta[p.video_id].order) for p in preds]
    result = metric.compute(predictions=[p.order for p in preds], references=refs)
    assert result["invalid_rate"] == 0.0
    assert result["count"] == len(meta)
    if name == "identity":
        assert all(p.order == list(range(1, len(p.order) + 1)) for p in preds)
    if name == "random":
        again = tmp_path / "again.jsonl"
        assert splice_main([*args[:-1], str(again)]) == 0
        assert [p.order for p in read_predictions(again)] == [p.order for p in preds]
    if name == "taxonomy-prior":
        rows = iter_rows(demo_build, config, [schema.VIDEO_ID, schema.TASK, schema.CAPTIONS])
        expected = {
            r[schema.VIDEO_ID]: baselines.taxonomy_prior_order(r[schema.TASK], r[schema.CAPTIONS])
            for r in rows
        }
        assert {p.video_id: p.order for p in preds} == expected
        # the demo's real COIN steps: the prior beats random orders here too
        rnd = random_baseline([len(r) for r in refs])
        assert result["binary_accuracy"] > rnd["binary_accuracy"]


def test_baseline_refuses_to_overwrite_its_out_unless_told(demo_build, tmp_path, capsys):
    """Issue 41 wall 8: ``splice baseline --out FILE`` replaced an existing file without a
    word (a model's answers, say). Refused in one line, the file untouched; ``--overwrite``
    replaces it."""
    from splice_build.cli import main

    out = tmp_path / "answers.jsonl"
    out.write_text("a model's answers\n")
    argv = ["baseline", "random", "--data", str(demo_build), "--config", "text", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"splice baseline: --out {out}: exists; pass --overwrite to replace it"
    assert out.read_text() == "a model's answers\n"
    assert main([*argv, "--overwrite"]) == 0
    assert out.read_text() != "a model's answers\n"
