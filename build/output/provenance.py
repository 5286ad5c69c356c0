"""A build's provenance: what it was built from and with (``Provenance``, and
``ReleaseSource`` for an imported build), enough to rebuild it byte for byte; the card's
provenance list (``provenance_block``, whose ``- **Name:** value`` lines ``validate``
reads back) and the JSON the build report records."""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from splice_build.output.writing.shards import WriteResult
from splice_build.sources.base import SourceCard
from splice_build.stages import ingest
from splice_dataset import WRITTEN_CONFIGS, shard_dir


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
    source: SourceCard | None = None  # the source read (None: COIN, before sources were named)
    skipped_by_rule: dict[str, int] = field(default_factory=dict)  # ingest skips by rule code
    steps_removed: dict[str, int] = field(default_factory=dict)  # steps dropped, by rule code
    source_options: dict[str, Any] = field(default_factory=dict)  # the rules' settings
    version: str = field(default_factory=_package_version)
    software: dict[str, str] = field(default_factory=_software_versions)


def provenance_block(p: Provenance, written: WriteResult) -> str:
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
        *_source_lines(p),
        (
            "Source videos",
            "rendered stand-ins (demo)"
            if p.stand_in
            else (p.source.videos if p.source else "COIN's YouTube videos"),
        ),
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


# Provenance lines that describe cutting COIN's videos, which an imported build did not do.
_NOT_FOR_RELEASE = (
    "Random subset size",
    "Limit",
    "Curation file",
    "Cut settings",
    "Videos in the annotations",
    "Source videos",
)


def _source_lines(p: Provenance) -> list[tuple[str, str]]:
    """The source, its licence and citation, and what each of its rules dropped."""
    if p.source is None:
        return []
    s = p.source
    by = ", ".join(f"{k} {v}" for k, v in p.skipped_by_rule.items()) or "none"
    lines = [
        ("Source", f"{s.title} (`--source {s.name}`, adapter version {s.adapter_version})"),
        ("Source licence", s.license_note),
        ("Source citation", s.citation),
        ("Skipped by rule", by),
    ]
    if p.steps_removed:
        removed = ", ".join(f"{k} {v}" for k, v in p.steps_removed.items())
        lines.append(("Steps removed by rule", removed))
    if p.source_options:
        settings = ", ".join(f"{k}={v}" for k, v in sorted(p.source_options.items()))
        lines.append(("Source rules", settings))
    return lines


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


def provenance_json(provenance: Provenance) -> str:
    """Provenance as stable JSON (sorted keys), e.g. for the build report."""
    return json.dumps(asdict(provenance), sort_keys=True, indent=2)
