"""Speed of the SPLICE metric on the paper's whole set: its three configs (video, video_text,
text), 3 x 3,381 = 10,143 predictions with Table 1's clip counts, scored through `evaluate`'s
`compute()`, against a named baseline timed in the same run: the plain per-example Python
below (textbook dynamic programmes, the same numbers; the results are checked to agree).

Need (issue 33): `compute()` scores the three configs in about a second.

Run: .venv/bin/python bench/metric.py [--examples 10143] [--repeat 3]
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


NEED_SECONDS = 1.0
PAPER_SET = 3 * sum(TABLE1.values())  # three configs of the paper's 3,381 videos


def check_agrees(result: dict, plain: dict) -> None:
    """The bench measures only code that gives the plain code's numbers."""
    for m in METRICS:
        assert math.isclose(result[m], plain[m], abs_tol=1e-9), (m, result[m], plain[m])
        want = plain["random_baseline"][m]
        assert math.isclose(result["random_baseline"][m], want, abs_tol=1e-9), m
        for n, cell in plain["by_num_clips"].items():
            assert math.isclose(result["by_num_clips"][n][m], cell[m], abs_tol=1e-9), (n, m)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=PAPER_SET)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()

    import evaluate  # noqa: PLC0415  (after the arguments: --help stays fast)

    predictions, references = make_data(args.examples)
    texts = ["<order>" + ", ".join(f"Video {k}" for k in p) + "</order>" for p in predictions]
    print(f"data: {args.examples:,} predictions, n = 2..7 (Table 1 mix), 5% invalid")
    print(f"times are the best of {args.repeat} runs; all metrics + per-n + random baseline\n")
    plain, t_plain = _timed(lambda: plain_score(predictions, references), args.repeat)
    metric = evaluate.load(str(REPO / "splice_metric"))
    text_metric = evaluate.load(str(REPO / "splice_metric"), "text")
    runs = {
        "splice_metric.score (no evaluate)": lambda: score(
            predictions, references, random_baseline=True
        ),
        "compute(), label lists": lambda: metric.compute(
            predictions=predictions, references=references, random_baseline=True
        ),
        "compute(), 'text' config, raw answers": lambda: text_metric.compute(
            predictions=texts, references=references, random_baseline=True
        ),
    }
    print(f"  {'baseline: plain per-example Python':40} {t_plain:7.3f} s")
    timed = {}
    for name, run in runs.items():
        result, timed[name] = _timed(run, args.repeat)
        check_agrees(result, plain)
        print(f"  {name:40} {timed[name]:7.3f} s  {t_plain / timed[name]:5.2f}x baseline")
    t_compute = timed["compute(), label lists"]
    verdict = "met" if t_compute < NEED_SECONDS else "NOT met"
    print(f"  need (compute() in about {NEED_SECONDS:g} s): {verdict} ({t_compute:.3f} s)")
    _, t_ci = _timed(lambda: score(predictions, references, confidence_level=0.95))
    print(f"  + 95% bootstrap intervals, 1000 resamples, every cell: {t_ci:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
