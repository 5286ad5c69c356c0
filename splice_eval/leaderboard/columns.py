"""The board's columns, declared once: ``show``, ``export`` and the web page all take their
names, labels, types, default visibility and meaning from here (``docs/leaderboard.md``'s
column list is this table), so a column added here appears everywhere.

A row (``table.board_rows``) is a dict keyed by column name. A column of type ``metric``
holds the value (a float, None where the entry has none); its bootstrap 95% interval is
under ``<name>.low`` and ``<name>.high`` (``interval_keys``). Metric columns are per
config (``<config>.<metric>``), side by side, as the paper's Table 2 sets them.
"""

from __future__ import annotations

from dataclasses import dataclass

from splice_dataset import CONFIGS
from splice_eval.report.paper import BINARY, EDIT, HAMMING, LCS
from splice_eval.run.probes import NONE as NO_PROBE
from splice_eval.run.probes import PROBES

TEXT, INT, FLOAT, METRIC, RANK, BOOL = "text", "int", "float", "metric", "rank", "bool"
# The default ranking metric: the paper's headline. Any metric of METRICS can rank.
DEFAULT_METRIC = "binary_accuracy"
# The config a board without --config ranks by: video and captions, the paper's richest
# input (and the minuend of the visual gain).
DEFAULT_CONFIG = "video_text"
# What can be ranked and bootstrapped: the paper's four metrics (splice_metric's
# PAPER_METRICS, named by the paper's module so a view never imports evaluate), per video.
METRICS: tuple[str, ...] = (BINARY, HAMMING, LCS, EDIT)
LOWER_IS_BETTER = frozenset({"edit_distance"})
# Extras, where submitted: accuracy on the question formats, binary accuracy under a probe.
QUESTION_METRICS = ("pairwise_questions", "choice_questions")
PROBE_METRICS = tuple(f"probe_{p.replace('-', '_')}" for p in PROBES if p != NO_PROBE)
METRIC_LABELS = {
    "binary_accuracy": "binary",
    "hamming_accuracy": "hamming",
    "lcs_ratio": "LCS",
    "edit_distance": "edit",
    "pairwise_questions": "pairwise Q",
    "choice_questions": "choice Q",
    **{f"probe_{p.replace('-', '_')}": f"{p} probe" for p in PROBES if p != NO_PROBE},
}
VISUAL_GAIN = "visual_gain"
STAND_IN = "stand_in"


def probe_metric(probe: str) -> str:
    """The metric name an entry's run under ``probe`` is stored as."""
    return f"probe_{probe.replace('-', '_')}"


@dataclass(frozen=True)
class Column:
    name: str  # the row's key
    label: str  # the header
    type: str  # TEXT, INT, FLOAT, METRIC, RANK, BOOL
    shown: bool  # shown by default (the others a click away)
    description: str  # what the column means (docs, page tooltips)
    config: str | None = None  # a metric column's config
    metric: str | None = None  # a metric column's metric
    higher_better: bool = True


def interval_keys(name: str) -> tuple[str, str]:
    """A metric column's interval keys in a row."""
    return f"{name}.low", f"{name}.high"


def metric_column(config: str, metric: str) -> str:
    return f"{config}.{metric}"


_METRIC_WORDS = {
    "binary_accuracy": "share of videos whose whole order is right (the paper's headline)",
    "hamming_accuracy": "share of clips put in their right position",
    "lcs_ratio": "longest common subsequence with the true order over the clip count",
    "edit_distance": "edits (Levenshtein) from the answer to the true order; lower is better",
    "pairwise_questions": "accuracy on the pairwise question format (which of two clips first)",
    "choice_questions": "accuracy on the multiple-choice question format (which order)",
}


def _metric_description(metric: str) -> str:
    if metric.startswith("probe_"):
        return (
            f"binary accuracy with the clips shown under the {metric[6:].replace('_', '-')} "
            "probe (what the score rests on)"
        )
    return _METRIC_WORDS[metric]


# The source a board's build was cut from, as its card names it (``BoardConfig.source_title``):
# COIN's boards, and every board made before other sources were read.
COIN = "COIN"
CONTAMINATION = "contamination"


def _contamination(source: str = COIN) -> Column:
    """The one declaration of the contamination column, for a board of ``source``."""
    return Column(
        CONTAMINATION,
        f"{source} in training?",
        TEXT,
        True,
        f"the submitter's declaration whether the training data includes {source} or its videos",
    )


def for_source(columns: tuple[Column, ...], source: str = COIN) -> tuple[Column, ...]:
    """``columns`` as a board of ``source`` labels them: its contamination column asks
    whether that source (not COIN) was in the training data."""
    if source == COIN:
        return columns
    own = _contamination(source)
    return tuple(own if c.name == CONTAMINATION else c for c in columns)


def _columns() -> tuple[Column, ...]:
    head = [
        Column(
            "rank",
            "rank",
            RANK,
            True,
            "rank range in the ranking config by the ranking metric, from a paired bootstrap "
            "over videos: 1 + entries better than it - entries not worse than it",
        ),
        Column("rank_low", "rank low", INT, False, "1 + the entries reliably better"),
        Column("rank_high", "rank high", INT, False, "the entries not reliably worse"),
        Column("name", "model", TEXT, True, "the entry's name"),
        Column("tier", "tier", TEXT, True, "reported (paper), rescored (here), reproduced"),
        Column("kind", "kind", TEXT, False, "model, or a reference row seeded by init"),
        Column("coverage", "coverage", FLOAT, True, "share of the build's videos answered"),
        Column("partial", "partial", BOOL, False, "added with --allow-partial"),
    ]
    metrics = []
    for metric in METRICS:
        for config in CONFIGS:
            metrics.append(
                Column(
                    metric_column(config, metric),
                    f"{config} {METRIC_LABELS[metric]}",
                    METRIC,
                    metric == DEFAULT_METRIC,
                    f"{config}: {_metric_description(metric)}; bootstrap 95% interval over videos",
                    config=config,
                    metric=metric,
                    higher_better=metric not in LOWER_IS_BETTER,
                )
            )
    metrics.append(
        Column(
            VISUAL_GAIN,
            "visual gain",
            METRIC,
            True,
            "the same model's video_text score minus its text score by the ranking metric: "
            "what seeing the clips adds to the captions (paired bootstrap interval)",
            metric=DEFAULT_METRIC,
        )
    )
    for metric in (*QUESTION_METRICS, *PROBE_METRICS):
        for config in CONFIGS:
            metrics.append(
                Column(
                    metric_column(config, metric),
                    f"{config} {METRIC_LABELS[metric]}",
                    METRIC,
                    False,
                    f"{config}: {_metric_description(metric)}; where submitted",
                    config=config,
                    metric=metric,
                )
            )
    provenance = [
        Column("model", "model id", TEXT, False, "the model's id (e.g. its Hub id)"),
        Column("revision", "revision", TEXT, False, "the model's revision"),
        Column("params_b", "params (B)", FLOAT, True, "parameters, billions"),
        Column("weights", "weights", TEXT, True, "open or closed weights"),
        Column("toolkit", "toolkit", TEXT, True, "what ran the model"),
        Column("toolkit_version", "toolkit version", TEXT, False, "the toolkit's version"),
        Column("backend", "backend", TEXT, False, "splice run's backend"),
        Column("frames", "frames", TEXT, True, "frames per clip, or a rate (1fps)"),
        Column("long_side", "long side (px)", INT, False, "frames' longer side, pixels"),
        Column("clips_as", "clips as", TEXT, False, "clips given as video or as images"),
        Column("prompt_version", "prompt", TEXT, False, "the prompt's fingerprint"),
        Column("generation", "generation", TEXT, False, "generation settings"),
        Column("date", "date", TEXT, True, "when the answers were produced"),
        Column("submitter", "submitter", TEXT, False, "who submitted the entry"),
        _contamination(),
        Column("contamination_note", "contamination note", TEXT, False, "what was declared"),
        Column("paper", "source", TEXT, False, "where a reported row's figures come from"),
    ]
    tail = [
        Column("configs", "configs", TEXT, False, "the configs the entry answered"),
        Column("slug", "folder", TEXT, False, "the entry's folder on the board"),
        Column("prediction_file", "predictions", TEXT, False, "the prediction file as submitted"),
        Column("metric_version", "metric version", TEXT, False, "the metric its scores came from"),
        Column("error", "error", TEXT, True, "why the entry could not be read"),
        Column(
            STAND_IN,
            "stand-in videos",
            BOOL,
            False,
            "the board's build was cut from rendered stand-in videos (the demo's), not COIN's: "
            "its scores are not comparable with the paper's rows (every view of such a board "
            "has a banner; show and every export this column)",
        ),
    ]
    return (*head, *metrics, *provenance, *tail)


COLUMNS: tuple[Column, ...] = _columns()
BY_NAME: dict[str, Column] = {c.name: c for c in COLUMNS}
PROVENANCE_COLUMNS = tuple(
    c.name
    for c in COLUMNS
    if c.name
    in {
        "model",
        "revision",
        "params_b",
        "weights",
        "toolkit",
        "toolkit_version",
        "backend",
        "frames",
        "long_side",
        "clips_as",
        "prompt_version",
        "generation",
        "date",
        "submitter",
        "contamination",
        "contamination_note",
        "paper",
    }
)


def shown(names: tuple[str, ...] | None = None) -> tuple[Column, ...]:
    """The columns shown by default, or those named (in COLUMNS' order)."""
    if names is None:
        return tuple(c for c in COLUMNS if c.shown)
    wanted = set(names)
    return tuple(c for c in COLUMNS if c.name in wanted)


def view_columns(
    config: str | None,
    metric: str = DEFAULT_METRIC,
    extra: tuple[str, ...] = (),
    stand_in: bool = False,
    source: str = COIN,
) -> tuple[Column, ...]:
    """What every view of a ranking shows (``show``, the Markdown and HTML exports, the
    page): the columns shown by default, those named in ``extra``, the ranked metric's
    column (``<config>.<metric>``: a ranking always shows what it ranks by) and, on a
    stand-in build, ``stand_in``; with ``config``, only that config's metric columns;
    labelled for the board's ``source`` (`for_source`)."""
    ranked = metric_column(config or DEFAULT_CONFIG, metric)
    wanted = {c.name for c in COLUMNS if c.shown} | set(extra) | {ranked}
    if stand_in:
        wanted.add(STAND_IN)
    return tuple(
        c
        for c in for_source(COLUMNS, source)
        if c.name in wanted and (config is None or c.config is None or c.config == config)
    )
