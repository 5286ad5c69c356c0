"""A whole built folder checked, part by part: its layout, the full config's rows and
clips, the other configs against them, the question configs against the questions of
the text rows, then the card against what the shards hold."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from splice_build.output.clip_verdict import ClipRule, VerifiedClips
from splice_build.output.release_manifest import MANIFEST, ReleaseManifest, read_manifest
from splice_build.output.shards import ShardInfo, WriteResult
from splice_build.output.validate.card_checks import check_card, read_card, recorded_tolerance
from splice_build.output.validate.full_config import check_full_config
from splice_build.output.validate.layout import list_shards
from splice_build.output.validate.problems import Problem, ValidationReport
from splice_build.output.validate.progress import ClipProgress, Runner
from splice_build.output.validate.projections import check_against_full
from splice_build.output.validate.questions import check_questions
from splice_build.stages.clipcheck import TOLERANCE_FRAMES
from splice_dataset import (
    CONFIGS,
    FULL_CONFIG,
    NUM_CLIPS,
    SPLIT,
    TEXT_QUESTION_CONFIGS,
    WRITTEN_CONFIGS,
    shard_dir,
)


def validate_report(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
    verified: VerifiedClips | None = None,
    run: Runner | None = None,
    progress: bool = False,
) -> ValidationReport:
    """Check a built folder; ``quick`` decodes no clip (names, bytes and digests only).

    ``verified``: what the build that wrote the folder knows its workers checked (a clip
    with those bytes, segment and duration is proven by its sha256, any other decoded);
    ``run``: an executor's ``run`` for the clips (default: in this process); ``progress``:
    a bar of clips per second."""
    root = Path(out_dir)
    report = ValidationReport()
    problems = report.problems
    paths: dict[str, list[Path]] = {}
    for config in WRITTEN_CONFIGS:
        paths[config], found = list_shards(root, shard_dir(config), split)
        problems += found
        report.shards[config] = len(paths[config])
    card = read_card(root)
    rule = ClipRule(recorded_tolerance(root, card), tolerance_frames, decode=not quick)
    manifest = _read_manifest(root, problems)
    # The full config's rows are checked in full, the other configs' rows against them.
    bar = ClipProgress(_clip_count(paths[FULL_CONFIG]), enabled=progress)
    try:
        full = check_full_config(
            paths[FULL_CONFIG], rule, manifest, problems, verified=verified, run=run, progress=bar
        )
    finally:
        bar.close()
    report.decoded = bar.decoded
    report.videos, report.clips = len(full.videos), full.clips
    infos: dict[str, list[ShardInfo]] = {FULL_CONFIG: full.infos}
    for config in CONFIGS:
        if config != FULL_CONFIG:
            infos[config] = []
            problems += check_against_full(config, paths[config], full.seen, infos[config])
    for config, (asked, _) in TEXT_QUESTION_CONFIGS.items():
        infos[config] = []
        problems += check_questions(config, paths[config], paths[asked], infos[config])
    shards = WriteResult(
        out_dir=root,
        split=split,
        config_shards={config: tuple(infos[config]) for config in WRITTEN_CONFIGS},
        videos=tuple(full.videos),
    )
    problems += check_card(root, shards, card)
    return report


def validate(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
    verified: VerifiedClips | None = None,
) -> list[Problem]:
    """Every problem of a built folder; an empty list means it is good."""
    return validate_report(
        out_dir, split=split, tolerance_frames=tolerance_frames, quick=quick, verified=verified
    ).problems


def _clip_count(paths: list[Path]) -> int | None:
    """The clips the shards say they hold, for the bar's total (None if one does not say)."""
    try:
        return sum(
            pc.sum(pq.read_table(p, columns=[NUM_CLIPS])[NUM_CLIPS]).as_py() or 0 for p in paths
        )
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None


def _read_manifest(root: Path, problems: list[Problem]) -> ReleaseManifest | None:
    """An imported build's manifest (None for a build cut from COIN's videos); one that
    does not read is a problem, and the clips are then checked as a cut build's."""
    try:
        return read_manifest(root)
    except ValueError as exc:
        problems.append(Problem(MANIFEST, str(exc)))
        return None
