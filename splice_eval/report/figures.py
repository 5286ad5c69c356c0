"""The figures of ``splice report`` (the paper's Figs. 2, 3 and 5-7) as PNG files, drawn
from the report's plain data (``numbers.build_report``) with matplotlib's Agg backend, so
no display is needed. The run labels here are the ones the report's tables use too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from splice_build.errors import require
from splice_eval.predictions import HUMAN_MODEL
from splice_eval.scoring.runs import NO_PROBE

# "": a file that does not say its config (another tool's; see predictions.iter_predictions)
CONFIG_TITLES = {
    "video": "Vision Only",
    "video_text": "Vision+Text",
    "text": "Text",
    "": "Config not stated",
}
RANDOM_ROW = "Random (exact)"


def _pyplot():
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def require_matplotlib():
    """matplotlib, or the one-line error naming the ``report`` extra (before any scoring)."""
    return require("matplotlib", "report", "splice report (its PNG figures)")


def _label(r: dict) -> str:
    probe = r.get("probe", NO_PROBE)
    tail = "" if probe == NO_PROBE else f", probe {probe}"
    return f"{r['model']} ({CONFIG_TITLES[r['config']]}{tail})"


def config_cell(r: dict) -> str:
    """A run's config as the tables show it, with its probe when it has one."""
    probe = r.get("probe", NO_PROBE)
    return r["config"] if probe == NO_PROBE else f"{r['config']}, probe {probe}"


def plot_by_clips(report: dict, path: Path) -> Path:
    """Fig. 2: binary accuracy against the number of clips, human and random marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    keys = list(report["random_by_clips"])
    xs = [int(k) for k in keys]
    ax.plot(xs, [report["random_by_clips"][k] for k in keys], "--", color="gray", label=RANDOM_ROW)
    for r in report["runs"]:
        rows = r["by_clips"]
        x = [int(row["key"]) for row in rows]
        y = np.array([row["mean"] for row in rows])
        err = np.array([[row["mean"] - row["lo"], row["hi"] - row["mean"]] for row in rows]).T
        style = {"color": "red", "linewidth": 2.5} if r["model"] == HUMAN_MODEL else {}
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=_label(r), **style)
    ax.set_xlabel("number of clips")
    ax.set_ylabel("binary accuracy")
    ax.set_xticks(xs)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_by_key(report: dict, what: str, config: str, path: Path) -> Path:
    """Figs. 3, 5-6: bars per model with 95% intervals; human red and random gray dashes."""
    plt = _pyplot()
    runs = [r for r in report["runs"] if r["config"] == config]
    models = [r for r in runs if r["model"] != HUMAN_MODEL]
    human = next((r for r in runs if r["model"] == HUMAN_MODEL), None)
    keys = [row["key"] for row in runs[0][f"by_{what}"]] if runs else []
    fig, ax = plt.subplots(figsize=(max(9, 0.9 * len(keys) + 4), 4.8), dpi=100)
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(keys))
    for i, r in enumerate(models):
        got = {row["key"]: row for row in r[f"by_{what}"]}
        mean = np.array([got[k]["mean"] for k in keys])
        err = np.array(
            [[got[k]["mean"] - got[k]["lo"], got[k]["hi"] - got[k]["mean"]] for k in keys]
        ).T
        probe = r.get("probe", NO_PROBE)
        name = r["model"] if probe == NO_PROBE else f"{r['model']}, probe {probe}"
        ax.bar(x - 0.4 + width * (i + 0.5), mean, width, yerr=err, capsize=2, label=name)
    rand = {row["key"]: row["random"] for row in runs[0][f"by_{what}"]} if runs else {}
    for j, k in enumerate(keys):
        ax.hlines(
            rand[k],
            j - 0.45,
            j + 0.45,
            colors="gray",
            linestyles="dashed",
            label="random (weighted)" if j == 0 else None,
        )
        if human:
            got = {row["key"]: row for row in human[f"by_{what}"]}
            if k in got:
                ax.hlines(
                    got[k]["mean"],
                    j - 0.45,
                    j + 0.45,
                    colors="red",
                    linestyles="dashed",
                    label="human" if j == 0 else None,
                )
    ax.set_xticks(x)
    ax.set_xticklabels(keys, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("binary accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Binary accuracy by {what}, {CONFIG_TITLES[config]}")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


PROBE_PANEL_METRICS = ("binary_accuracy", "hamming_accuracy")


def plot_probes(report: dict, path: Path) -> Path:
    """The probe panel: per probed run, the change against its model's ``none`` run in
    binary and Hamming accuracy, with the paired 95% bootstrap interval."""
    plt = _pyplot()
    comparisons = report["probes"]
    names = [f"{c['model']} ({c['config']})\n{c['probe']}" for c in comparisons]
    fig, axes = plt.subplots(
        1, len(PROBE_PANEL_METRICS), figsize=(max(9, 1.2 * len(names) + 3), 4.8), dpi=100
    )
    x = np.arange(len(names))
    for ax, metric in zip(axes, PROBE_PANEL_METRICS, strict=True):
        changes = [next(ch for ch in c["changes"] if ch["metric"] == metric) for c in comparisons]
        delta = np.array([ch["delta"] for ch in changes])
        err = np.array([[ch["delta"] - ch["lo"], ch["hi"] - ch["delta"]] for ch in changes]).T
        ax.bar(x, delta, 0.6, yerr=err, capsize=3)
        ax.axhline(0, color="gray", linewidth=1)
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(f"{metric}: probed - none")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("What each probe costs (paired 95% intervals by video)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
