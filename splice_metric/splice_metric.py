"""SPLICE: scoring of video-clip orderings as an `evaluate` metric, by the definitions of the
paper's Appendix A.1, one prediction at a time. Its siblings, which evaluate copies beside it:
``order_parser.py`` reads answers in text (with its readers, the ``order_*.py`` modules),
``questions.py`` scores the question formats."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import datasets
import evaluate
import numpy as np

# evaluate copies the siblings a script imports relatively, but not theirs: each module the
# parser is made of is imported here, so that the copy beside the script is whole
from .order_commitment import committed
from .order_json import json_orders
from .order_lists import item_runs
from .order_parser import parse_order
from .order_positions import from_pairs
from .order_statements import statements
from .order_words import word_alternatives
from .questions import QUESTION_CONFIGS, metric_features, question_scorer, storable

# the parser's readers, named so that their imports above are used (a comment on an import
# line is read by evaluate as the file's URL)
_PARSER_PARTS = (committed, json_orders, item_runs, from_pairs, statements, word_alternatives)

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
    predictions: one order per example: clip labels (``[3, 1, 2]``: clip 3 first) or the
        model's text, read with ``parse_order``. Anything else (``None``, ``1.5``,
        ``True``...) is invalid, never coerced.
    references: each example's clip labels in true order, distinct integers.
    groups: one hashable label per example; adds ``by_group``.
    random_baseline: True adds the exact expected metrics of random permutations.
    confidence_level: e.g. 0.95 adds percentile bootstrap ``confidence_intervals``, from
        ``bootstrap_iterations`` resamples (default 1000) drawn with ``seed`` (default 0).
    strict: True raises ``ValueError`` on the first invalid prediction, naming it.
Returns means over examples: the paper's binary_accuracy, hamming_accuracy, lcs_ratio and
    edit_distance; kendall_tau, (concordant - discordant) / clip pairs; pairwise_accuracy,
    the share of pairs in the right order; invalid_rate (not a permutation of the labels)
    and unparsed_rate (no order read). Also count, by_num_clips, by_group, random_baseline
    and confidence_intervals.
Examples:
    >>> import evaluate
    >>> splice = evaluate.load("splice_metric")
    >>> results = splice.compute(predictions=[[3, 1, 2], [2, 1]], references=[[3, 1, 2], [1, 2]])
    >>> results["binary_accuracy"], results["hamming_accuracy"], results["edit_distance"]
    (0.5, 0.5, 1.0)
    >>> results["by_num_clips"][2]["edit_distance"], results["by_num_clips"][2]["kendall_tau"]
    (2.0, -1.0)
    >>> results = splice.compute(predictions=[[1, 1, 2]], references=[[1, 2, 3]])
    >>> results["invalid_rate"], round(results["hamming_accuracy"], 4)  # scored as given
    (1.0, 0.3333)
    >>> text = evaluate.load("splice_metric", "text")
    >>> answers = ["<order>Video 2, Video 1</order>", "I think 1 then 2"]
    >>> results = text.compute(predictions=answers, references=[[2, 1], [1, 2]],
    ...                        groups=["cooking", "sports"], random_baseline=True)
    >>> results["binary_accuracy"], results["unparsed_rate"], results["by_group"]["sports"]["count"]
    (0.5, 0.5, 1)
    >>> results["random_baseline"]["binary_accuracy"]
    0.5
    >>> splice.compute(predictions=[[1, 2]], references=[[1, 2, 3]], strict=True)
    Traceback (most recent call last):
    ...
    ValueError: example 0: prediction [1, 2] is not a permutation of the reference \
[1, 2, 3]: length 2 instead of 3; missing label 3
"""

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

PAPER_METRICS = ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance")
METRICS = (*PAPER_METRICS, "kendall_tau", "pairwise_accuracy", "invalid_rate")
RATES = (*METRICS, "unparsed_rate")  # every value of a result cell
TABLE_MAX_N = 8  # largest n whose n! permutations give the exact random baseline
BASELINE_SAMPLES = 20_000  # permutations drawn per larger n, where no closed form exists
# A token that is no integer label (1.5, True, None...), as `add_batch` stores it for Arrow
# (whose int cast would truncate 1.5): it equals no label, as no reference may hold it.
_NOT_A_LABEL, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    text = text.replace(str(_NOT_A_LABEL), "?")  # a non-label as `add_batch` stored it
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _labels(value: Any) -> tuple[list[int], str | None]:
    """A sequence's integer labels (``2``, ``2.0``, ``np.int32(2)``; `_NOT_A_LABEL` for
    ``True``, ``1.5``...), and the first thing wrong: no sequence, or an item no label."""
    if isinstance(value, np.ndarray) and value.ndim != 1:
        return [], f"got shape {value.shape}"
    if not isinstance(value, (list, tuple, np.ndarray)):
        return [], f"got {type(value).__name__} {_short(value, 30)}"
    items, labels = list(value), []
    for item in items:
        if isinstance(item, (float, np.floating)) and item.is_integer():
            item = int(item)
        integer = isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))
        labels.append(int(item) if integer and _NOT_A_LABEL < item <= _INT64_MAX else _NOT_A_LABEL)
    if _NOT_A_LABEL in labels:
        at = labels.index(_NOT_A_LABEL)
        return labels, f"position {at} holds {_short(items[at], 30)}, not an integer label"
    return labels, None


def _prediction(pred: Any) -> tuple[list[int] | None, str | None]:
    """The tokens read (None when no order was read at all: unparsed) and what is wrong."""
    if pred is None:
        return None, "no prediction (None)"
    if isinstance(pred, str):
        order = parse_order(pred)
        return order, None if order is not None else f"unparseable text {_short(pred)}"
    tokens, problem = _labels(pred)
    return tokens, f"{problem}, not a sequence of labels" if problem and not tokens else problem


def _reference(ref: Any, index: int) -> list[int]:
    """A reference as distinct integer labels; anything else is an error naming it."""
    labels, problem = _labels(ref)
    if problem and not labels:
        problem = f"expected a sequence of clip labels, {problem}"
    elif not labels:
        problem = "empty (a reference needs at least one clip)"
    elif not problem and len(set(labels)) < len(labels):
        repeated = sorted(x for x in set(labels) if labels.count(x) > 1)
        problem = f"duplicate label {', '.join(map(str, repeated))}"
    if problem:
        raise ValueError(f"reference {index}: {problem}")
    return labels


def _problem(tokens: list[int], ref: list[int], note: str | None) -> str:
    """Everything that keeps a prediction from being a permutation of its reference."""
    if not tokens:  # nothing to compare: say why, not which labels are missing
        return note or "empty prediction"
    labels = [t for t in tokens if t != _NOT_A_LABEL]
    known = set(ref)
    problems = [note] if note else []
    problems += [f"length {len(tokens)} instead of {len(ref)}"] if len(tokens) != len(ref) else []
    problems += [f"duplicate label {x}" for x in sorted(known & set(labels)) if labels.count(x) > 1]
    problems += [f"unknown label {x}" for x in sorted(set(labels) - known)]
    problems += [f"missing label {x}" for x in sorted(known - set(labels))]
    return "; ".join(problems)


# --- the metrics (Appendix A.1) --------------------------------------------------------------
# y: the reference, n distinct labels in true order; ŷ: the prediction as read, any length.


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
    """Every metric of one prediction, in METRICS order. A clip pair (a before b in y) is
    concordant when ŷ has both in that order (first occurrences), discordant in the other,
    neither when ŷ lacks one of them; one clip has no pair: tau and pairwise follow validity."""
    n = len(y)
    first: dict[int, int] = {}
    for j, label in enumerate(y_hat):
        first.setdefault(label, j)
    at = [first[label] for label in y if label in first]  # predicted labels, in true order
    valid = len(y_hat) == n == len(at)
    concordant = sum(a < b for a, b in itertools.combinations(at, 2))
    discordant = len(at) * (len(at) - 1) // 2 - concordant
    pairs = n * (n - 1) // 2
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


@functools.cache  # 8! permutations take a while; callers only read the array
def expected_random(n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Expected metrics (METRICS order) of a uniformly random permutation of n clips, and
    which of them are estimates. n <= TABLE_MAX_N: exact means over all n! permutations.
    Larger n: closed forms for binary (1/n!), Hamming (1/n), tau (0), pairwise accuracy (1/2)
    and invalid rate (0); LCS ratio and edit distance are means over BASELINE_SAMPLES
    permutations drawn with seed n."""
    if n < 1:
        raise ValueError(f"number of clips must be at least 1, got {n}")
    reference = range(n)
    if n <= TABLE_MAX_N:
        table = [example_metrics(p, reference) for p in itertools.permutations(reference)]
        return np.array([math.fsum(col) / len(table) for col in zip(*table, strict=True)]), ()
    draws = np.argsort(np.random.default_rng(n).random((BASELINE_SAMPLES, n)), axis=1)
    sampled = np.mean([example_metrics(p, reference) for p in draws.tolist()], axis=0)
    values = [1 / math.factorial(n), 1 / n, sampled[2], sampled[3], 0.0, 0.5, 0.0]
    return np.array(values), ("lcs_ratio", "edit_distance")


# --- means, breakdowns and intervals ---------------------------------------------------------


def _bootstrap(values: np.ndarray, level: float, resamples: int, rng: Any) -> dict[str, list]:
    """Percentile bootstrap of the means. Resampling m examples with replacement is drawing
    multinomial counts over their distinct rows of values: the cost does not grow with m."""
    rows, counts = np.unique(values, axis=0, return_counts=True)
    m = len(values)
    means = rng.multinomial(m, counts / m, size=resamples) @ rows / m
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return {name: [float(lo), float(hi)] for name, lo, hi in zip(RATES, low, high, strict=True)}


def _breakdowns(values: np.ndarray, nclips: np.ndarray, groups: list | None, bootstrap=None):
    """The overall, per-n and per-group means of examples given as rows of RATES values;
    ``bootstrap`` is (level, resamples, generator) and adds each cell's intervals."""

    def cell(members: np.ndarray) -> dict[str, Any]:
        count = int(members.sum())
        means = values[members].mean(0) if count else np.full(len(RATES), np.nan)
        out = {"count": count, **dict(zip(RATES, map(float, means), strict=True))}
        if bootstrap is not None and count:
            out["confidence_intervals"] = _bootstrap(values[members], *bootstrap)
        return out

    result = cell(np.ones(len(values), dtype=bool))
    result["by_num_clips"] = {int(n): cell(nclips == n) for n in np.unique(nclips)}
    if groups is not None:
        index = {g: i for i, g in enumerate(dict.fromkeys(groups))}
        ids = np.array([index[g] for g in groups], dtype=np.int64)
        result["by_group"] = {g: cell(ids == i) for g, i in index.items()}
    return result


def random_baseline(num_clips: Iterable[int], groups: Sequence | None = None) -> dict[str, Any]:
    """Expected metrics of random orders for these clip counts, broken down as in `score`."""
    nclips = np.fromiter(num_clips, np.int64)
    groups = None if groups is None else _groups(groups, len(nclips))
    expected = np.zeros((int(nclips.max(initial=0)) + 1, len(RATES)))  # unparsed_rate: 0
    sampled: set[str] = set()
    for n in map(int, np.unique(nclips)):
        expected[n, : len(METRICS)], estimated = expected_random(n)
        sampled.update(estimated)
    return {**_breakdowns(expected[nclips], nclips, groups), "sampled_metrics": sorted(sampled)}


_random_baseline = random_baseline  # `score`'s argument of that name hides it


def _groups(groups: Any, count: int) -> list[Hashable]:
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Iterable):
        raise ValueError(f"groups must be a list with one label per example, got {groups!r}")
    groups = [x.item() if isinstance(x, np.generic) else x for x in groups]
    if len(groups) != count:
        raise ValueError(f"groups has {len(groups)} labels for {count} examples")
    for i, label in enumerate(groups):
        if label is None or not isinstance(label, Hashable):
            raise ValueError(f"groups[{i}] is {_short(label)}; a group label must be hashable")
    return groups


def _bootstrap_options(level: float | None, resamples: int, seed: int) -> tuple | None:
    """The checked (level, resamples, generator) of `_breakdowns`, None without a level."""
    if isinstance(resamples, bool) or not isinstance(resamples, int):
        raise ValueError(f"bootstrap_iterations must be an int, got {resamples!r}")
    if resamples < 1:
        raise ValueError(f"bootstrap_iterations must be at least 1, got {resamples}")
    if level is not None and not 0 < level < 1:
        raise ValueError(f"confidence_level must be between 0 and 1, got {level}")
    return None if level is None else (float(level), resamples, np.random.default_rng(seed))


def _as_list(seqs: Any, kind: str) -> list[Any]:
    """Predictions or references as a list (from Arrow arrays, columns, 2-D arrays too)."""
    if hasattr(seqs, "to_pylist"):
        return seqs.to_pylist()
    if isinstance(seqs, (str, bytes)) or not isinstance(seqs, Iterable):
        raise ValueError(f"{kind} must be a list of sequences, got {type(seqs).__name__}")
    return list(seqs)


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
    bootstrap = _bootstrap_options(confidence_level, bootstrap_iterations, seed)
    refs = [_reference(r, i) for i, r in enumerate(_as_list(references, "references"))]
    predictions = _as_list(predictions, "predictions")
    if len(predictions) != len(refs):
        raise ValueError(f"got {len(predictions)} predictions for {len(refs)} references")
    groups = None if groups is None else _groups(groups, len(refs))
    rows = []
    for i, (pred, ref) in enumerate(zip(predictions, refs, strict=True)):
        tokens, note = _prediction(pred)
        rows.append((*example_metrics(tokens or [], ref), tokens is None))
        if strict and rows[-1][METRICS.index("invalid_rate")]:
            raise ValueError(
                f"example {i}: prediction {_short(pred)} is not a permutation of the "
                f"reference {ref}: {_problem(tokens or [], ref, note)}"
            )
    values = np.array(rows, dtype=float).reshape(-1, len(RATES))
    nclips = np.fromiter(map(len, refs), np.int64, len(refs))
    result = _breakdowns(values, nclips, groups, bootstrap)
    if bootstrap is not None:
        result.update(confidence_level=bootstrap[0], bootstrap_iterations=bootstrap_iterations)
    if random_baseline:
        result["random_baseline"] = _random_baseline(nclips, groups)
    return result


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SpliceMetric(evaluate.Metric):
    """SPLICE clip-ordering metrics. Configs: ``default`` (label sequences), ``text`` (raw
    model answers, read with ``parse_order``), and the question formats of ``questions.py``."""

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
        """Check the examples and store them as Arrow keeps them exactly."""
        if predictions is not None:
            predictions = [self._storable(p, i) for i, p in enumerate(predictions)]
        if references is not None and self.config_name not in QUESTION_CONFIGS:
            references = [_reference(r, i) for i, r in enumerate(references)]
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs) -> None:
        """Store one example, checked as in `add_batch`."""
        self.add_batch(predictions=[prediction], references=[reference], **kwargs)

    def _storable(self, prediction: Any, index: int) -> Any:
        """Text for the ``text`` and question configs, else tokens (None: unparsed)."""
        if self.config_name in QUESTION_CONFIGS:
            return storable(prediction)
        if self.config_name != "text":
            return _prediction(prediction)[0]
        if prediction is not None and not isinstance(prediction, str):
            raise ValueError(
                f"prediction {index}: the 'text' config stores strings, got "
                f"{type(prediction).__name__}; use the default config for label lists"
            )
        return prediction or ""

    def _compute(self, predictions, references, **kwargs) -> dict[str, Any]:
        """The keyword arguments are those of `score` (see ``_KWARGS_DESCRIPTION``)."""
        return (question_scorer(self.config_name) or score)(predictions, references, **kwargs)
