"""SPLICE: scoring of video-clip orderings, as an `evaluate` metric (a Hub Space with its
siblings ``order_parser.py`` and ``questions.py``; numpy, datasets, evaluate only).
``parse_order`` (from ``order_parser``) is the one parser of order answers. Metrics as in
Appendix A.1, vectorised per clip count and prediction length (`_metrics`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple

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
Scores predicted orders of shuffled video clips against the true chronological order, as in the
SPLICE benchmark (Section 5.1 and Appendix A.1 of the paper): binary (exact-match) accuracy,
position-wise (Hamming) accuracy, LCS ratio and absolute Levenshtein edit distance, plus Kendall's
tau and pairwise accuracy, and the share of invalid predictions (not a permutation of the
reference's labels). Every value is a mean over examples, with a breakdown by number of clips,
optional breakdowns by any grouping, exact random-permutation baselines and seeded bootstrap
confidence intervals. Configs ``pairwise`` and ``choice`` score option answers to SPLICE's question
formats (``questions.py``): accuracy with exact chance.
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
Returns:
    binary_accuracy: share of exact matches, in [0, 1].
    hamming_accuracy: share of clips at their true position, in [0, 1].
    lcs_ratio: longest common subsequence length / number of clips, in [0, 1].
    edit_distance: Levenshtein distance (insertions, deletions, substitutions), >= 0.
    kendall_tau: (concordant - discordant clip pairs) / all pairs, in [-1, 1].
    pairwise_accuracy: share of clip pairs in the right relative order, in [0, 1].
    invalid_rate: share of predictions that are not a permutation of the labels, in [0, 1].
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
    >>> results["by_num_clips"][2]
    {'count': 1, 'binary_accuracy': 0.0, 'hamming_accuracy': 0.0, 'lcs_ratio': 0.5, \
'edit_distance': 2.0, 'kendall_tau': -1.0, 'pairwise_accuracy': 0.0, 'invalid_rate': 0.0, \
'unparsed_rate': 0.0}

    An invalid prediction is scored as given and counted:

    >>> results = splice.compute(predictions=[[1, 1, 2]], references=[[1, 2, 3]])
    >>> results["invalid_rate"], round(results["hamming_accuracy"], 4), results["lcs_ratio"]
    (1.0, 0.3333, 0.6666666666666666)

    Raw model text, groups and the random baseline:

    >>> text = evaluate.load("splice_metric", "text")
    >>> results = text.compute(
    ...     predictions=["<order>Video 2, Video 1</order>", "I think 1 then 2"],
    ...     references=[[2, 1], [1, 2]],
    ...     groups=["cooking", "sports"],
    ...     random_baseline=True,
    ... )
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
# Largest n whose n! permutations give the exact random baseline (see `expected_random`).
TABLE_MAX_N = 8
# Permutations drawn per n > TABLE_MAX_N for the baseline values without a closed form.
BASELINE_SAMPLES = 20_000

# Stands for a token that is not an integer label (1.5, True, "x", None inside a list): it
# can never equal a reference label because references may not hold it.
_NOT_A_LABEL = int(np.iinfo(np.int64).min)
_INT64_MAX = int(np.iinfo(np.int64).max)

# --- input checks -------------------------------------------------------------------------


def _as_label(value: Any) -> int | None:
    """An integer label, or None: bools and non-integral numbers are never labels."""
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
    _check_reference(labels, index)
    return labels


def _check_reference(labels: Sequence[int], index: int) -> None:
    if not len(labels):
        raise ValueError(f"reference {index}: empty (a reference needs at least one clip)")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if list(labels).count(x) > 1})
        raise ValueError(f"reference {index}: duplicate label {', '.join(map(str, dup))}")


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


class _Examples(NamedTuple):
    """Sequences back to back in one array, so that a group of them is one gather."""

    tokens: list[list[int]]  # per example, as read (`_NOT_A_LABEL` for non-labels)
    flat: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    notes: dict[int, str]  # what is wrong with a prediction, for strict mode
    unparsed: np.ndarray  # per example: no order could be read

    def matrix(self, rows: np.ndarray, width: int) -> np.ndarray:  # rows all of that length
        return self.flat[self.starts[rows, None] + np.arange(width)]


def _plain_ints(seqs: list[Any]) -> np.ndarray | None:
    """All tokens in one array when every example is a list or tuple of plain int labels
    (the usual case), checked in C; else None: the checks of each example say what is wrong."""
    if not set(map(type, seqs)) <= {list, tuple}:
        return None
    tokens = list(itertools.chain.from_iterable(seqs))
    if not set(map(type, tokens)) <= {int}:  # numpy alone would read True as 1
        return None
    if tokens and not _NOT_A_LABEL < min(tokens) <= max(tokens) <= _INT64_MAX:
        return None
    return np.fromiter(tokens, np.int64, len(tokens))


def _examples(seqs: Any, kind: str) -> _Examples:
    """Predictions or references read and checked; any input as Python values first, so
    that every kind (Arrow arrays, `datasets` columns, 2-D arrays) meets the same checks."""
    if hasattr(seqs, "to_pylist"):
        seqs = seqs.to_pylist()
    elif isinstance(seqs, np.ndarray) and seqs.ndim == 2:
        seqs = seqs.tolist()
    elif isinstance(seqs, (str, bytes)) or not isinstance(seqs, Iterable):
        raise ValueError(f"{kind} must be a list of sequences, got {type(seqs).__name__}")
    seqs = list(seqs)
    notes, unparsed = {}, np.zeros(len(seqs), dtype=bool)
    flat = _plain_ints(seqs)
    if flat is None and kind == "references":  # (plain ints are checked by `_score_examples`)
        seqs = [_reference_labels(ref, i) for i, ref in enumerate(seqs)]
    elif flat is None:
        read = [_prediction_tokens(pred) for pred in seqs]
        notes = {i: note for i, (_, note) in enumerate(read) if note is not None}
        unparsed[:] = [tokens is None for tokens, _ in read]
        seqs = [tokens or [] for tokens, _ in read]
    if flat is None:
        flat = np.fromiter(itertools.chain.from_iterable(seqs), np.int64)
    lengths = np.fromiter(map(len, seqs), np.int64, len(seqs))
    return _Examples(seqs, flat, np.cumsum(lengths) - lengths, lengths, notes, unparsed)


# --- the metrics (Appendix A.1) ------------------------------------------------------------

_CELLS = 2**22  # DP cells held at once ((n + 1) x (L + 1) per example): 16 MB per table


def _metrics(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Every metric (columns in METRICS order) of each row of predictions `pred` (rows x L
    tokens) against its reference `ref` (rows x n distinct labels). The definitions hold
    for sequences of any length and content: a non-label token equals no label."""
    (rows, n), length = ref.shape, pred.shape[1]
    step = max(1, _CELLS // ((n + 1) * (length + 1)))
    if rows > step:
        parts = range(0, rows, step)
        return np.concatenate([_metrics(pred[s : s + step], ref[s : s + step]) for s in parts])
    same = ref[:, :, None] == pred[:, None, :]  # same[:, i - 1, j - 1]: y_i = ŷ_j
    in_place = (pred[:, :n] == ref[:, :length]).sum(1)  # I(ŷ_i = y_i), i <= min(n, L)
    # LCS c(i, j) and Levenshtein D(i, j) by their recurrences, each cell over all rows
    c = np.zeros((n + 1, length + 1, rows), dtype=np.int32)
    d = np.zeros((n + 1, length + 1, rows), dtype=np.int32)
    d[:, 0] = np.arange(n + 1)[:, None]  # D(i, 0) = i
    d[0, :] = np.arange(length + 1)[:, None]  # D(0, j) = j
    for i in range(1, n + 1):
        for j in range(1, length + 1):
            match = same[:, i - 1, j - 1]
            c[i, j] = np.where(match, c[i - 1, j - 1] + 1, np.maximum(c[i - 1, j], c[i, j - 1]))
            nearest = np.minimum(np.minimum(d[i - 1, j], d[i, j - 1]), d[i - 1, j - 1])
            d[i, j] = np.where(match, d[i - 1, j - 1], 1 + nearest)
    lcs, edit = c[n, length], d[n, length]
    # first position of each reference label in the prediction; L when it is absent
    first = np.where(same, np.arange(length), length).min(axis=2, initial=length)
    valid = (length == n) & (first < length).all(1)  # n distinct labels in n places
    # reference pairs (a before b): concordant when both are predicted in that order,
    # discordant when in the other; a pair with a label missing is neither
    a, b = np.triu_indices(n, 1)
    both = (first[:, a] < length) & (first[:, b] < length)
    concordant = (both & (first[:, a] < first[:, b])).sum(1)
    discordant = (both & (first[:, a] > first[:, b])).sum(1)
    pairs = len(a)  # one clip has none: its pair metrics follow exactness
    tau = (concordant - discordant) / pairs if pairs else valid
    pairwise = concordant / pairs if pairs else valid
    binary = (length == n) & (in_place == n)
    return np.column_stack([binary, in_place / n, lcs / n, edit, tau, pairwise, ~valid])


def _score_examples(pred: _Examples, ref: _Examples) -> np.ndarray:
    """RATES of every example: one `_metrics` pass per (n, prediction length), a matrix.
    The references are checked on the way (empty, or repeating a label: usage errors)."""
    out = np.zeros((len(ref.lengths), len(RATES)))
    bad = ref.lengths == 0
    width = int(pred.lengths.max(initial=0)) + 1
    keys = ref.lengths * width + pred.lengths
    order = np.argsort(keys, kind="stable")
    for rows in np.split(order, np.flatnonzero(np.diff(keys[order])) + 1) if len(order) else []:
        n, length = divmod(int(keys[rows[0]]), width)
        labels = np.sort(ref.matrix(rows, n), axis=1)
        bad[rows] |= (labels[:, 1:] == labels[:, :-1]).any(1)
        if n and not bad[rows].any():
            out[rows, : len(METRICS)] = _metrics(pred.matrix(rows, length), ref.matrix(rows, n))
    if bad.any():
        i = int(np.argmax(bad))
        _check_reference(ref.tokens[i], i)
    out[:, len(METRICS)] = pred.unparsed
    return out


# --- aggregation ----------------------------------------------------------------------------


def _bootstrap(
    category: np.ndarray, rows: np.ndarray, level: float, iterations: int, rng: np.random.Generator
) -> dict[str, list[float]]:
    """Percentile bootstrap of the means. Resampling m examples with replacement is the
    same as drawing multinomial counts over their distinct rows of values, so the cost
    depends on how many distinct rows there are, not on m."""
    counts = np.bincount(category, minlength=len(rows))
    used = np.flatnonzero(counts)
    total = int(counts.sum())
    draws = rng.multinomial(total, counts[used] / total, size=iterations)
    means = draws @ rows[used] / total
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return {m: [float(lo), float(hi)] for m, lo, hi in zip(RATES, low, high, strict=True)}


def _breakdowns(
    values: np.ndarray,
    nclips: np.ndarray,
    groups: list[Hashable] | None,
    bootstrap: tuple[float, int, np.random.Generator] | None = None,
) -> dict[str, Any]:
    """Overall, per-n and per-group cells of examples given as rows of RATES values."""
    if bootstrap is not None:  # (level, resamples, generator), drawn over distinct rows
        order = np.lexsort(values.T[::-1])  # the rows in lexicographic order
        new = (np.diff(values[order], axis=0, prepend=np.nan) != 0).any(1)
        rows, category = values[order[new]], np.empty(len(values), dtype=np.int64)
        category[order] = np.cumsum(new) - 1

    def cell(members: np.ndarray) -> dict[str, Any]:
        count = int(members.sum())
        means = values[members].mean(0) if count else np.full(len(RATES), np.nan)
        out = {"count": count, **{m: float(v) for m, v in zip(RATES, means, strict=True)}}
        if bootstrap is not None and count:
            out["confidence_intervals"] = _bootstrap(category[members], rows, *bootstrap)
        return out

    result = cell(np.ones(len(values), dtype=bool))
    result["by_num_clips"] = {int(n): cell(nclips == n) for n in np.unique(nclips)}
    if groups is not None:
        index: dict[Hashable, int] = {}
        ids = np.fromiter((index.setdefault(g, len(index)) for g in groups), np.int64)
        result["by_group"] = {g: cell(ids == i) for g, i in index.items()}
    return result


# --- random baseline -----------------------------------------------------------------------


@functools.cache  # 8! permutations take a while; callers only read the array
def expected_random(n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Expected metrics (METRICS order) of a uniformly random permutation of n clips, and
    which of them are estimates. n <= TABLE_MAX_N: exact means over all n! permutations
    (exact sums: tau's is exactly 0). Larger n: closed forms for binary (1/n!), Hamming
    (1/n), tau (0), pairwise accuracy (1/2) and invalid rate (0); LCS ratio and edit
    distance have none and are means over BASELINE_SAMPLES permutations drawn with seed n."""
    if n < 1:
        raise ValueError(f"number of clips must be at least 1, got {n}")
    if n <= TABLE_MAX_N:  # every permutation of the reference 0..n-1
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
        table = _metrics(perms, np.tile(np.arange(n), (len(perms), 1)))
        return np.array([math.fsum(column) for column in table.T]) / len(table), ()
    perms = np.argsort(np.random.default_rng(n).random((BASELINE_SAMPLES, n)), axis=1)
    sampled = _metrics(perms, np.tile(np.arange(n), (BASELINE_SAMPLES, 1))).mean(0)
    values = [1 / math.factorial(n), 1 / n, sampled[2], sampled[3], 0.0, 0.5, 0.0]
    return np.array(values), ("lcs_ratio", "edit_distance")


def random_baseline(
    num_clips: Iterable[int], groups: Sequence[Hashable] | None = None
) -> dict[str, Any]:
    """Expected metrics of random orders for these clip counts (mean over examples), with
    the same breakdowns as `score`."""
    nclips = np.fromiter(num_clips, np.int64)
    return _baseline(nclips, None if groups is None else _check_groups(groups, len(nclips)))


def _baseline(nclips: np.ndarray, groups: list[Hashable] | None) -> dict[str, Any]:
    expected = np.zeros((int(nclips.max(initial=0)) + 1, len(RATES)))  # unparsed_rate: 0
    sampled: set[str] = set()
    for n in map(int, np.unique(nclips)):
        expected[n, : len(METRICS)], estimated = expected_random(n)
        sampled.update(estimated)
    return {**_breakdowns(expected[nclips], nclips, groups), "sampled_metrics": sorted(sampled)}


# --- public scoring ------------------------------------------------------------------------


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


def _refuse_invalid(values: np.ndarray, predictions: Any, pred: _Examples, ref: _Examples) -> None:
    """Strict mode: the first invalid prediction, as given, and everything wrong with it."""
    if (invalid := values[:, METRICS.index("invalid_rate")] > 0).any():
        i = int(np.argmax(invalid))
        tokens, labels = list(pred.tokens[i]), list(ref.tokens[i])
        shown = predictions[i] if isinstance(predictions, (list, tuple, np.ndarray)) else tokens
        raise ValueError(
            f"example {i}: prediction {_short(shown)} is not a permutation of the "
            f"reference {labels}: {_problem(tokens, labels, pred.notes.get(i))}"
        )


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
    """Score predicted clip orders: the metric's whole computation, for callers that skip
    `evaluate` and its Arrow cache (the pipeline's own tools). Takes the arguments of
    ``compute`` (see ``_KWARGS_DESCRIPTION``), as lists, numpy arrays or Arrow arrays."""
    if predictions is None or references is None:
        raise ValueError("both predictions and references are required")
    _check_options(confidence_level, bootstrap_iterations)
    ref = _examples(references, "references")
    pred = _examples(predictions, "predictions")
    if len(pred.lengths) != len(ref.lengths):
        raise ValueError(f"got {len(pred.lengths)} predictions for {len(ref.lengths)} references")
    checked = None if groups is None else _check_groups(groups, len(ref.lengths))
    values = _score_examples(pred, ref)
    if strict:
        _refuse_invalid(values, predictions, pred, ref)
    bootstrap = None
    if confidence_level is not None:
        bootstrap = (float(confidence_level), bootstrap_iterations, np.random.default_rng(seed))
    result = _breakdowns(values, ref.lengths, checked, bootstrap)
    if bootstrap is not None:
        result.update(confidence_level=bootstrap[0], bootstrap_iterations=bootstrap_iterations)
    if random_baseline:
        result["random_baseline"] = _baseline(ref.lengths, checked)
    return result


# --- evaluate module ------------------------------------------------------------------------


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
