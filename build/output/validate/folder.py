"""A whole built folder checked, part by part: its layout, the full config's rows and
clips, the other configs against them, then the card against what the shards hold."""

from __future__ import annotations

from pathlib import Path

from splice_build.output.release_manifest import MANIFEST, ReleaseManifest, read_manifest
from splice_build.output.shards import ShardInfo, WriteResult
from splice_build.output.validate.card_checks import check_card, recorded_tolerance
from splice_build.output.validate.clips import ClipRule
from splice_build.output.validate.full_config import check_full_config
from splice_build.output.validate.layout import list_shards
from splice_build.output.validate.problems import Problem, ValidationReport
from splice_build.output.validate.projections import check_against_full
from splice_build.stages.clipcheck import TOLERANCE_FRAMES
from splice_dataset import CONFIGS, FULL_CONFIG, SPLIT, shard_dir


def validate_report(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
) -> ValidationReport:
    """Check a built folder; ``quick`` reads clip packets instead of decoding every frame."""
    root = Path(out_dir)
    report = ValidationReport()
    problems = report.problems
    paths: dict[str, list[Path]] = {}
    for config in CONFIGS:
        paths[config], found = list_shards(root, shard_dir(config), split)
        problems += found
        report.shards[config] = len(paths[config])
    rule = ClipRule(recorded_tolerance(root), tolerance_frames, full=not quick)
    manifest = _read_manifest(root, problems)
    # The full config's rows are checked in full, the other configs' rows against them.
    full = check_full_config(paths[FULL_CONFIG], rule, manifest, problems)
    report.videos, report.clips = len(full.videos), full.clips
    infos: dict[str, list[ShardInfo]] = {FULL_CONFIG: full.infos}
    for config in CONFIGS:
        if config != FULL_CONFIG:
            infos[config] = []
            problems += check_against_full(config, paths[config], full.seen, infos[config])
    shards = WriteResult(
        out_dir=root,
        split=split,
        config_shards={config: tuple(infos[config]) for config in CONFIGS},
        videos=tuple(full.videos),
    )
    problems += check_card(root, shards)
    return report


def validate(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
) -> list[Problem]:
    """Every problem of a built folder; an empty list means it is good."""
    return validate_report(
        out_dir, split=split, tolerance_frames=tolerance_frames, quick=quick
    ).problems


def _read_manifest(root: Path, problems: list[Problem]) -> ReleaseManifest | None:
    """An imported build's manifest (None for a build cut from COIN's videos); one that
    does not read is a problem, and the clips are then checked as a cut build's."""
    try:
        return read_manifest(root)
    except ValueError as exc:
        problems.append(Problem(MANIFEST, str(exc)))
        return None
