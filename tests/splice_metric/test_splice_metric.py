"""The SPLICE metric: loading through `evaluate`, hand-worked values, the paper's random
baseline, properties on random permutations, robust input handling and every error."""

from __future__ import annotations

import doctest
import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import splice_metric
import splice_metric.splice_metric as module
from splice_metric import METRICS, expected_random, order_parser, random_baseline, score
from tests.support.paths import REPO

METRIC_DIR = REPO / "splice_metric"
TABLE1 = {2: 1020, 3: 1026, 4: 734, 5: 333, 6: 172, 7: 96}


def means(result: dict) -> dict[str, float]:
    return {m: result[m] for m in METRICS}


# --- an independent oracle: the textbook definitions, one example at a time ---------------


def oracle(pred: list, ref: list[int]) -> dict[str, float]:
    n = len(ref)
    lcs = [[0] * (len(pred) + 1) for _ in range(n + 1)]
    dist = [[i + j if i * j == 0 else 0 for j in range(len(pred) + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, len(pred) + 1):
            if ref[i - 1] == pred[j - 1]:
                lcs[i][j] = lcs[i - 1][j - 1] + 1
                dist[i][j] = dist[i - 1][j - 1]
            else:
                lcs[i][j] = max(lcs[i - 1][j], lcs[i][j - 1])
                dist[i][j] = 1 + min(dist[i - 1][j], dist[i][j - 1], dist[i - 1][j - 1])
    valid = len(pred) == n and sorted(pred) == sorted(ref)
    where = {}
    for j, x in enumerate(pred):
        where.setdefault(x, j)
    conc = disc = 0
    for a, b in itertools.combinations(ref, 2):
        if a in where and b in where:
            conc += where[a] < where[b]
            disc += where[a] > where[b]
    pairs = n * (n - 1) // 2
    return {
        "binary_accuracy": float(list(pred) == list(ref)),
        "hamming_accuracy": sum(p == r for p, r in zip(pred, ref, strict=False)) / n,
        "lcs_ratio": lcs[n][len(pred)] / n,
        "edit_distance": float(dist[n][len(pred)]),
        "kendall_tau": (conc - disc) / pairs if pairs else float(valid),
        "pairwise_accuracy": conc / pairs if pairs else float(valid),
        "invalid_rate": float(not valid),
    }


def oracle_mean(preds: list, refs: list[list[int]]) -> dict[str, float]:
    rows = [oracle(p, r) for p, r in zip(preds, refs, strict=True)]
    return {m: math.fsum(r[m] for r in rows) / len(rows) for m in METRICS}


# --- loading ---------------------------------------------------------------------------------


def test_load_by_bare_name_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    metric = evaluate.load("splice_metric")
    assert metric.name == "splice_metric"
    assert metric.compute(predictions=[[2, 1]], references=[[2, 1]])["binary_accuracy"] == 1.0


def test_load_by_path_and_text_config() -> None:
    metric = evaluate.load(str(METRIC_DIR))
    assert set(metric.features) == {"predictions", "references"}
    text = evaluate.load(str(METRIC_DIR), "text")
    assert text.features["predictions"].dtype == "string"
    result = text.compute(predictions=["<order>Video 2, Video 1</order>"], references=[[2, 1]])
    assert result["binary_accuracy"] == 1.0


def test_load_offline_by_bare_name(tmp_path: Path) -> None:
    code = (
        "import evaluate; m = evaluate.load('splice_metric'); "
        "print(m.compute(predictions=[[1, 3, 2]], references=[[1, 2, 3]])['hamming_accuracy'])"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(1 / 3)


def test_docstring_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the examples load the metric by its bare name
    outcomes = [
        doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in (module, order_parser)
    ]  # the metric's examples and its parser's (a sibling module)
    assert sum(o.attempted for o in outcomes) >= 20
    assert sum(o.failed for o in outcomes) == 0


def test_metric_file_imports_only_what_a_space_has() -> None:
    """The metric and its relatively imported siblings (which evaluate copies beside it and
    the Space uploads) import only what a Space installs."""
    allowed = {"__future__", "numpy", "datasets", "evaluate"} | set(sys.stdlib_module_names)
    files, seen = ["splice_metric.py"], set()
    while files:
        name = files.pop()
        seen.add(name)
        for line in (METRIC_DIR / name).read_text().splitlines():
            if not line.startswith(("import ", "from ")):
                continue
            target = line.split()[1]
            if target.startswith("."):  # a sibling: it must be there, and is checked too
                sibling = target[1:] + ".py"
                assert (METRIC_DIR / sibling).is_file(), line
                files += [sibling] if sibling not in seen else []
            else:
                assert target.split(".")[0] in allowed, line
    # every module the parser is made of, each imported by the script itself: evaluate
    # copies a script's relative imports, not theirs
    assert seen == set(splice_metric._SCORING_FILES)
    script = (METRIC_DIR / "splice_metric.py").read_text()
    assert all(f"from .{name[:-3]} import" in script for name in seen - {"splice_metric.py"})


def test_package_reexports_the_module() -> None:
    assert splice_metric.score is module.score
    assert splice_metric.parse_order is module.parse_order


# --- hand-worked examples --------------------------------------------------------------------


def test_hand_worked_three_clips() -> None:
    # reference 1 2 3 (clip 1 first); prediction 2 1 3
    r = score([[2, 1, 3]], [[1, 2, 3]])
    assert r["binary_accuracy"] == 0.0
    assert r["hamming_accuracy"] == pytest.approx(1 / 3)  # only clip 3 in place
    assert r["lcs_ratio"] == pytest.approx(2 / 3)  # "1 3" or "2 3"
    assert r["edit_distance"] == 2.0  # two substitutions
    assert r["pairwise_accuracy"] == pytest.approx(2 / 3)  # (1,3), (2,3) right; (1,2) wrong
    assert r["kendall_tau"] == pytest.approx(1 / 3)  # (2 - 1) / 3
    assert r["invalid_rate"] == 0.0


def test_hand_worked_rotation_and_label_space() -> None:
    # labels need not be 1..n: reference [30, 10, 20, 40], prediction rotated by one
    r = score([[10, 20, 40, 30]], [[30, 10, 20, 40]])
    assert r["hamming_accuracy"] == 0.0
    assert r["lcs_ratio"] == 0.75  # 10 20 40
    assert r["edit_distance"] == 2.0  # delete 30 in front, insert it at the end
    assert r["pairwise_accuracy"] == 0.5  # the 3 pairs with 30 are wrong
    assert r["kendall_tau"] == 0.0
    assert r["binary_accuracy"] == 0.0


def test_means_over_examples_and_breakdown_by_clip_count() -> None:
    r = score([[1, 2], [2, 1], [3, 1, 2]], [[1, 2], [1, 2], [1, 2, 3]])
    assert r["count"] == 3
    assert r["binary_accuracy"] == pytest.approx(1 / 3)
    assert r["by_num_clips"][2]["count"] == 2
    assert r["by_num_clips"][2]["binary_accuracy"] == 0.5
    assert r["by_num_clips"][3]["edit_distance"] == 2.0  # delete 3, insert 3
    assert r["by_num_clips"][3]["kendall_tau"] == pytest.approx(-1 / 3)


def test_groups_breakdown() -> None:
    r = score(
        [[1, 2], [2, 1], [1, 2, 3]],
        [[1, 2], [1, 2], [1, 2, 3]],
        groups=["sports", "cooking", "sports"],
    )
    assert list(r["by_group"]) == ["sports", "cooking"]
    assert r["by_group"]["sports"]["count"] == 2
    assert r["by_group"]["sports"]["binary_accuracy"] == 1.0
    assert r["by_group"]["cooking"]["binary_accuracy"] == 0.0


def test_invalid_predictions_are_scored_as_given() -> None:
    # duplicate: 1 1 2 against 1 2 3
    r = score([[1, 1, 2]], [[1, 2, 3]])
    assert r["invalid_rate"] == 1.0
    assert r["binary_accuracy"] == 0.0
    assert r["hamming_accuracy"] == pytest.approx(1 / 3)
    assert r["lcs_ratio"] == pytest.approx(2 / 3)
    assert r["edit_distance"] == 2.0
    # pairs use first occurrences; a pair with a missing label is neither right nor wrong
    assert r["pairwise_accuracy"] == pytest.approx(1 / 3)
    assert r["kendall_tau"] == pytest.approx(1 / 3)
    # too short, unknown label, empty
    assert means(score([[2]], [[1, 2]])) == oracle([2], [1, 2])
    assert means(score([[9, 1, 2]], [[1, 2, 3]])) == pytest.approx(oracle([9, 1, 2], [1, 2, 3]))
    empty = score([[]], [[1, 2, 3]])
    assert empty["edit_distance"] == 3.0 and empty["kendall_tau"] == 0.0


def test_unparsed_and_invalid_are_counted_apart() -> None:
    """A prediction with no readable order is unparsed (and invalid); a read order that is
    not a permutation is only invalid; both kinds in every cell, the add_batch path too."""
    preds = [[1, 2], None, [1, 1], "no idea", "<order>Video 2, Video 2</order>", [], "2, 1"]
    refs = [[1, 2], [1, 2], [1, 2], [2, 1], [1, 2], [1, 2, 3], [2, 1]]
    r = score(preds, refs, groups=list("aabbccd"), random_baseline=True, confidence_level=0.9)
    assert r["invalid_rate"] == pytest.approx(5 / 7)
    assert r["unparsed_rate"] == pytest.approx(2 / 7)  # None and "no idea"
    assert r["by_num_clips"][2]["unparsed_rate"] == pytest.approx(2 / 6)
    assert r["by_num_clips"][3]["unparsed_rate"] == 0.0  # [] was read: empty, invalid
    assert r["by_group"]["b"]["unparsed_rate"] == 0.5
    assert r["random_baseline"]["unparsed_rate"] == 0.0
    assert r["confidence_intervals"]["unparsed_rate"][0] <= 2 / 7
    # the metrics of an unparsed prediction are those of an empty one
    assert score([None], [[1, 2, 3]])["edit_distance"] == score([[]], [[1, 2, 3]])["edit_distance"]
    texts = ["1, 2", None, "1, 1", "no idea", "<order>Video 2, Video 2</order>", "3", "2, 1"]
    for config, items in (("default", preds), ("text", texts)):
        metric = evaluate.load(str(METRIC_DIR), config)
        metric.add_batch(predictions=items, references=refs)
        got = metric.compute()
        assert got["unparsed_rate"] == pytest.approx(2 / 7), config
        assert got["invalid_rate"] == pytest.approx(5 / 7), config


def test_degenerate_text_is_counted_unparsed_not_raised() -> None:
    """Issue 31, defect 8: a thousand ``[`` raised RecursionError out of ``compute`` and a
    long looping answer took seconds each; both are unparsed rows of a finished score, by the
    loaded metric (evaluate's copy of the folder) as by ``score``."""
    loop = ("Video 1: the person cuts. Answer: Step 2: then: Video 3: wait: " * 600)[:32_768]
    preds = [
        "[" * 1_000,
        "{" * 5_000,
        loop,
        "x: " * 70_000,
        "<order>Video 1: third, Video 2: first, Video 3: second</order>",
    ]
    refs = [[1, 2], [2, 1], [1, 2, 3], [1, 2, 3], [2, 3, 1]]
    r = score(preds, refs)
    assert r["unparsed_rate"] == pytest.approx(4 / 5)
    assert r["binary_accuracy"] == pytest.approx(1 / 5)  # the position form read right
    metric = evaluate.load(str(METRIC_DIR), "text")
    got = metric.compute(predictions=preds, references=refs)
    assert got["unparsed_rate"] == pytest.approx(4 / 5)
    assert got["binary_accuracy"] == pytest.approx(1 / 5)


def test_lmms_process_results_reads_degenerate_answers() -> None:
    """The lmms-eval task's ``process_results`` stopped a whole evaluation on a thousand
    ``[``: each such answer is an unparsed record, and the records score."""
    import importlib.util

    import splice_dataset as schema

    spec = importlib.util.spec_from_file_location(
        "splice_lmms_utils_metric", REPO / "lmms_eval_tasks" / "splice" / "utils.py"
    )
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    answers = ["[" * 1_000, ":" * 32_768, "Video 1: second\nVideo 2: first"]
    records = []
    for i, answer in enumerate(answers):
        doc = {
            schema.VIDEO_ID: f"v{i}",
            schema.CAPTIONS: ["a", "b"],
            schema.ANSWER: {"order": [2, 1]},
        }
        records.append(utils.process_results(doc, [answer])["binary_accuracy"])
    assert [r["order"] for r in records] == [None, None, [2, 1]]
    result = utils.score_records(records)
    assert result["unparsed_rate"] == pytest.approx(2 / 3)
    assert result["binary_accuracy"] == pytest.approx(1 / 3)


def test_one_clip() -> None:
    assert score([[5]], [[5]])["kendall_tau"] == 1.0
    assert score([[4]], [[5]])["pairwise_accuracy"] == 0.0


# --- the paper's random baseline --------------------------------------------------------------


def table1_references() -> list[list[int]]:
    return [list(range(1, n + 1)) for n, count in TABLE1.items() for _ in range(count)]


def test_table5_random_row_from_table1_clip_counts() -> None:
    refs = table1_references()
    assert len(refs) == 3381 and sum(map(len, refs)) == 11423  # Table 1's totals
    rb = score(refs, refs, random_baseline=True)["random_baseline"]
    assert round(rb["binary_accuracy"], 4) == 0.2114
    assert round(rb["hamming_accuracy"], 4) == 0.3385
    assert round(rb["lcs_ratio"], 4) == 0.6554
    assert round(rb["edit_distance"], 4) == 2.0970
    assert rb["kendall_tau"] == 0.0 and rb["pairwise_accuracy"] == 0.5
    assert rb["sampled_metrics"] == []


def test_table5_needs_the_mean_over_videos_not_over_clips() -> None:
    """The paper's numbers are plain means over videos; weighting by clips does not match."""
    rb = random_baseline([len(r) for r in table1_references()])
    by_n = rb["by_num_clips"]
    clips = sum(n * c["count"] for n, c in by_n.items())
    weighted = sum(n * c["count"] * c["hamming_accuracy"] for n, c in by_n.items()) / clips
    assert round(weighted, 4) == 0.2960 != round(rb["hamming_accuracy"], 4)


def test_expected_random_by_enumeration_matches_the_oracle() -> None:
    for n in (2, 3, 4, 5):
        perms = [list(p) for p in itertools.permutations(range(1, n + 1))]
        want = oracle_mean(perms, [list(range(1, n + 1))] * len(perms))
        got = dict(zip(METRICS, expected_random(n)[0], strict=True))
        assert got == pytest.approx(want)
    assert expected_random(3)[0][0] == pytest.approx(1 / 6)


def test_expected_random_beyond_enumeration_is_closed_form_or_marked_sampled() -> None:
    values, sampled = expected_random(12)
    got = dict(zip(METRICS, values, strict=True))
    assert got["binary_accuracy"] == 1 / math.factorial(12)
    assert got["hamming_accuracy"] == 1 / 12
    assert (got["kendall_tau"], got["pairwise_accuracy"]) == (0.0, 0.5)
    assert sampled == ("lcs_ratio", "edit_distance")
    assert 0 < got["lcs_ratio"] < 1 and 0 < got["edit_distance"] <= 12
    r = score([list(range(12))], [list(range(12))], random_baseline=True)
    assert r["random_baseline"]["sampled_metrics"] == ["edit_distance", "lcs_ratio"]


def test_random_baseline_by_group() -> None:
    r = score([[1, 2], [1, 2, 3]], [[1, 2], [1, 2, 3]], groups=["a", "b"], random_baseline=True)
    assert r["random_baseline"]["by_group"]["a"]["binary_accuracy"] == 0.5
    assert r["random_baseline"]["by_group"]["b"]["binary_accuracy"] == pytest.approx(1 / 6)


# --- confidence intervals --------------------------------------------------------------------


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    rng = np.random.default_rng(1)
    refs = [list(range(1, 5))] * 300
    preds = [list(rng.permutation(4) + 1) for _ in refs]
    a = score(preds, refs, confidence_level=0.9, bootstrap_iterations=200, seed=7)
    b = score(preds, refs, confidence_level=0.9, bootstrap_iterations=200, seed=7)
    c = score(preds, refs, confidence_level=0.9, bootstrap_iterations=200, seed=8)
    assert a["confidence_intervals"] == b["confidence_intervals"]
    assert a["confidence_intervals"] != c["confidence_intervals"]
    assert a["confidence_level"] == 0.9 and a["bootstrap_iterations"] == 200
    for m in METRICS:
        lo, hi = a["confidence_intervals"][m]
        assert lo <= a[m] <= hi
    lo, hi = a["confidence_intervals"]["binary_accuracy"]
    assert 0 < lo < hi < 0.2  # 1/24 expected; a real spread
    assert "confidence_intervals" in a["by_num_clips"][4]


def test_bootstrap_wider_at_higher_level() -> None:
    refs = [[1, 2, 3]] * 200
    preds = [[1, 2, 3]] * 100 + [[3, 2, 1]] * 100
    narrow = score(preds, refs, confidence_level=0.5)["confidence_intervals"]["binary_accuracy"]
    wide = score(preds, refs, confidence_level=0.99)["confidence_intervals"]["binary_accuracy"]
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]


# --- properties on random permutations -------------------------------------------------------

permutation_pairs = st.integers(1, 9).flatmap(
    lambda n: st.tuples(st.permutations(list(range(1, n + 1))), st.permutations(range(1, n + 1)))
)


@settings(max_examples=150, deadline=None)
@given(st.lists(permutation_pairs, min_size=1, max_size=12))
def test_identity_is_perfect(pairs: list) -> None:
    refs = [list(r) for r, _ in pairs]
    r = score(refs, refs)
    assert means(r) == {
        "binary_accuracy": 1.0,
        "hamming_accuracy": 1.0,
        "lcs_ratio": 1.0,
        "edit_distance": 0.0,
        "kendall_tau": 1.0,
        "pairwise_accuracy": 1.0,
        "invalid_rate": 0.0,
    }


@settings(max_examples=150, deadline=None)
@given(st.lists(permutation_pairs, min_size=1, max_size=12))
def test_every_metric_in_range_and_equal_to_the_oracle(pairs: list) -> None:
    refs = [list(r) for r, _ in pairs]
    preds = [list(p) for _, p in pairs]
    r = score(preds, refs)
    for m in ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "pairwise_accuracy"):
        assert 0.0 <= r[m] <= 1.0
    assert -1.0 <= r["kendall_tau"] <= 1.0
    assert r["invalid_rate"] == 0.0
    assert 0.0 <= r["edit_distance"] <= max(map(len, refs))
    assert means(r) == pytest.approx(oracle_mean(preds, refs))


@settings(max_examples=100, deadline=None)
@given(permutation_pairs, st.permutations(list(range(100, 109))), st.integers(-50, 50))
def test_relabelling_the_clips_changes_nothing(pair: tuple, new_names: list, shift: int) -> None:
    ref, pred = list(pair[0]), list(pair[1])
    names = {label: new_names[label - 1] * 3 + shift for label in ref}
    renamed = score([[names[x] for x in pred]], [[names[x] for x in ref]])
    assert means(renamed) == pytest.approx(means(score([pred], [ref])))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12))
def test_reversed_order(n: int) -> None:
    ref = list(range(1, n + 1))
    r = score([ref[::-1]], [ref])
    assert r["binary_accuracy"] == 0.0
    assert r["hamming_accuracy"] == pytest.approx((n % 2) / n)  # only an odd middle stays
    assert r["lcs_ratio"] == pytest.approx(1 / n)
    assert r["edit_distance"] == 2 * (n // 2)  # substitute all but an odd middle
    assert r["kendall_tau"] == -1.0
    assert r["pairwise_accuracy"] == 0.0


arbitrary_answers = st.integers(1, 10).flatmap(
    lambda n: st.tuples(
        st.permutations(list(range(1, n + 1))),
        st.lists(st.integers(0, n + 2), max_size=n + 2),
    )
)


@settings(max_examples=200, deadline=None)
@given(st.lists(arbitrary_answers, min_size=1, max_size=15))
def test_any_answer_scores_as_the_oracle(pairs: list) -> None:
    refs = [list(r) for r, _ in pairs]
    preds = [list(p) for _, p in pairs]
    r = score(preds, refs)
    assert means(r) == pytest.approx(oracle_mean(preds, refs))
    for n, cell in r["by_num_clips"].items():
        members = [i for i, ref in enumerate(refs) if len(ref) == n]
        want = oracle_mean([preds[i] for i in members], [refs[i] for i in members])
        assert means(cell) == pytest.approx(want)


def test_many_examples_take_the_table_paths_like_the_oracle() -> None:
    rng = np.random.default_rng(3)
    refs, preds = [], []
    for _ in range(3000):
        n = int(rng.integers(1, 10))
        ref = list(rng.permutation(n) + 1)
        pred = list(rng.permutation(ref)) if rng.random() < 0.8 else list(rng.integers(0, 11, n))
        if rng.random() < 0.1:  # other label spaces take the comparison path
            ref, pred = [x * 7 for x in ref], [x * 7 for x in pred]
        refs.append([int(x) for x in ref])
        preds.append([int(x) for x in pred])
    assert means(score(preds, refs)) == pytest.approx(oracle_mean(preds, refs))


@pytest.mark.parametrize("n", range(2, 8))
def test_every_clip_count_scores_as_the_oracle(n: int) -> None:
    """Each n of SPLICE (2..7) on its own: permutations, exact answers, and reads that are
    too short, too long, repeat a label or hold unknown ones, all against the oracle."""
    rng = np.random.default_rng(n)
    refs, preds = [], []
    for _ in range(400):
        ref = [int(x) for x in rng.permutation(n) + 1]
        kind = rng.integers(4)
        if kind == 0:
            pred = list(ref)
        elif kind == 1:
            pred = [int(x) for x in rng.permutation(ref)]
        else:
            pred = [int(x) for x in rng.integers(0, n + 2, int(rng.integers(0, n + 3)))]
        refs.append(ref)
        preds.append(pred)
    r = score(preds, refs)
    assert means(r) == pytest.approx(oracle_mean(preds, refs))
    assert means(r["by_num_clips"][n]) == pytest.approx(oracle_mean(preds, refs))


# --- robust inputs ---------------------------------------------------------------------------


def test_non_integer_tokens_are_invalid_never_truncated() -> None:
    for junk in (1.5, True, "1", None, [1], {"a": 1}, float("nan")):
        r = score([[junk, 2]], [[1, 2]])
        assert r["invalid_rate"] == 1.0, junk
        assert r["binary_accuracy"] == 0.0, junk
        assert r["hamming_accuracy"] == 0.5, junk  # label 2 is in place; the junk is not 1


def test_integral_floats_and_numpy_values_are_labels() -> None:
    assert score([[2.0, 1.0]], [[2, 1]])["binary_accuracy"] == 1.0
    assert score([np.array([2, 1])], [np.array([2, 1])])["binary_accuracy"] == 1.0
    assert score([[np.int32(2), np.float64(1.0)]], [[2, 1]])["binary_accuracy"] == 1.0
    assert score(np.array([[2, 1], [1, 2]]), np.array([[2, 1], [2, 1]]))["binary_accuracy"] == 0.5
    assert score([np.array([2.5, 1.0])], [[2, 1]])["invalid_rate"] == 1.0


@pytest.mark.parametrize(
    "prediction", [None, 7, "no idea", np.array([[1, 2]]), {1, 2}, b"1,2", {"order": [1, 2]}]
)
def test_unusable_predictions_are_invalid(prediction: object) -> None:
    r = score([prediction, [1, 2]], [[1, 2], [1, 2]])
    assert r["invalid_rate"] == 0.5
    assert r["by_num_clips"][2]["binary_accuracy"] == 0.5


def test_text_predictions_are_parsed_in_either_config() -> None:
    r = score(["<order>Video 2, Video 1</order>", "garbage"], [[2, 1], [1, 2]])
    assert (r["binary_accuracy"], r["invalid_rate"]) == (0.5, 0.5)


def test_arrow_and_numpy_inputs_equal_lists() -> None:
    preds = [[2, 1, 3], [1, 2], [3, 3, 1], [], [4, 1, 2, 3]]
    refs = [[1, 2, 3], [1, 2], [1, 2, 3], [2, 1], [1, 2, 3, 4]]
    want = score(preds, refs, groups=list("ababa"))
    got = score(pa.array(preds), pa.chunked_array([pa.array(refs)]), groups=list("ababa"))
    assert got == want
    nulls = score(pa.array([[1, None], None]), [[1, 2], [1, 2]])
    assert nulls["invalid_rate"] == 1.0 and nulls["hamming_accuracy"] == 0.25


def test_add_batch_keeps_floats_and_matches_compute() -> None:
    preds = [[1.5, 2], [2, 1], None, "<order>1, 2</order>", [1, 2.0]]
    refs = [[1, 2], [2, 1], [1, 2], [1, 2], [1, 2]]
    direct = evaluate.load(str(METRIC_DIR)).compute(predictions=preds, references=refs)
    metric = evaluate.load(str(METRIC_DIR))
    metric.add_batch(predictions=preds[:3], references=refs[:3])
    for p, r in zip(preds[3:], refs[3:], strict=True):
        metric.add(prediction=p, reference=r)
    batched = metric.compute()
    assert batched == direct
    assert direct["invalid_rate"] == 0.4 and direct["binary_accuracy"] == 0.6


def test_text_config_add_batch() -> None:
    metric = evaluate.load(str(METRIC_DIR), "text")
    metric.add_batch(predictions=["<order>2, 1</order>", None], references=[[2, 1], [1, 2]])
    assert metric.compute()["invalid_rate"] == 0.5
    with pytest.raises(ValueError, match="prediction 0: the 'text' config stores strings"):
        metric.add_batch(predictions=[[2, 1]], references=[[2, 1]])


# --- strict mode and errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "problem"),
    [
        ([1, 3, 3], "duplicate label 3; missing label 2"),
        ([1, 3], "length 2 instead of 3; missing label 2"),
        ([1, 2, 9], "unknown label 9; missing label 3"),
        ([1, 2], "length 2 instead of 3; missing label 3"),
        ([1, 2.5, 3], "position 1 holds 2.5, not an integer label; missing label 2"),
        ([1, True, 3], "position 1 holds True, not an integer label; missing label 2"),
        (None, "no prediction (None)"),
        ("no answer", "unparseable text 'no answer'"),
        (7, "got int 7, not a sequence of labels"),
        ([], "empty prediction"),
    ],
)
def test_strict_names_example_and_problem(prediction: object, problem: str) -> None:
    preds = [[1, 2, 3], prediction]
    with pytest.raises(ValueError) as info:
        score(preds, [[1, 2, 3], [1, 2, 3]], strict=True)
    message = str(info.value)
    assert message.startswith("example 1: prediction ")
    assert message.endswith(f"is not a permutation of the reference [1, 2, 3]: {problem}")


def test_strict_passes_valid_predictions_and_add_batch_path() -> None:
    assert score([[2, 1]], [[2, 1]], strict=True)["binary_accuracy"] == 1.0
    metric = evaluate.load(str(METRIC_DIR))
    metric.add_batch(predictions=[[2, 1], [1.5, 2]], references=[[2, 1], [1, 2]])
    with pytest.raises(ValueError, match=r"example 1: prediction \[\?, 2\] .*position 0 holds"):
        metric.compute(strict=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"references": [[1, 2, 2]]}, "reference 0: duplicate label 2"),
        ({"predictions": [[1], [1]], "references": [[1], []]}, "reference 1: empty"),
        ({"references": [[1, 1.5]]}, "reference 0: position 1 holds 1.5, not an int"),
        ({"references": [[1, True]]}, "reference 0: position 1 holds True, not an int"),
        ({"references": [3]}, "reference 0: expected a sequence of clip labels, got int 3"),
        ({"references": [np.zeros((2, 2))]}, r"reference 0: expected .* got shape \(2, 2\)"),
        ({"references": "12"}, "references must be a list of sequences, got str"),
        ({"predictions": "12"}, "predictions must be a list of sequences, got str"),
        ({"predictions": None}, "both predictions and references are required"),
        ({"predictions": [[1, 2], [2, 1]]}, "got 2 predictions for 1 references"),
        ({"groups": ["a", "b"]}, "groups has 2 labels for 1 examples"),
        ({"groups": [None]}, r"groups\[0\] is None; a group label must be hashable"),
        ({"groups": [[1]]}, r"groups\[0\] is \[1\]; a group label must be hashable"),
        ({"groups": "a"}, "groups must be a list with one label per example"),
        ({"confidence_level": 1.5}, "confidence_level must be between 0 and 1, got 1.5"),
        ({"confidence_level": 0.9, "bootstrap_iterations": 0}, "must be at least 1, got 0"),
        ({"bootstrap_iterations": 2.5}, "bootstrap_iterations must be an int, got 2.5"),
    ],
)
def test_errors(kwargs: dict, message: str) -> None:
    args = {"predictions": [[1, 2]], "references": [[1, 2]], **kwargs}
    with pytest.raises(ValueError, match=message):
        score(**args)


def test_reference_errors_name_the_right_example_on_the_fast_path() -> None:
    refs = [[1, 2, 3]] * 5 + [[3, 1, 3]] + [[7, 8, 8]]
    with pytest.raises(ValueError, match="reference 5: duplicate label 3"):
        score(refs, refs)


def test_expected_random_rejects_zero_clips() -> None:
    with pytest.raises(ValueError, match="number of clips must be at least 1, got 0"):
        expected_random(0)
