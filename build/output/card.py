"""The dataset card (stage 7): README.md with the YAML header the Hub and ``load_dataset`` read.

The YAML is assembled with ``datasets``' and ``huggingface_hub``'s own serialisers
(``MetadataConfigs`` for ``configs:``, ``DatasetInfosDict`` for ``dataset_info:``,
``DatasetCardData`` for the rest), so it is exactly what ``push_to_hub`` would write, minus
its bugs with default configs. The body comes from ``templates/card.md``; the repository's
own README.md is rendered from the same template with another ``title``, ``intro`` and
``extra_sections``, without the ``built_with`` link to itself (and ``front_matter=False`` if
GitHub should not show the YAML). A build's card is read on the Hub by people without this
code: it says how to load, decode and score with ``datasets`` and ``evaluate`` alone, and
names the code only in ``BUILT_WITH``.

Tables are produced by ``table1_rows`` / ``table6_rows`` so that ``validate`` can check a
card's Table 1 against the shards with the very same formatting.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.resources
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from string import Template
from typing import Any

import pyarrow as pa
from huggingface_hub import DatasetCardData

from splice_build.output.shards import WriteResult
from splice_build.output.stats import BIN_LABELS, BuildStats, compute_stats
from splice_build.stages import ingest
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
TABLE1_HEADER = ("# of Clips", "# of Videos", "Average Duration (s)")
TABLE6_HEADER = ("Segments", "Videos", "Clips", "Mean Time (s)", "Std Dev", *BIN_LABELS)
# The code that writes this card. A Hub visitor has none of it: the card's Load, Decode and
# Score need only `datasets` and `evaluate`, and this one marked paragraph is the card's only
# pointer to the code (tests check the rest of a card names none of it).
CODE_REPOSITORY = "https://github.com/ORG/splice-benchmark"
BUILT_WITH = (
    f"**Built with** the SPLICE code, [`splice-benchmark`]({CODE_REPOSITORY}): it builds this "
    "dataset from COIN (or imports the authors' release) and holds the rest: frame sampling "
    "as in the paper, the paper's prompts, baselines, model runners (OpenAI-compatible "
    "endpoints, transformers, lmms-eval, VLMEvalKit), the human ordering protocol and a "
    "results report; its `docs/` folder is the manual. Nothing below needs it: every config "
    "is plain Parquet for `datasets`, and the metric is an `evaluate` module on the Hub."
)
_CONFIG_BLURB = {
    "video": "the clips only",
    "video_text": "the clips and their step captions",
    "text": "the step captions only (no video)",
    "text_pairwise": 'the `text` rows as "which came first?" questions over two clips',
    "text_choice": "the `text` rows as multiple-choice questions over candidate orders",
}


# What each field holds, for the card's Fields table (types come from the schema).
_FIELD_BLURB = {
    "video_id": "the source video's YouTube id (COIN's key)",
    "question_id": "the question's id: `<video_id>/p<k>` for the k-th pair of a video, the "
    "video id for its one multiple-choice question",
    "task": "COIN's task (one of 180)",
    "domain": "COIN's domain (one of 12)",
    "recipe_type": "COIN's id of the task",
    "coin_subset": "COIN's own split of the video (`training` or `testing`)",
    "num_clips": "n, the number of clips (2 to 7)",
    "duration": "the sum of the clips' durations, in seconds",
    "clips": 'the clips as MP4 bytes, in label order: clip `k` is "Video k"',
    "captions": "each clip's step description (COIN's step label), in label order",
    "clip_durations": "each clip's duration in seconds, in label order",
    "labels": "the labels of the clips the question shows, in the order shown",
    "options": "the candidate answers, each a sequence of labels",
}
_ANSWER_BLURB = {
    "order": "the labels in chronological order (the reference)",
    "segments": "each clip's start and end in the source video, in label order",
    "step_ids": "each clip's COIN step id, in label order",
    "option": "the 1-based number of the right option",
    "num_options": "how many options the question has",
}


def _package_version() -> str:
    try:
        return importlib.metadata.version("splice-benchmark")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _software_versions() -> dict[str, str]:
    """Libraries whose version changes the bytes of a build (encoder, Parquet writer)."""
    out = {}
    for dist in ("av", "pyarrow", "datasets"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


@dataclass(frozen=True)
class ReleaseSource:
    """Where an imported build's clips came from (``splice import-release``)."""

    repo_id: str
    revision: str
    license: str
    files: int  # release files used, listed with their sha256 in the manifest
    bytes: int
    manifest_sha256: str  # of release_manifest.json, which `splice validate` reads
    remuxed: int  # clips copied without re-encoding
    re_encoded: int
    videos_in_release: int
    clips_in_release: int  # <id>_part_<k>.mp4 files found, imported or not
    local: bool = False  # read from a local folder in the release's layout, not fetched


@dataclass(frozen=True)
class Provenance:
    """Where a build came from: enough to rebuild it byte for byte."""

    annotations_file: str  # file name only: paths would make two machines' cards differ
    annotations_sha256: str
    seed: int
    cut_settings: dict[str, Any]
    subset_size: int | None = None
    curation_file: str | None = None
    videos_in_annotations: int = 0
    videos_included: int = 0
    videos_skipped: int = 0
    stand_in: bool = False  # a demo whose source videos are rendered stand-ins, not COIN's
    limit: int | None = None
    skipped_by_stage: dict[str, int] = field(default_factory=dict)
    curation_sha256: str | None = None
    release: ReleaseSource | None = None  # clips imported from the authors' release
    # `download_report.missing_among`: what the download beside the sources could not fetch
    download: dict[str, Any] | None = None
    # seconds a source may end before its last step (--tolerance): `splice validate` lets
    # a clip fall short of its segment by what lies past that point
    tolerance: float | None = None
    version: str = field(default_factory=_package_version)
    software: dict[str, str] = field(default_factory=_software_versions)


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

    data = DatasetCardData(
        license=LICENSE,
        language="en",
        pretty_name="SPLICE",
        task_categories=TASK_CATEGORIES,
        tags=TAGS + ([STAND_IN_TAG] if provenance and provenance.stand_in else []),
        size_categories=_size_category(written.num_rows),
        source_datasets=["COIN"],
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
        data["splice_build"] = {
            "version": provenance.version,
            "seed": provenance.seed,
            "annotations_sha256": provenance.annotations_sha256,
            "stand_in": provenance.stand_in,
            "videos": written.num_rows,
            "clips": written.num_clips,
        }
        if provenance.release is not None:
            data["splice_build"]["origin"] = "release"
            data["splice_build"]["release"] = asdict(provenance.release)
            data["source_datasets"] = ["COIN", provenance.release.repo_id]
        if provenance.tolerance is not None:
            data["splice_build"]["tolerance"] = provenance.tolerance
        if fingerprint:  # `splice validate` recomputes it: a changed byte fails the build
            data["splice_build"]["shards_sha256"] = fingerprint
            # the build's identity (`identity`): recorded by every prediction file made on
            # it, and recomputed by `splice validate` shard by shard (which reports a card
            # left without one, because a shard did not read back)
            with contextlib.suppress(pa.ArrowException, OSError):
                data["splice_build"].update(written.digests().as_card())
    return data


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table1_rows(stats: BuildStats) -> list[tuple[str, ...]]:
    """Table 1's body as the card prints it (also what ``validate`` compares against)."""
    return [(str(r.num_clips), str(r.videos), _fmt(r.mean_duration)) for r in stats.rows]


def table6_rows(stats: BuildStats) -> list[tuple[str, ...]]:
    rows = [
        (
            str(r.num_clips),
            str(r.videos),
            str(r.clips),
            _fmt(r.mean_duration),
            _fmt(r.std_duration),
            *(str(b) for b in r.bins),
        )
        for r in stats.rows
    ]
    rows.append(
        ("**all**", str(stats.videos), str(stats.clips), "", "", *map(str, stats.bin_totals))
    )
    return rows


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The card's one table format; ``validate`` finds a table by this header line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def stats_summary(stats: BuildStats) -> str:
    """The card's statistics sentence (``splice validate`` recomputes it from the rows)."""
    return (
        f"{stats.videos} videos from {len(stats.domains)} COIN domain(s) and {stats.tasks} "
        f"task(s), segmented into {stats.clips} clips; {stats.duration / 3600:.2f} hours of "
        "clips. (The paper's curated build: 3,381 videos, 11,423 clips.)"
    )


def domain_table(stats: BuildStats) -> str:
    rows = [
        (d.domain, str(d.tasks), str(d.videos), str(d.clips), f"{d.duration / 60:.1f}")
        for d in stats.domains
    ]
    total = ("**all**", str(stats.tasks), str(stats.videos), str(stats.clips))
    rows.append((*total, f"{stats.duration / 60:.1f}"))
    return markdown_table(("Domain", "Tasks", "Videos", "Clips", "Minutes"), rows)


def _type_name(feature: Any) -> str:
    """A ``datasets`` feature as the Fields table writes it: ``list of int32``, ``Video``."""
    from datasets import List, Value, Video

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, Video):
        return "Video"
    if isinstance(feature, List):
        return f"list of {_type_name(feature.feature)}"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"
    raise TypeError(f"no name for the feature {feature!r}")


def field_rows() -> str:
    """The card's Fields table: every column of every written config, its type from the
    schema (``features``), what it holds and the configs that have it."""
    seen: dict[tuple[str, str], list[str]] = {}
    for config in WRITTEN_CONFIGS:
        for name, feature in features(config).items():
            seen.setdefault((name, _type_name(feature)), []).append(config)
    rows = []
    for (name, type_name), configs in seen.items():
        if name == "answer":
            parts = features(configs[0])[name]
            about = "; ".join(f"`{k}`: {_ANSWER_BLURB[k]}" for k in parts)
            about = f"never a model input: {about}"
        else:
            about = _FIELD_BLURB[name]
        shown = "all" if len(configs) == len(WRITTEN_CONFIGS) else ", ".join(configs)
        rows.append((f"`{name}`", f"`{type_name}`", about, shown))
    return markdown_table(("field", "type", "what it holds", "configs"), rows)


def _provenance_block(p: Provenance, written: WriteResult) -> str:
    settings = ", ".join(f"{k}={v}" for k, v in sorted(p.cut_settings.items()))
    skipped = ", ".join(f"{stage}: {n}" for stage, n in sorted(p.skipped_by_stage.items()))
    items = [
        ("SPLICE build version", p.version),
        (
            "Annotation file",
            f"`{p.annotations_file}`"
            + (
                " (COIN's public subset bundled with the SPLICE code: the 10,070 of COIN's 11,827"
                " videos whose step timestamps are public, not the full COIN.json)"
                if p.annotations_sha256 == ingest.bundled_sha256()
                else ""
            ),
        ),
        ("Annotation sha256", f"`{p.annotations_sha256}`"),
        ("Seed", str(p.seed)),
        ("Random subset size", "all" if p.subset_size is None else str(p.subset_size)),
        ("Limit", "none" if p.limit is None else str(p.limit)),
        (
            "Curation file",
            "none"
            if p.curation_file is None
            else f"`{p.curation_file}`"
            + (f" (sha256 `{p.curation_sha256}`)" if p.curation_sha256 else ""),
        ),
        ("Cut settings", settings or "defaults"),
        ("Videos in the annotations", str(p.videos_in_annotations)),
        ("Videos included", str(p.videos_included)),
        ("Videos skipped", str(p.videos_skipped) + (f" ({skipped})" if skipped else "")),
        ("Source videos", "rendered stand-ins (demo)" if p.stand_in else "COIN's YouTube videos"),
        *([("Downloaded sources", _download_line(p.download))] if p.download else []),
        ("Software", ", ".join(f"{k} {v}" for k, v in sorted(p.software.items()))),
        (
            "Shards",
            ", ".join(f"{len(written.shards(c))} in `{shard_dir(c)}/`" for c in WRITTEN_CONFIGS),
        ),
    ]
    if p.release is not None:
        items = [(k, v) for k, v in items if k not in _NOT_FOR_RELEASE] + [
            (
                "In the release",
                f"{p.release.videos_in_release} videos, {p.release.clips_in_release} clips",
            ),
            (
                "Source videos",
                f"clips of the {'local folder' if p.release.local else 'release'} "
                f"`{p.release.repo_id}` at revision "
                f"`{p.release.revision}` ({p.release.license})",
            ),
            (
                "Clips",
                f"{p.release.remuxed} remuxed, {p.release.re_encoded} re-encoded ({settings})",
            ),
        ]
    if not written.has_shards:
        items = [(k, v) for k, v in items if k not in ("Shards", "Software")]
    lines = [f"- **{k}:** {v}" for k, v in items]
    listed = "release" if p.release is not None else "annotation file"
    lines.append(
        f"\nEvery video of the {listed} is listed, included or skipped with the stage "
        "and reason, in the build report (`build_report.json`) next to this card."
    )
    return "\n".join(lines)


# Provenance lines that describe cutting COIN's videos, which an imported build did not do.
_NOT_FOR_RELEASE = (
    "Random subset size",
    "Limit",
    "Curation file",
    "Cut settings",
    "Videos in the annotations",
    "Source videos",
)


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


def _download_line(d: dict[str, Any]) -> str:
    why = ", ".join(f"{k} {v}" for k, v in d["unavailable_by_category"].items())
    line = (
        f"{d['unavailable']} of the {d['selected']} selected videos were unavailable when "
        f"the sources were downloaded{f' ({why})' if why else ''}"
    )
    if d["failed"]:
        line += f"; {d['failed']} more failed after retries"
    if d.get("not_tried"):
        line += f"; {d['not_tried']} were not tried (the download stopped early)"
    if d["in_report"] < d["selected"]:
        line += f"; {d['selected'] - d['in_report']} not in the download report"
    return line + f" (`download_report.json` beside the sources, yt-dlp {d['yt_dlp_version']})"


STAND_IN_TAG = "stand-in-videos"  # the card's tag of a stand-in build
STAND_IN_NOTICE = (
    "> **Demo build with stand-in videos.** The annotations are real COIN entries, but the "
    "clips were cut from videos the demo rendered itself (one visibly different scene per "
    "step), not from COIN's YouTube videos. Scores on this build say nothing about a model; "
    "the statistics below describe the stand-ins.\n\n"
)


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
) -> str:
    """README.md of a build folder (or, with another title/intro/sections, of the repo).

    ``extra_sections`` are ``(heading, markdown)`` pairs placed before the licence;
    ``built_with`` is the paragraph after the intro that links to the code (the repository's
    own README, which is that code's front page, passes ``""``).
    """
    stats = stats if stats is not None else compute_stats(written.videos)
    config_rows = "\n".join(
        f"| `{c}`{' (default)' if c == DEFAULT_CONFIG else ''} | {_CONFIG_BLURB[c]} | "
        + ", ".join(f"`{x}`" for x in columns(c))
        + f" | {_files_cell(written, c)} |"
        for c in WRITTEN_CONFIGS
    )
    extra = "".join(f"\n## {heading}\n\n{body.strip()}\n" for heading, body in extra_sections)
    yaml = card_data(written, provenance).to_yaml()
    template = Template(
        importlib.resources.files("splice_build")
        .joinpath("output", "templates", "card.md")
        .read_text("utf-8")
    )
    return template.substitute(
        front_matter=f"---\n{yaml}\n---\n\n" if front_matter else "",
        title=title,
        stand_in_notice=STAND_IN_NOTICE if provenance.stand_in else "",
        intro=intro.strip(),
        built_with=f"\n{built_with.strip()}\n" if built_with.strip() else "",
        field_rows=field_rows(),
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
        stats_summary=stats_summary(stats),
        table1=markdown_table(TABLE1_HEADER, table1_rows(stats)),
        table6=markdown_table(TABLE6_HEADER, table6_rows(stats)),
        under_label=BIN_LABELS[0],
        over_label=BIN_LABELS[-1],
        domain_table=domain_table(stats),
        provenance=_provenance_block(provenance, written),
        extra_sections=extra,
    )


def _question_config(fmt: str) -> str:
    """The question config asking the ``text`` rows as ``fmt``."""
    return next(c for c, asked in TEXT_QUESTION_CONFIGS.items() if asked == ("text", fmt))


def write_card(out_dir: Path, written: WriteResult, provenance: Provenance, **kwargs: Any) -> Path:
    """Render and write ``out_dir/README.md``; returns its path."""
    path = Path(out_dir) / "README.md"
    path.write_text(render_card(written, provenance, **kwargs), encoding="utf-8")
    return path


def provenance_json(provenance: Provenance) -> str:
    """Provenance as stable JSON (sorted keys), e.g. for the build report."""
    return json.dumps(asdict(provenance), sort_keys=True, indent=2)


__all__ = [
    "BUILT_WITH",
    "CODE_REPOSITORY",
    "DEFAULT_INTRO",
    "DEFAULT_TITLE",
    "STAND_IN_NOTICE",
    "STAND_IN_TAG",
    "TABLE1_HEADER",
    "TABLE6_HEADER",
    "Provenance",
    "ReleaseSource",
    "card_data",
    "domain_table",
    "field_rows",
    "markdown_table",
    "provenance_json",
    "render_card",
    "stats_summary",
    "table1_rows",
    "table6_rows",
    "write_card",
]


def human_size(n: int) -> str:
    """A byte count as the Hub shows sizes (decimal units), for cards and checks."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")
