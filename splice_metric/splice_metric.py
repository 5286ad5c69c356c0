"""SPLICE: scoring of video-clip orderings, as an `evaluate` metric (a Hub Space with its
siblings ``order_parser.py``, the one parser of order answers, and ``questions.py``). Each
prediction is scored on its own by the recurrences of the paper's Appendix A.1."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import datasets
import evaluate
import numpy as np

from .order_parser import parse_order
from .questions import QUESTION_CONFIGS, metric_features, question_scorer, storable

_CITATION = """\
@misc{ballout2025splice,
  title  = {Can you {SPLICE} it together? A Human Curated Benchmark for Probing Visual
            Reasoning in {VLMs}},
  author = {Ballout, Mohamad and Wilfred, Okajevo and Yaghoubi, Seyedalireza and
            Abdelmoneim, Nohayr Muhammad and Mayer, Julius and Bruni, Elia},
  year   = {2025},
  note   = {Institute of Cognitive Science, Osnabr{\\"u}ck University}
}
"""

_DESCRIPTION = """\
SPLICE cuts a video into clips at its annotated steps, shuffles them and asks for their
chronological order. Let y = [y_1, ..., y_n] be the true order of the clip labels and
ŷ = [ŷ_1, ..., ŷ_L] the predicted one. As in the paper (Section 5.1 and Appendix A.1):

- Binary accuracy: 1 if ŷ = y, else 0.
- Position-wise (Hamming) accuracy: (1/n) sum_i I(ŷ_i = y_i).
- LCS ratio: c(n, L) / n, with c(i, j) the length of the longest common subsequence of
  y_1..i and ŷ_1..j: c(i-1, j-1) + 1 if y_i = ŷ_j, else max(c(i-1, j), c(i, j-1)).
- Edit (Levenshtein) distance D(n, L): D(i, 0) = i, D(0, j) = j, and D(i, j) =
  D(i-1, j-1) if y_i = ŷ_j, else 1 + min(D(i-1, j), D(i, j-1), D(i-1, j-1)).

Added here: Kendall's tau and pairwise accuracy over clip pairs, and the share of invalid
predictions (not a permutation of the labels; scored as given, any length). Every value is a
mean over examples, broken down by clip count and optionally by any grouping, with exact
random baselines and bootstrap intervals. Configs ``pairwise`` and ``choice`` score answers to
SPLICE's question formats (``questions.py``): accuracy with exact chance.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one predicted order per example: clip labels in the reference's label
        space (``[3, 1, 2]``: clip 3 first), or the model's raw text, read with
        ``parse_order`` (the ``"text"`` config declares text predictions). Anything that is
        not an order of integer labels (``None``, unparseable text, ``1.5``, ``True``,
        nested lists...) is an invalid prediction, never truncated or coerced.
    references: the chronological order of the clip labels of each example, distinct
        integers (the dataset's ``answer.order``).
    groups: optional, one hashable label per example (domain, task, duration bin...): adds
        ``by_group``, the metrics and count of each group.
    random_baseline: when True, adds ``random_baseline``: the exact expected value of every
        metric under uniformly random permutations, for the same clip counts (and groups).
    confidence_level: e.g. 0.95 adds ``confidence_intervals`` (percentile bootstrap over
        examples) to the result and to every breakdown.
    bootstrap_iterations: bootstrap resamples (default 1000).
    seed: seed of the bootstrap and of the sampled baselines for n > 8 (default 0).
    strict: when True, the first invalid prediction raises ``ValueError`` naming it.
Returns (means over examples):
    binary_accuracy, hamming_accuracy, lcs_ratio (in [0, 1]), edit_distance (>= 0): the
        paper's four, as defined above.
    kendall_tau: (concordant - discordant clip pairs) / all pairs, in [-1, 1].
    pairwise_accuracy: share of clip pairs in the right relative order, in [0, 1].
    invalid_rate: share of predictions that are not a permutation of the labels.
    unparsed_rate: share of predictions not read at all (``None``, or text ``parse_order``
        finds no order in), in [0, invalid_rate]: they are invalid too.
    count, by_num_clips ({n: {"count": ..., metrics...}}), by_group, random_baseline,
        confidence_intervals: the number of examples, and the breakdowns above.
Examples:
    >>> import evaluate
    >>> splice = evaluate.load("splice_metric")
    >>> results = splice.compute(predictions=[[3, 1, 2], [2, 1]], references=[[3, 1, 2], [1, 2]])
    >>> results["binary_accuracy"], results["hamming_accuracy"], results["edit_distance"]
    (0.5, 0.5, 1.0)
    >>> results["by_num_clips"][2]["edit_distance"], results["by_num_clips"][2]["kendall_tau"]
    (2.0, -1.0)

    An invalid prediction is scored as given and counted:

    >>> results = splice.compute(predictions=[[1, 1, 2]], references=[[1, 2, 3]])
    >>> results["invalid_rate"], round(results["hamming_accuracy"], 4), results["lcs_ratio"]
    (1.0, 0.3333, 0.6666666666666666)

    Raw model text, groups and the random baseline:

    >>> text = evaluate.load("splice_metric", "text")
    >>> answers = ["<order>Video 2, Video 1</order>", "I think 1 then 2"]
    >>> results = text.compute(predictions=answers, references=[[2, 1], [1, 2]],
    ...                        groups=["cooking", "sports"], random_baseline=True)
    >>> results["binary_accuracy"], results["invalid_rate"], results["by_group"]["sports"]["count"]
    (0.5, 0.5, 1)
    >>> results["unparsed_rate"]  # "I think 1 then 2" holds no order: unparsed, not just invalid
    0.5
    >>> results["random_baseline"]["binary_accuracy"]
    0.5

    Strict mode names the example and the problem:

    >>> splice.compute(predictions=[[1, 2]], references=[[1, 2, 3]], strict=True)
    Traceback (most recent call last):
    ...
    ValueError: example 0: prediction [1, 2] is not a permutation of the reference \
[1, 2, 3]: length 2 instead of 3; missing label 3
"""

# The paper's own four (Section 5.1, Tables 2 and 5), then this metric's additions.
PAPER_METRICS = ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance")
METRICS = (*PAPER_METRICS, "kendall_tau", "pairwise_accuracy", "invalid_rate")
# Every rate of a result cell: the metrics, then the share of predictions not read at all
# (also invalid: ``invalid_rate - unparsed_rate`` is the share read but not a permutation).
RATES: tuple[str, ...] = (*METRICS, "unparsed_rate")
TABLE_MAX_N = 8  # largest n whose n! permutations give the exact random baseline
BASELINE_SAMPLES = 20_000  # permutations drawn per larger n, where no closed form exists

# Stands for a token that is not an integer label (1.5, True, "x", None inside a list): it
# can never equal a reference label because references may not hold it.
_NOT_A_LABEL = int(np.iinfo(np.int64).min)
_INT64_MAX = int(np.iinfo(np.int64).max)


def _as_label(value: Any) -> int | None:
    """An integer label, or None: bools and non-integral numbers are never labels."""
    if type(value) is int:  # the usual case, first
        return value if _NOT_A_LABEL < value <= _INT64_MAX else None
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and value == int(value):
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value) if _NOT_A_LABEL < value <= _INT64_MAX else None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    text = text.replace(str(_NOT_A_LABEL), "?")  # a non-label stored by `add_batch`
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _prediction_tokens(pred: Any) -> tuple[list[int] | None, str | None]:
    """Tokens of one prediction (`_NOT_A_LABEL` for non-labels), None when no order could be
    read at all (unparsed, not only invalid), and what was wrong, if anything."""
    if pred is None:
        return None, "no prediction (None)"
    if isinstance(pred, str):
        order = parse_order(pred)
        return order, None if order is not None else f"unparseable text {_short(pred)}"
    if isinstance(pred, np.ndarray) and pred.ndim != 1:
        return [], f"an array of shape {pred.shape}, not a sequence of labels"
    pred = pred.tolist() if isinstance(pred, np.ndarray) else pred
    if not isinstance(pred, (list, tuple)):
        return [], f"got {type(pred).__name__} {_short(pred, 30)}, not a sequence of labels"
    tokens, note = [], None  # the first non-label is named
    for position, value in enumerate(pred):
        label = _as_label(value)
        if label is None and note is None:
            stored = isinstance(value, int) and value == _NOT_A_LABEL
            shown = "a value" if stored else _short(value, 30)
            note = f"position {position} holds {shown}, not an integer label"
        tokens.append(_NOT_A_LABEL if label is None else label)
    return tokens, note


def _reference_labels(ref: Any, index: int) -> list[int]:
    """A reference as a list of distinct int labels; anything else is a usage error."""
    where = f"reference {index}"
    if isinstance(ref, np.ndarray) and ref.ndim != 1:
        raise ValueError(f"{where}: expected a sequence of clip labels, got shape {ref.shape}")
    ref = ref.tolist() if isinstance(ref, np.ndarray) else ref
    if not isinstance(ref, (list, tuple)):
        raise ValueError(
            f"{where}: expected a sequence of clip labels, got {type(ref).__name__} "
            f"{_short(ref)} (references must be a list of sequences)"
        )
    labels = [_as_label(value) for value in ref]
    if None in labels:
        position = labels.index(None)
        raise ValueError(f"{where}: position {position} holds {_short(ref[position])}, not an int")
    if not labels:
        raise ValueError(f"{where}: empty (a reference needs at least one clip)")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise ValueError(f"{where}: duplicate label {', '.join(map(str, dup))}")
    return labels


def _problem(tokens: list[int], ref: list[int], note: str | None) -> str:
    if not tokens:  # nothing to compare: say why, not which labels are missing
        return note or "empty prediction"
    problems = [note] if note else []
    if len(tokens) != len(ref):
        problems.append(f"length {len(tokens)} instead of {len(ref)}")
    labels = [t for t in tokens if t != _NOT_A_LABEL]
    known = set(ref)
    problems += [f"duplicate label {x}" for x in sorted(known & set(labels)) if labels.count(x) > 1]
    problems += [f"unknown label {x}" for x in sorted(set(labels) - known)]
    problems += [f"missing label {x}" for x in sorted(known - set(labels))]
    return "; ".join(problems)


def _as_list(seqs: Any, kind: str) -> list[Any]:
    """Predictions or references as a list, whatever they came as (Arrow arrays, `datasets`
    columns, 2-D arrays), so that every kind meets the same checks."""
    if hasattr(seqs, "to_pylist"):
        return seqs.to_pylist()
    if isinstance(seqs, (str, bytes)) or not isinstance(seqs, Iterable):
        raise ValueError(f"{kind} must be a list of sequences, got {type(seqs).__name__}")
    return list(seqs)


# --- the metrics (Appendix A.1) ------------------------------------------------------------
# y is the reference (n distinct clip labels in true order), ŷ the prediction as read: any
# length, and a token that is not a label equals none. Every definition holds as written.


def lcs_length(y: Sequence[int], y_hat: Sequence[int]) -> int:
    """c(n, L), the LCS length, by the description's recurrence, one row of c at a time."""
    row = [0] * (len(y_hat) + 1)
    for y_i in y:
        diagonal, row[0] = 0, 0
        for j, y_hat_j in enumerate(y_hat, 1):
            above = row[j]
            row[j] = diagonal + 1 if y_i == y_hat_j else max(above, row[j - 1])
            diagonal = above
    return row[-1]


def edit_distance(y: Sequence[int], y_hat: Sequence[int]) -> int:
    """D(n, L), the Levenshtein distance, by the description's recurrence, one row at a time."""
    row = list(range(len(y_hat) + 1))
    for i, y_i in enumerate(y, 1):
        diagonal, row[0] = row[0], i
        for j, y_hat_j in enumerate(y_hat, 1):
            above = row[j]
            row[j] = diagonal if y_i == y_hat_j else 1 + min(above, row[j - 1], diagonal)
            diagonal = above
    return row[-1]


def example_metrics(y_hat: Sequence[int], y: Sequence[int]) -> tuple[float, ...]:
    """Every metric of one prediction, in METRICS order, as the description defines them.
    A clip pair (a before b in y) is concordant when ŷ has both in that order (first
    occurrences), discordant in the other, neither when ŷ lacks one of them."""
    n = len(y)
    first: dict[int, int] = {}
    for j, label in enumerate(y_hat):
        first.setdefault(label, j)
    at = [first[label] for label in y if label in first]  # predicted labels, in true order
    valid = len(y_hat) == n == len(at)
    concordant = sum(a < b for a, b in itertools.combinations(at, 2))
    discordant = len(at) * (len(at) - 1) // 2 - concordant  # positions differ: all others
    pairs = n * (n - 1) // 2  # one clip has none: its pair metrics follow validity
    in_place = sum(p == r for p, r in zip(y_hat, y, strict=False))
    return (
        float(len(y_hat) == n and in_place == n),
        in_place / n,
        lcs_length(y, y_hat) / n,
        float(edit_distance(y, y_hat)),
        (concordant - discordant) / pairs if pairs else float(valid),
        concordant / pairs if pairs else float(valid),
        float(not valid),
    )


def _bootstrap(values: np.ndarray, level: float, resamples: int, rng: Any) -> dict[str, list]:
    """Percentile bootstrap of the means. Resampling m examples with replacement is drawing
    multinomial counts over their distinct rows of values: the cost does not grow with m."""
    rows, counts = np.unique(values, axis=0, return_counts=True)
    m = len(values)
    means = rng.multinomial(m, counts / m, size=resamples) @ rows / m
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return {m: [float(lo), float(hi)] for m, lo, hi in zip(RATES, low, high, strict=True)}


def _breakdowns(
    values: np.ndarray,
    nclips: np.ndarray,
    groups: list[Hashable] | None,
    bootstrap: tuple[float, int, np.random.Generator] | None = None,
) -> dict[str, Any]:
    """Overall, per-n and per-group cells of examples given as rows of RATES values;
    ``bootstrap`` is (level, resamples, generator)."""

    def cell(members: np.ndarray) -> dict[str, Any]:
        count = int(members.sum())
        means = values[members].mean(0) if count else np.full(len(RATES), np.nan)
        out = {"count": count, **{m: float(v) for m, v in zip(RATES, means, strict=True)}}
        if bootstrap is not None and count:
            out["confidence_intervals"] = _bootstrap(values[members], *bootstrap)
        return out

    result = cell(np.ones(len(values), dtype=bool))
    result["by_num_clips"] = {int(n): cell(nclips == n) for n in np.unique(nclips)}
    if groups is not None:
        index: dict[Hashable, int] = {}
        ids = np.fromiter((index.setdefault(g, len(index)) for g in groups), np.int64)
        result["by_group"] = {g: cell(ids == i) for g, i in index.items()}
    return result


@functools.cache  # 8! permutations take a while; callers only read the array
def expected_random(n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Expected metrics (METRICS order) of a uniformly random permutation of n clips, and
    which of them are estimates. n <= TABLE_MAX_N: exact means over all n! permutations
    (exact sums: tau's is exactly 0). Larger n: closed forms for binary (1/n!), Hamming
    (1/n), tau (0), pairwise accuracy (1/2) and invalid rate (0); LCS ratio and edit
    distance have none and are means over BASELINE_SAMPLES permutations drawn with seed n."""
    if n < 1:
        raise ValueError(f"number of clips must be at least 1, got {n}")
    reference = range(n)
    if n <= TABLE_MAX_N:  # every permutation of the reference 0..n-1
        table = [example_metrics(p, reference) for p in itertools.permutations(reference)]
        return np.array([math.fsum(col) / len(table) for col in zip(*table, strict=True)]), ()
    draws = np.argsort(np.random.default_rng(n).random((BASELINE_SAMPLES, n)), axis=1)
    sampled = np.mean([example_metrics(p, reference) for p in draws.tolist()], axis=0)
    values = [1 / math.factorial(n), 1 / n, sampled[2], sampled[3], 0.0, 0.5, 0.0]
    return np.array(values), ("lcs_ratio", "edit_distance")


def random_baseline(num_clips: Iterable[int], groups: Sequence | None = None) -> dict[str, Any]:
    """Expected metrics of random orders for these clip counts, broken down as in `score`."""
    nclips = np.fromiter(num_clips, np.int64)
    groups = None if groups is None else _check_groups(groups, len(nclips))
    expected = np.zeros((int(nclips.max(initial=0)) + 1, len(RATES)))  # unparsed_rate: 0
    sampled: set[str] = set()
    for n in map(int, np.unique(nclips)):
        expected[n, : len(METRICS)], estimated = expected_random(n)
        sampled.update(estimated)
    return {**_breakdowns(expected[nclips], nclips, groups), "sampled_metrics": sorted(sampled)}


_random_baseline = random_baseline  # `score`'s argument of that name hides it


def _check_groups(groups: Any, count: int) -> list[Hashable]:
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Iterable):
        raise ValueError(f"groups must be a list with one label per example, got {groups!r}")
    groups = list(groups)
    if len(groups) != count:
        raise ValueError(f"groups has {len(groups)} labels for {count} examples")
    for i, label in enumerate(groups):
        if label is None or not isinstance(label, Hashable):
            raise ValueError(f"groups[{i}] is {_short(label)}; a group label must be hashable")
    return [x.item() if isinstance(x, np.generic) else x for x in groups]


def _check_options(confidence_level: float | None, bootstrap_iterations: int) -> None:
    if confidence_level is not None and not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be between 0 and 1, got {confidence_level}")
    if isinstance(bootstrap_iterations, bool) or not isinstance(bootstrap_iterations, int):
        raise ValueError(f"bootstrap_iterations must be an int, got {bootstrap_iterations!r}")
    if bootstrap_iterations < 1:
        raise ValueError(f"bootstrap_iterations must be at least 1, got {bootstrap_iterations}")


def score(
    predictions: Any,
    references: Any,
    *,
    groups: Sequence[Hashable] | None = None,
    random_baseline: bool = False,
    confidence_level: float | None = None,
    bootstrap_iterations: int = 1000,
    seed: int = 0,
    strict: bool = False,
) -> dict[str, Any]:
    """The metric's whole computation without `evaluate`'s Arrow cache (for the pipeline's
    tools): the arguments of ``compute``, as lists, numpy arrays or Arrow arrays."""
    if predictions is None or references is None:
        raise ValueError("both predictions and references are required")
    _check_options(confidence_level, bootstrap_iterations)
    refs = [_reference_labels(r, i) for i, r in enumerate(_as_list(references, "references"))]
    predictions = _as_list(predictions, "predictions")
    if len(predictions) != len(refs):
        raise ValueError(f"got {len(predictions)} predictions for {len(refs)} references")
    pred = [_prediction_tokens(p) for p in predictions]  # (tokens or None, what is wrong)
    values = np.array(
        [(*example_metrics(t or [], r), t is None) for (t, _), r in zip(pred, refs, strict=True)],
        dtype=float,
    ).reshape(-1, len(RATES))
    nclips = np.fromiter(map(len, refs), np.int64, len(refs))
    checked = None if groups is None else _check_groups(groups, len(refs))
    if strict and (invalid := values[:, METRICS.index("invalid_rate")] > 0).any():
        i = int(np.argmax(invalid))  # the first invalid prediction, as given, and its faults
        raise ValueError(
            f"example {i}: prediction {_short(predictions[i])} is not a permutation of the "
            f"reference {refs[i]}: {_problem(pred[i][0] or [], refs[i], pred[i][1])}"
        )
    bootstrap = None
    if confidence_level is not None:
        bootstrap = (float(confidence_level), bootstrap_iterations, np.random.default_rng(seed))
    result = _breakdowns(values, nclips, checked, bootstrap)
    if bootstrap is not None:
        result.update(confidence_level=bootstrap[0], bootstrap_iterations=bootstrap_iterations)
    if random_baseline:
        result["random_baseline"] = _random_baseline(nclips, checked)
    return result


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SpliceMetric(evaluate.Metric):
    """SPLICE clip-ordering metrics. Configs: ``default`` (label sequences) and ``text``
    (raw model answers, read with ``parse_order``); both accept either kind in compute."""

    def _info(self) -> evaluate.MetricInfo:
        labels = datasets.List(datasets.Value("int64"))
        answers = datasets.Value("string") if self.config_name == "text" else labels
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=metric_features(self.config_name, answers, labels),
            reference_urls=["https://coin-dataset.github.io/"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs) -> None:
        """Store predictions in a form Arrow keeps exactly (its int cast truncates 1.5)."""
        if predictions is not None and self.config_name in QUESTION_CONFIGS:  # questions.py
            predictions = [storable(p) for p in predictions]
        elif predictions is not None:
            predictions = [self._storable(p, i) for i, p in enumerate(predictions)]
        if references is not None and self.config_name not in QUESTION_CONFIGS:
            references = [_reference_labels(r, i) for i, r in enumerate(references)]
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs) -> None:
        """Store one example, checked as in `add_batch`."""
        self.add_batch(predictions=[prediction], references=[reference], **kwargs)

    def _storable(self, prediction: Any, index: int) -> Any:
        if self.config_name != "text":
            return _prediction_tokens(prediction)[0]  # None: unparsed, kept apart by Arrow
        if prediction is not None and not isinstance(prediction, str):
            raise ValueError(
                f"prediction {index}: the 'text' config stores strings, got "
                f"{type(prediction).__name__}; use the default config for label lists"
            )
        return prediction or ""

    def _compute(self, predictions, references, **kwargs) -> dict[str, Any]:
        """The keyword arguments are those of `score` (see ``_KWARGS_DESCRIPTION``)."""
        return (question_scorer(self.config_name) or score)(predictions, references, **kwargs)
