"""The paper's published results (Ballout et al., SPLICE): Tables 2-5 and Section 7.5's
first/last-adjacency figures, copied here so a report can show them beside a user's runs.

They are constants, not a reading of the paper's text at run time: the paper is not shipped
with the project. Every figure names the table or section it comes from. They were produced
with the authors' release and frame settings, which a user's build and ``--frames`` need not
match, so any comparison says so (``PAPER_NOTE``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PAPER_NOTE = "paper: the authors' release and frame settings"

# The paper's input modalities as this project's configs.
VISION = "video"
VISION_TEXT = "video_text"
TEXT = "text"
BINARY, HAMMING, LCS, EDIT = (
    "binary_accuracy",
    "hamming_accuracy",
    "lcs_ratio",
    "edit_distance",
)


@dataclass(frozen=True)
class MetricTable:
    """A table of whole-benchmark scores: one row per model, one column per (config, metric);
    ``None`` where the paper prints a dash."""

    table: str
    caption: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[str, tuple[float | None, ...]], ...]


@dataclass(frozen=True)
class GroupTable:
    """Binary accuracy (%) on reasoning-type task groups (video only). ``groups`` are the
    names used in ``splice_eval/data/reasoning_groups.json``, with the paper's video counts."""

    table: str
    caption: str
    groups: tuple[tuple[str, int], ...]
    rows: tuple[tuple[str, tuple[float, ...]], ...]


@dataclass(frozen=True)
class AdjacencyFigure:
    """Section 7.5: the share of change/replace videos with four or more clips whose first
    and last chronological clips were put next to each other (%)."""

    section: str
    who: str
    adjacent_pct: float
    model: str  # the row name a user's run is matched on (the paper's full model name)


TABLE_2 = MetricTable(
    table="Table 2",
    caption="Binary and Hamming accuracy by input modality",
    columns=tuple((c, m) for c in (VISION, VISION_TEXT, TEXT) for m in (BINARY, HAMMING)),
    rows=(
        ("Random", (0.2114, 0.3385, 0.2114, 0.3385, None, None)),
        ("Human", (0.8486, 0.8855, 0.8332, 0.8904, None, None)),
        ("Qwen2-VL-7B", (0.3091, 0.4432, 0.4354, 0.5683, 0.3318, 0.4924)),
        ("Qwen2-VL-72B", (0.2990, 0.4170, 0.5708, 0.6820, 0.5402, 0.6907)),
        ("Gemini-1.5-Flash", (0.4599, 0.5825, 0.5936, 0.7115, 0.4642, 0.6029)),
        ("Gemini-2.0-Flash-Exp", (0.5108, 0.6188, 0.6939, 0.7931, 0.5271, 0.6652)),
        ("InternVL2.5-78B", (0.2899, 0.4243, 0.4856, 0.6046, 0.4768, 0.6062)),
        ("LLaVA-OneVision-72B", (0.2260, 0.3514, 0.4256, 0.5597, 0.4210, 0.5545)),
    ),
)

TABLE_5 = MetricTable(
    table="Table 5",
    caption="Binary, Hamming, LCS and edit distance, vision only and vision+text",
    columns=tuple((c, m) for c in (VISION, VISION_TEXT) for m in (BINARY, HAMMING, LCS, EDIT)),
    rows=(
        ("Random", (0.2114, 0.3385, 0.6554, 2.0970, 0.2114, 0.3385, 0.6554, 2.0970)),
        ("Human", (0.8486, 0.8855, 0.9359, 0.4105, 0.8332, 0.8904, 0.9337, 0.3875)),
        ("Qwen2-VL-7B", (0.3091, 0.4432, 0.7130, 1.7891, 0.4354, 0.5683, 0.7896, 1.4377)),
        ("Qwen2-VL-72B", (0.2990, 0.4170, 0.7011, 1.8465, 0.5708, 0.6820, 0.8483, 1.0677)),
        ("Gemini-1.5-Flash", (0.4599, 0.5825, 0.7980, 1.3458, 0.5936, 0.7115, 0.8633, 0.9734)),
        ("Gemini-2.0-Flash-Exp", (0.5108, 0.6188, 0.7927, 1.2511, 0.6939, 0.7931, 0.9030, 0.7788)),
        ("InternVL2.5-78B", (0.2899, 0.4243, 0.7050, 1.8364, 0.4856, 0.6046, 0.7694, 1.3602)),
        ("LlavaOnevision-72B", (0.2260, 0.3514, 0.6615, 2.0636, 0.4256, 0.5597, 0.7866, 1.4312)),
    ),
)

TABLE_3 = GroupTable(
    table="Table 3",
    caption="Electrical Appliance domain: change/replace tasks against the others",
    groups=(("electrical_change_replace", 328), ("electrical_other", 157)),
    rows=(
        ("Random", (15.02, 22.68)),
        ("Human", (88.11, 86.62)),
        ("Gemini-1.5-Flash", (26.22, 54.14)),
        ("Gemini-2.0-Flash-Exp", (26.83, 53.50)),
        ("Qwen2-VL-72B", (21.04, 33.12)),
    ),
)

TABLE_4 = GroupTable(
    table="Table 4",
    caption="Task subsets probing reasoning types (causal/contextual, knowledge, spatial)",
    groups=(
        ("change_replace", 844),
        ("make", 765),
        ("everyday", 342),
        ("technical", 300),
        ("spatial", 138),
    ),
    rows=(
        ("Random", (18.02, 19.14, 23.26, 22.49, 19.19)),
        ("Human", (84.95, 86.01, 85.38, 80.00, 76.09)),
        ("Gemini-1.5-Flash", (28.44, 61.18, 56.14, 44.33, 24.64)),
        ("Gemini-2.0-Flash-Exp", (32.11, 68.37, 59.65, 47.00, 36.96)),
        ("Qwen2-VL-72B", (20.38, 36.86, 36.55, 32.00, 21.01)),
    ),
)

ADJACENCY = (
    AdjacencyFigure("Section 7.5", "Gemini-2.0", 57.36, "Gemini-2.0-Flash-Exp"),
    AdjacencyFigure("Section 7.5", "Human", 2.45, "Human"),
    AdjacencyFigure("Section 7.5", "Random", 27.29, "Random"),
)

METRIC_TABLES = (TABLE_2, TABLE_5)
GROUP_TABLES = (TABLE_3, TABLE_4)


def model_key(name: str) -> str:
    """A model name reduced so that a user's run matches the paper's row by name: a Hub
    organisation prefix (``Qwen/``), case, punctuation and an "-instruct" suffix are
    ignored, and ``_`` between digits reads as a dot ("Qwen/Qwen2-VL-7B-Instruct" is the
    paper's "Qwen2-VL-7B", "OpenGVLab/InternVL2_5-78B" its "InternVL2.5-78B";
    "gemini-2.0-flash-exp" and "Gemini-2.0-Flash-Exp" are one model, so are
    "LLaVA-OneVision-72B" and "LlavaOnevision-72B")."""
    name = re.sub(r"(?<=\d)_(?=\d)", ".", name.rsplit("/", 1)[-1])
    key = re.sub(r"[^a-z0-9.]", "", name.lower())
    return key.removesuffix("instruct")


def paper_models() -> tuple[str, ...]:
    """Every model name of the paper's rows, in table order, once each."""
    names = [name for table in (*METRIC_TABLES, *GROUP_TABLES) for name, _ in table.rows]
    names += [fig.model for fig in ADJACENCY]
    return tuple(dict.fromkeys(names))
