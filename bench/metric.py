"""Speed of the SPLICE metric: `splice_metric.score` against a plain per-example Python
implementation on the same 1M predictions, and the cost of `evaluate`'s `compute`.

Targets (issue 2): all metrics + per-n breakdown + random baseline on 1M predictions
(n = 2..7, Table 1's mix) in under 2 s and at least 50x faster than the plain version;
`compute` on 100k predictions close to the bare scoring time.

Run: .venv/bin/python bench/metric.py [--examples 1000000] [--compute-examples 100000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from splice_metric import METRICS, score  # noqa: E402

TABLE1 = {2: 1020, 3: 1026, 4: 734, 5: 333, 6: 172, 7: 96}


# --- the baseline: one example at a time, textbook dynamic programmes ---------------------


def _lcs(a: list[int], b: list[int]) -> int:
    c = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            c[i][j] = c[i - 1][j - 1] + 1 if x == y else max(c[i - 1][j], c[i][j - 1])
    return c[len(a)][len(b)]


def _levenshtein(a: list[int], b: list[int]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = prev[j - 1] if x == y else 1 + min(prev[j], cur[j - 1], prev[j - 1])
        prev = cur
    return prev[len(b)]


def plain_metrics(pred: list[int], ref: list[int]) -> list[float]:
    n = len(ref)
    valid = len(pred) == n and sorted(pred) == sorted(ref)
    first: dict[int, int] = {}
    for j, x in enumerate(pred):
        first.setdefault(x, j)
    conc = disc = 0
    for a in range(n):
        for b in range(a + 1, n):
            fa, fb = first.get(ref[a]), first.get(ref[b])
            if fa is not None and fb is not None:
                conc += fa < fb
                disc += fa > fb
    pairs = n * (n - 1) // 2
    return [
        float(pred == ref),
        sum(p == r for p, r in zip(pred, ref, strict=False)) / n,
        _lcs(ref, pred) / n,
        float(_levenshtein(ref, pred)),
        (conc - disc) / pairs if pairs else float(valid),
        conc / pairs if pairs else float(valid),
        float(not valid),
    ]


def plain_score(predictions: list[list[int]], references: list[list[int]]) -> dict:
    sums: dict[int, list[float]] = {}
    counts: dict[int, int] = {}
    for pred, ref in zip(predictions, references, strict=True):
        values = plain_metrics(pred, ref)
        acc = sums.setdefault(len(ref), [0.0] * len(METRICS))
        for k, v in enumerate(values):
            acc[k] += v
        counts[len(ref)] = counts.get(len(ref), 0) + 1
    total = sum(counts.values())
    result = {m: sum(s[k] for s in sums.values()) / total for k, m in enumerate(METRICS)}
    result["by_num_clips"] = {
        n: {m: sums[n][k] / counts[n] for k, m in enumerate(METRICS)} for n in sorted(sums)
    }
    expected = {}
    for n in counts:  # exact expectation by enumerating every permutation
        ref = list(range(1, n + 1))
        rows = [plain_metrics(list(p), ref) for p in itertools.permutations(ref)]
        expected[n] = [math.fsum(col) / len(rows) for col in zip(*rows, strict=True)]
    result["random_baseline"] = {
        m: sum(expected[n][k] * counts[n] for n in counts) / total for k, m in enumerate(METRICS)
    }
    return result


# --- data ---------------------------------------------------------------------------------


def make_data(count: int, seed: int = 0) -> tuple[list[list[int]], list[list[int]]]:
    """Table 1's clip counts; 90% random permutations, 5% correct, 5% invalid answers."""
    rng = random.Random(seed)
    sizes = rng.choices(list(TABLE1), weights=list(TABLE1.values()), k=count)
    predictions, references = [], []
    for n in sizes:
        ref = list(range(1, n + 1))
        rng.shuffle(ref)
        roll = rng.random()
        if roll < 0.05:
            pred = list(ref)
        elif roll < 0.10:
            pred = [rng.randint(1, n + 1) for _ in range(rng.randint(1, n + 1))]
        else:
            pred = rng.sample(ref, n)
        predictions.append(pred)
        references.append(ref)
    return predictions, references


def _timed(fn, repeat: int = 1):
    """Result and best wall time of `repeat` runs (the machine may be shared)."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1_000_000)
    parser.add_argument("--compute-examples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()

    import pyarrow as pa  # noqa: PLC0415

    labels = pa.list_(pa.int32())  # the dataset's type of answer.order
    predictions, references = make_data(args.examples)
    print(f"data: {args.examples:,} predictions, n = 2..7 (Table 1 mix), 5% invalid")
    print(f"times are the best of {args.repeat} runs\n")

    score(predictions[:1000], references[:1000], random_baseline=True)  # builds the tables
    plain, t_plain = _timed(lambda: plain_score(predictions, references), args.repeat)
    fast, t_lists = _timed(
        lambda: score(predictions, references, random_baseline=True), args.repeat
    )
    (arrow_p, arrow_r), t_convert = _timed(
        lambda: (pa.array(predictions, type=labels), pa.array(references, type=labels)),
        args.repeat,
    )
    from_arrow, t_arrow = _timed(lambda: score(arrow_p, arrow_r, random_baseline=True), args.repeat)
    for result in (fast, from_arrow):
        for m in METRICS:
            assert math.isclose(result[m], plain[m], abs_tol=1e-9), (m, result[m], plain[m])
            want = plain["random_baseline"][m]
            assert math.isclose(result["random_baseline"][m], want, abs_tol=1e-9)
            for n, cell in plain["by_num_clips"].items():
                assert math.isclose(result["by_num_clips"][n][m], cell[m], abs_tol=1e-9)
    print("all metrics + per-n breakdown + random baseline (results agree with the plain code):")
    print(f"  plain per-example Python, lists:               {t_plain:7.3f} s")
    print(f"  splice_metric.score, Python lists:             {t_lists:7.3f} s"
          f"  {t_plain / t_lists:6.1f}x")  # fmt: skip
    print(f"  splice_metric.score, Arrow list<int32>:        {t_arrow:7.3f} s"
          f"  {t_plain / t_arrow:6.1f}x")  # fmt: skip
    print(f"  (pa.array() of the lists, caller's side:       {t_convert:7.3f} s)")
    verdict = "met" if t_lists < 2 and t_plain / t_lists >= 50 else "NOT met"
    print(f"  targets on Python lists (< 2 s and >= 50x): {verdict}"
          f" ({t_lists:.3f} s, {t_plain / t_lists:.1f}x)")  # fmt: skip

    _, t_ci = _timed(lambda: score(arrow_p, arrow_r, confidence_level=0.95))
    print(f"  + 95% bootstrap intervals, 1000 resamples, every cell: {t_ci:.3f} s")

    import evaluate  # noqa: PLC0415  (only this part needs it)

    metric = evaluate.load(str(REPO / "splice_metric"))
    k = args.compute_examples
    sub_p, sub_r = predictions[:k], references[:k]
    _, t_bare = _timed(lambda: score(sub_p, sub_r), args.repeat)
    _, t_compute = _timed(lambda: metric.compute(predictions=sub_p, references=sub_r), args.repeat)
    _, t_arrow_trip = _timed(
        lambda: evaluate.EvaluationModule.compute(metric, predictions=sub_p, references=sub_r)
    )
    print(f"\nevaluate on {k:,} predictions (Python lists):")
    print(f"  splice_metric.score:                           {t_bare:7.3f} s")
    print(f"  SpliceMetric.compute (skips the Arrow copy):   {t_compute:7.3f} s"
          f"  overhead {t_compute - t_bare:+.3f} s")  # fmt: skip
    print(f"  evaluate's own compute (Arrow round trip):     {t_arrow_trip:7.3f} s"
          f"  overhead {t_arrow_trip - t_bare:+.3f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
