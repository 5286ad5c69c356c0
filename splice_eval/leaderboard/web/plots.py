"""The page's three plots, as matplotlib figures Gradio's ``gr.Plot`` shows as images: score
against parameters (the board), score by clip count with the random and human lines, and
score by domain (an entry). No submitted text is drawn as a label of its own: matplotlib
reads ``$...$`` as mathematics, so names go through with math parsing off, or not at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure  # the page's import, as gradio is (about 1 s here)
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..records import MetricValue

WIDTH, HEIGHT, DPI = 6.4, 3.6, 100


@dataclass(frozen=True)
class Point:
    """One entry on the score-against-parameters plot."""

    params_b: float
    value: float
    low: float | None
    high: float | None
    open_weights: bool


def _figure(height: float = HEIGHT) -> Any:
    fig = Figure(figsize=(WIDTH, height), dpi=DPI)
    fig.subplots_adjust(left=0.12, right=0.97, top=0.95, bottom=0.16)
    return fig, fig.add_subplot()


def _errors(values: Sequence[float], lows, highs) -> list[list[float]] | None:
    """matplotlib's asymmetric error bars; none when any value lacks its interval."""
    if any(lo is None or hi is None for lo, hi in zip(lows, highs, strict=True)):
        return None
    below = [max(v - lo, 0.0) for v, lo in zip(values, lows, strict=True)]
    above = [max(hi - v, 0.0) for v, hi in zip(values, highs, strict=True)]
    return [below, above]


def score_vs_params(points: Sequence[Point], metric_label: str) -> Any:
    """Each entry with a parameter count: its score (with its interval) against its size, on
    a log axis; open and closed weights told apart."""
    fig, ax = _figure()
    styles = ((True, "o", "C0", "open weights"), (False, "s", "C1", "closed"))
    for open_weights, marker, color, label in styles:
        group = [p for p in points if p.open_weights == open_weights]
        if not group:
            continue
        # one collection each for the intervals and the points: a thousand entries draw in
        # a fraction of a second (per-point error bars took seconds)
        ranged = [p for p in group if p.low is not None and p.high is not None]
        if ranged:
            lows, highs = [p.low for p in ranged], [p.high for p in ranged]
            ax.vlines([p.params_b for p in ranged], lows, highs, colors=color, linewidth=0.8)
        ax.scatter([p.params_b for p in group], [p.value for p in group], s=14,
                   marker=marker, color=color, label=label)  # fmt: skip
    if points:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.legend(loc="best", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no entry states its parameters", ha="center", transform=ax.transAxes)
    ax.set_xlabel("parameters (billions, log scale)")
    ax.set_ylabel(metric_label)
    ax.grid(alpha=0.3)
    return fig


def _clip_keys(cells: Mapping[str, MetricValue]) -> list[str]:
    return sorted(cells, key=lambda k: (not str(k).isdigit(), int(k) if str(k).isdigit() else 0, k))


def by_clip_count(
    cells: Mapping[str, MetricValue],
    lines: Mapping[str, Mapping[str, MetricValue]],
    metric_label: str,
) -> Any:
    """The entry's score per clip count (2-7) with its intervals, and each reference line
    (``lines``: "random", "human" -> the same breakdown of that row), dashed."""
    fig, ax = _figure()
    keys = _clip_keys(cells)
    values = [cells[k].value for k in keys]
    errors = _errors(values, [cells[k].low for k in keys], [cells[k].high for k in keys])
    ax.errorbar(keys, values, yerr=errors, fmt="o-", capsize=3, label="this entry")
    for (name, line), style in zip(lines.items(), ("--", ":", "-."), strict=False):
        shared = [k for k in keys if k in line]
        if shared:
            ax.plot(shared, [line[k].value for k in shared], style, label=name)
    if not keys:
        ax.text(0.5, 0.5, "no breakdown by clip count", ha="center", transform=ax.transAxes)
    else:
        ax.legend(loc="best", fontsize="small")
    ax.set_xlabel("clips in the video")
    ax.set_ylabel(metric_label)
    ax.grid(alpha=0.3)
    return fig


def by_domain(cells: Mapping[str, MetricValue], metric_label: str) -> Any:
    """Horizontal bars, one per domain, with intervals; domain names are the build's
    (COIN's taxonomy), drawn as plain text."""
    keys = sorted(cells, key=str)
    fig, ax = _figure(max(HEIGHT, 0.35 * len(keys) + 1))
    values = [cells[k].value for k in keys]
    errors = _errors(values, [cells[k].low for k in keys], [cells[k].high for k in keys])
    positions = list(range(len(keys)))
    ax.barh(positions, values, xerr=errors, capsize=2, color="#5b7bb5")
    ax.set_yticks(positions, [str(k) for k in keys])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    if not keys:
        ax.text(0.5, 0.5, "no breakdown by domain", ha="center", transform=ax.transAxes)
    ax.invert_yaxis()
    ax.set_xlabel(metric_label)
    ax.grid(axis="x", alpha=0.3)
    _fit_labels(fig, ax)
    return fig


def _fit_labels(fig: Any, ax: Any) -> None:
    """Move the axes right until the longest domain name fits in the figure (the fixed
    left margin cut "Food and Snack" to "nd Snack")."""
    widest = max((t.get_window_extent().width for t in ax.get_yticklabels()), default=0)
    room = (widest + 12) / (fig.get_figwidth() * fig.dpi)  # the labels, their pad, a margin
    fig.subplots_adjust(left=min(max(0.12, room), 0.6))


def png(fig: Any) -> bytes:
    """The figure as PNG bytes (tests, exports)."""
    import io  # noqa: PLC0415

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
