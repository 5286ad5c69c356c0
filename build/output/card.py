"""The dataset card (stage 7): README.md with the YAML header the Hub and ``load_dataset`` read.

The YAML is assembled with ``datasets``' and ``huggingface_hub``'s own serialisers
(``MetadataConfigs`` for ``configs:``, ``DatasetInfosDict`` for ``dataset_info:``,
``DatasetCardData`` for the rest), so it is exactly what ``push_to_hub`` would write, minus
its bugs with default configs. The body comes from ``templates/card.md``, with the sections
only a card's source can say from ``templates/coin.md`` (COIN's words and figures, as they
always were) or ``templates/source.md`` (any other source, from its ``SourceCard``); the
repository's own README.md is rendered from the same template with another ``title``, ``intro`` and
``extra_sections``, without the ``built_with`` link to itself (and ``front_matter=False`` if
GitHub should not show the YAML). A build's card is read on the Hub by people without this
code: it says how to load, decode and score with ``datasets`` and ``evaluate`` alone, and
names the code only in ``BUILT_WITH``.

The tables live in ``card_tables`` (``validate`` reads them back with the same formatting)
and the provenance list in ``provenance``; their names are re-exported here, where the
card's users have always found them.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import re
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from string import Template
from typing import Any

import pyarrow as pa
from huggingface_hub import DatasetCardData

from splice_build.output.card_tables import (
    TABLE1_HEADER,
    TABLE6_HEADER,
    domain_table,
    field_rows,
    human_size,
    markdown_table,
    stats_summary,
    table1_rows,
    table6_rows,
)
from splice_build.output.provenance import (
    Provenance,
    ReleaseSource,
    provenance_block,
    provenance_json,
)
from splice_build.output.stats import BIN_LABELS, BuildStats, compute_stats
from splice_build.output.writing.shards import WriteResult
from splice_build.sources.base import SourceCard
from splice_dataset import (
    CLIP_CONFIGS,
    DATASETS_MIN_VERSION,
    DEFAULT_CONFIG,
    TEXT_QUESTION_CONFIGS,
    WRITTEN_CONFIGS,
    columns,
    data_files_pattern,
    features,
    shard_dir,
)
from splice_formats import CHOICE, DEFAULT_SEED, PAIRWISE

DEFAULT_TITLE = "SPLICE: order the shuffled event clips of COIN instructional videos"
DEFAULT_INTRO = (
    "SPLICE (Ballout, Wilfred et al., 2025) probes event-based visual reasoning: each row is "
    "one COIN instructional video cut into one clip per annotated step (2 to 7), shuffled "
    'and labelled "Video 1" .. "Video n"; a model must put the clips back in chronological '
    "order. This folder was produced by the open SPLICE build pipeline from COIN's "
    "annotations and local copies of the videos."
)
LICENSE = "cc-by-nc-4.0"
TASK_CATEGORIES = ["video-text-to-text"]
TAGS = ["video", "event-ordering", "temporal-reasoning", "coin", "benchmark", "splice"]
# The ids the card's examples name before it is published: `splice publish` writes the real
# ones into what it uploads and refuses a card that still names one (`remote/hub_ids`).
DATASET_PLACEHOLDER = "ORG/splice"
METRIC_PLACEHOLDER = "ORG/splice_metric"
CODE_PLACEHOLDER = "https://github.com/ORG/splice-benchmark"
# The code that writes this card. A Hub visitor has none of it: the card's Load, Decode and
# Score need only `datasets` and `evaluate`, and this one marked paragraph is the card's only
# pointer to the code (tests check the rest of a card names none of it).
CODE_REPOSITORY = CODE_PLACEHOLDER


def built_with_paragraph(origin: str = "from COIN (or imports the authors' release)") -> str:
    """The card's one paragraph naming the code; ``origin``: what it builds this card from."""
    return (
        f"**Built with** the SPLICE code, [`splice-benchmark`]({CODE_REPOSITORY}): it builds "
        f"this dataset {origin} and holds the rest: frame sampling as in the paper, the "
        "paper's prompts, baselines, model runners (OpenAI-compatible endpoints, "
        "transformers, lmms-eval, VLMEvalKit), the human ordering protocol and a results "
        "report; its `docs/` folder is the manual. Nothing below needs it: every config is "
        "plain Parquet for `datasets`, and the metric is an `evaluate` module on the Hub."
    )


BUILT_WITH = built_with_paragraph()
_CONFIG_BLURB = {
    "video": "the clips only",
    "video_text": "the clips and their step captions",
    "text": "the step captions only (no video)",
    "text_pairwise": 'the `text` rows as "which came first?" questions over two clips',
    "text_choice": "the `text` rows as multiple-choice questions over candidate orders",
}


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


def card_data(written: WriteResult, provenance: Provenance | None = None) -> DatasetCardData:
    """The YAML header: configs (each its own data files), dataset_info, licence, tags.
    (``datasets`` is imported here, not with the module: the validator and the report use
    the tables above without it.)"""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    source = provenance.source if provenance is not None else None
    other = source is not None and source.name != "coin"  # a build of another source
    data = DatasetCardData(
        license=source.license if other else LICENSE,
        language="en",
        pretty_name=f"SPLICE from {source.title}" if other else "SPLICE",
        task_categories=TASK_CATEGORIES,
        tags=[source.name if other and t == "coin" else t for t in TAGS]
        + ([STAND_IN_TAG] if provenance and provenance.stand_in else []),
        size_categories=_size_category(written.num_rows),
        source_datasets=[source.title if other else "COIN"],
    )
    # `load_dataset` keys its cache of a local folder on this YAML alone (not on the files),
    # so a rebuild with another seed would silently load the old rows: the shards'
    # fingerprint in each config's description gives every build its own cache.
    fingerprint = written.fingerprint() if written.has_shards else ""
    configs = {}
    for config in WRITTEN_CONFIGS:
        entry: dict[str, Any] = {
            "data_files": [
                {"split": written.split, "path": data_files_pattern(config, written.split)}
            ]
        }
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        if fingerprint:
            entry["description"] = f"SPLICE {config} config, shards sha256 {fingerprint[:16]}"
        configs[config] = entry
    MetadataConfigs(configs).to_dataset_card_data(data)
    # A card without shards (the repository's README, projected from annotations) states
    # no sizes rather than wrong ones.
    if written.has_shards:
        infos = {}
        for config in WRITTEN_CONFIGS:
            num_bytes = written.num_bytes(config)
            infos[config] = DatasetInfo(
                features=features(config),
                splits=SplitDict(
                    {
                        written.split: SplitInfo(
                            name=written.split,
                            num_bytes=num_bytes,
                            num_examples=written.num_examples(config),
                        )
                    }
                ),
                download_size=written.download_size(config),
                dataset_size=num_bytes,
            )
        DatasetInfosDict(infos).to_dataset_card_data(data)
    if provenance is not None:
        data["splice_build"] = _build_block(written, provenance, fingerprint)
        if provenance.release is not None:
            data["source_datasets"] = ["COIN", provenance.release.repo_id]
    return data


def _build_block(written: WriteResult, provenance: Provenance, fingerprint: str) -> dict:
    """The card's ``splice_build`` block: provenance, the source and the build's identity."""
    source = provenance.source
    block: dict[str, Any] = {
        "version": provenance.version,
        "seed": provenance.seed,
        "annotations_sha256": provenance.annotations_sha256,
        "stand_in": provenance.stand_in,
        "videos": written.num_rows,
        "clips": written.num_clips,
    }
    if provenance.release is not None:
        block["origin"] = "release"
        block["release"] = asdict(provenance.release)
    if provenance.tolerance is not None:
        block["tolerance"] = provenance.tolerance
    if source is not None:  # what the build read, named; `build_id` covers it
        block["source"] = source.identity()
    if fingerprint:  # `splice validate` recomputes it: a changed byte fails the build
        block["shards_sha256"] = fingerprint
        # the build's identity (`identity`): recorded by every prediction file made on
        # it, and recomputed by `splice validate` shard by shard (which reports a card
        # left without one, because a shard did not read back)
        with contextlib.suppress(pa.ArrowException, OSError):
            digests = written.digests()
            if source is not None:
                digests = replace(digests, source=source.identity())
            block.update(digests.as_card())
    return block


def _files_cell(written: WriteResult, config: str) -> str:
    """The configs table's "files" cell: the config's folder, and its size in a build."""
    cell = f"`{shard_dir(config)}/`"
    if written.has_shards:
        cell += f", {human_size(written.download_size(config))}"
    return cell


def _download_note(written: WriteResult) -> str:
    """What a user downloads per config, and what the Hub stores once."""
    a, b = CLIP_CONFIGS
    note = (
        f"Each config reads only its own folder, so downloading a config fetches exactly its "
        f"files. `{a}` and `{b}` hold the same clip bytes in the same row groups, written "
        "with Parquet content-defined chunking: the Hub's chunk-deduplicating storage (Xet) "
        "keeps the clips once, but each of the two downloads carries them."
    )
    if written.has_shards:
        sizes = ", ".join(f"`{c}` {human_size(written.download_size(c))}" for c in WRITTEN_CONFIGS)
        note += f" In this build: {sizes}."
    return note


STAND_IN_TAG = "stand-in-videos"  # the card's tag of a stand-in build
STAND_IN_NOTICE = (
    "> **Demo build with stand-in videos.** The annotations are real COIN entries, but the "
    "clips were cut from videos the demo rendered itself (one visibly different scene per "
    "step), not from COIN's YouTube videos. Scores on this build say nothing about a model; "
    "the statistics below describe the stand-ins.\n\n"
)


def stand_in_notice(source_title: str | None = None) -> str:
    """The card's notice of a stand-in build: COIN's words (``source_title`` None), else
    the demo of another source, whose annotations are the demo's own."""
    if source_title is None:
        return STAND_IN_NOTICE
    return (
        "> **Demo build with stand-in videos.** The clips were cut from videos the demo "
        f"rendered itself (one visibly different scene per step), not from {source_title}'s "
        f"videos, and its annotations are the demo's own, written in {source_title}'s "
        "format. Scores on this build say nothing about a model; the statistics below "
        "describe the stand-ins.\n\n"
    )


def source_texts(source: SourceCard | None) -> dict[str, str]:
    """`render_card`'s title and intro for a build of another source than COIN (none for
    COIN: its card keeps its words)."""
    if source is None or source.name == "coin":
        return {}
    return {
        "title": f"SPLICE from {source.title}: order the shuffled event clips of its videos",
        "intro": (
            "SPLICE (Ballout, Wilfred et al., 2025) probes event-based visual reasoning: each "
            f"row is one video of {source.title} cut into one clip per annotated step (2 to 7), "
            'shuffled and labelled "Video 1" .. "Video n"; a model must put the clips back in '
            "chronological order. This folder was produced by the open SPLICE build pipeline "
            f"from the annotations of {source.title} (read by the `{source.name}` adapter, "
            f"version {source.adapter_version}) and local copies of the videos. Source licence: "
            f"{source.license_note}. Cite: {source.citation}."
        ),
        "stand_in_notice": stand_in_notice(source.title),
        "built_with": built_with_paragraph(f"from the annotations of {source.title}"),
    }


_MARKER = re.compile(r"^<!-- (\w+) -->\n", re.M)


@functools.cache
def _template(name: str) -> str:
    return (
        importlib.resources.files("splice_build")
        .joinpath("output", "templates", name)
        .read_text("utf-8")
    )


def source_sections(source: SourceCard | None) -> dict[str, str]:
    """The card's sections that only its source can say (source data, annotations,
    people, biases, limitations, licence, citation): COIN's own words and figures from
    ``templates/coin.md`` for a COIN card (``source`` None or COIN), else
    ``templates/source.md`` filled with the ``SourceCard``, so no other source's card
    carries COIN's counts, licence or taxonomy-prior figure."""
    coin = source is None or source.name == "coin"
    text = _template("coin.md")
    if not coin:
        text = Template(_template("source.md")).substitute(
            {k: getattr(source, k) for k in SOURCE_FIELDS}
        )
    parts = _MARKER.split(text)[1:]  # the preface before the first marker says what this is
    sections = {name: body.strip("\n") for name, body in zip(parts[::2], parts[1::2], strict=True)}
    # the source's BibTeX joins SPLICE's block; a citation in words follows it
    bibtex, after = sections.pop("source_bibtex", ""), sections.pop("cite_after", "")
    sections["source_bibtex"] = f"\n{bibtex}\n" if bibtex else ""
    sections["cite_after"] = f"\n{after}\n" if after else ""
    return sections


SOURCE_FIELDS = ("name", "title", "license", "license_note", "citation", "videos")


def render_card(
    written: WriteResult,
    provenance: Provenance,
    *,
    stats: BuildStats | None = None,
    title: str = DEFAULT_TITLE,
    intro: str = DEFAULT_INTRO,
    extra_sections: Sequence[tuple[str, str]] = (),
    front_matter: bool = True,
    built_with: str = BUILT_WITH,
    stand_in_notice: str = STAND_IN_NOTICE,
) -> str:
    """README.md of a build folder (or, with another title/intro/sections, of the repo).

    ``extra_sections`` are ``(heading, markdown)`` pairs placed before the licence;
    ``built_with`` is the paragraph after the intro that links to the code (the repository's
    own README, which is that code's front page, passes ``""``).
    """
    stats = stats if stats is not None else compute_stats(written.videos)
    coin = provenance.source is None or provenance.source.name == "coin"
    config_rows = "\n".join(
        f"| `{c}`{' (default)' if c == DEFAULT_CONFIG else ''} | {_CONFIG_BLURB[c]} | "
        + ", ".join(f"`{x}`" for x in columns(c))
        + f" | {_files_cell(written, c)} |"
        for c in WRITTEN_CONFIGS
    )
    extra = "".join(f"\n## {heading}\n\n{body.strip()}\n" for heading, body in extra_sections)
    yaml = card_data(written, provenance).to_yaml()
    return Template(_template("card.md")).substitute(
        front_matter=f"---\n{yaml}\n---\n\n" if front_matter else "",
        title=title,
        dataset_id=DATASET_PLACEHOLDER,
        metric_id=METRIC_PLACEHOLDER,
        stand_in_notice=stand_in_notice if provenance.stand_in else "",
        intro=intro.strip(),
        built_with=f"\n{built_with.strip()}\n" if built_with.strip() else "",
        field_rows=field_rows(coin=coin),
        split=written.split,
        video_dir=shard_dir("video"),
        video_text_dir=shard_dir("video_text"),
        text_dir=shard_dir("text"),
        text_pairwise_dir=shard_dir(_question_config(PAIRWISE)),
        text_choice_dir=shard_dir(_question_config(CHOICE)),
        question_seed=DEFAULT_SEED,
        datasets_min=DATASETS_MIN_VERSION,
        download_note=_download_note(written),
        config_rows=config_rows,
        stats_summary=stats_summary(stats, paper=coin),
        table1=markdown_table(TABLE1_HEADER, table1_rows(stats)),
        table6=markdown_table(TABLE6_HEADER, table6_rows(stats)),
        under_label=BIN_LABELS[0],
        over_label=BIN_LABELS[-1],
        domain_table=domain_table(stats),
        provenance=provenance_block(provenance, written),
        extra_sections=extra,
        **source_sections(provenance.source),
    )


def _question_config(fmt: str) -> str:
    """The question config asking the ``text`` rows as ``fmt``."""
    return next(c for c, asked in TEXT_QUESTION_CONFIGS.items() if asked == ("text", fmt))


def write_card(out_dir: Path, written: WriteResult, provenance: Provenance, **kwargs: Any) -> Path:
    """Render and write ``out_dir/README.md``; returns its path."""
    path = Path(out_dir) / "README.md"
    path.write_text(render_card(written, provenance, **kwargs), encoding="utf-8")
    return path


__all__ = [
    "BUILT_WITH",
    "CODE_PLACEHOLDER",
    "CODE_REPOSITORY",
    "DATASET_PLACEHOLDER",
    "METRIC_PLACEHOLDER",
    "DEFAULT_INTRO",
    "DEFAULT_TITLE",
    "STAND_IN_NOTICE",
    "STAND_IN_TAG",
    "TABLE1_HEADER",
    "TABLE6_HEADER",
    "Provenance",
    "ReleaseSource",
    "built_with_paragraph",
    "card_data",
    "domain_table",
    "field_rows",
    "human_size",
    "markdown_table",
    "provenance_json",
    "render_card",
    "source_sections",
    "source_texts",
    "stats_summary",
    "table1_rows",
    "table6_rows",
    "write_card",
]
