"""A whole built folder checked, part by part: its layout, the full config's rows and
clips, the other configs against them, the question configs against the questions of
the text rows, then the card against what the shards hold."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import zip_longest
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from splice_build.output.card_reader import CardInfo, read_card
from splice_build.output.clip_verdict import ClipRule, VerifiedClips
from splice_build.output.identity import BuildDigests, RowsDigest, row_digest
from splice_build.output.release_manifest import MANIFEST, ReleaseManifest, read_manifest
from splice_build.output.validate.card_checks import check_card, check_identity, recorded_tolerance
from splice_build.output.validate.full_config import check_full_config, full_parts
from splice_build.output.validate.layout import (
    Shard,
    check_schemas,
    list_shards,
    open_shards,
    read_back,
)
from splice_build.output.validate.parts import Part, PartResult, check_part
from splice_build.output.validate.problems import Problem, ValidationReport
from splice_build.output.validate.progress import ClipProgress, Runner
from splice_build.output.validate.projections import check_against_full
from splice_build.output.validate.questions import QuestionsCheck
from splice_build.output.validate.tars import TarCheck, check_tars, list_tars
from splice_build.output.writing.shards import ShardInfo, WriteResult
from splice_build.records import COVERAGE_TOLERANCE
from splice_build.stages.clipcheck import TOLERANCE_FRAMES
from splice_dataset import (
    CARD,
    CLIPS,
    CONFIGS,
    FULL_CONFIG,
    NUM_CLIPS,
    SPLIT,
    TEXT_QUESTION_CONFIGS,
    WEBDATASET_DIR,
    WRITTEN_CONFIGS,
    columns,
    shard_dir,
)

# The config the bar's total is read from (`_clip_count`): the one without clip bytes.
BAR_CONFIG = next(c for c in CONFIGS if CLIPS not in columns(c))


def validate_report(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
    verified: VerifiedClips | None = None,
    run: Runner | None = None,
    progress: bool = False,
    tolerance: float | None = None,
) -> ValidationReport:
    """Check a built folder; ``quick`` decodes no clip (names, bytes and digests only).

    ``verified``: what the build that wrote the folder knows its workers checked (a clip
    with those bytes, segment and duration is proven by its sha256, any other decoded);
    ``run``: an executor's ``run`` for the clips (default: in this process); ``progress``:
    a bar of clips per second; ``tolerance``: the seconds a source may end before its
    last step that this validation accepts (`tolerance_rule`; default the build's
    default, `records.COVERAGE_TOLERANCE`)."""
    root = Path(out_dir)
    report = ValidationReport()
    problems = report.problems
    paths: dict[str, list[Path]] = {}
    for config in WRITTEN_CONFIGS:
        paths[config], found = list_shards(root, shard_dir(config), split)
        problems += found
        report.shards[config] = len(paths[config])
    tar_paths, found = list_tars(root, split)
    problems += found
    tars = [TarCheck(str(p), f"{WEBDATASET_DIR}/{p.name}") for p in tar_paths]
    card = read_card(root)
    rule = ClipRule(tolerance_rule(card, tolerance, problems), tolerance_frames, decode=not quick)
    manifest = _read_manifest(root, problems)
    infos: dict[str, list[ShardInfo]] = {config: [] for config in WRITTEN_CONFIGS}
    opened = {config: open_shards(config, paths[config], infos[config]) for config in paths}
    full_shards = opened[FULL_CONFIG]
    questions = [_questions_check(config, opened) for config in TEXT_QUESTION_CONFIGS]
    parts = (
        questions
        + tars
        + _balanced(full_parts(full_shards, rule, manifest, verified, card.seed), opened)
    )
    results: dict[tuple[str, int], PartResult] = {}
    bar = ClipProgress(_clip_count(paths[BAR_CONFIG]), enabled=progress)
    with ThreadPoolExecutor(1) as beside:
        # The driver would otherwise wait on the workers: it checks the schemas meanwhile.
        schemas = beside.submit(check_schemas, opened)
        try:
            for result in (run or _here)(check_part, parts):
                results[result.key] = result
                bar.update(result.clips, result.decoded)
        finally:
            bar.close()
        schemas.result()
    report.decoded = bar.decoded
    # The full config's rows are checked in full, the other configs' rows against them.
    full = check_full_config(full_shards, results, manifest, problems)
    report.videos, report.clips = len(full.videos), full.clips
    for config in CONFIGS:
        if config != FULL_CONFIG:
            where = full.where if CLIPS in columns(config) else None
            problems += check_against_full(config, opened[config], results, full.seen, where)
    problems += check_tars(tars, results, full.seen)
    for check in questions:
        problems += [p for shard in opened[check.config] for p in shard.problems]
        problems += results[check.key].problems
    shards = WriteResult(
        out_dir=root,
        split=split,
        config_shards={config: tuple(infos[config]) for config in WRITTEN_CONFIGS},
        videos=tuple(full.videos),
    )
    problems += check_card(root, shards, card)
    problems += check_identity(card, _digests(opened, results, questions))
    report.files = sorted(
        [CARD, *(s.rel for shards in opened.values() for s in shards), *(t.rel for t in tars)]
        + ([MANIFEST] if manifest is not None else [])
    )
    return report


def validate(
    out_dir: Path,
    *,
    split: str = SPLIT,
    tolerance_frames: float = TOLERANCE_FRAMES,
    quick: bool = False,
    tolerance: float | None = None,
) -> list[Problem]:
    """Every problem of a built folder; an empty list means it is good."""
    return validate_report(
        out_dir, split=split, tolerance_frames=tolerance_frames, quick=quick, tolerance=tolerance
    ).problems


def tolerance_rule(card: CardInfo, tolerance: float | None, problems: list[Problem]) -> float:
    """The coverage tolerance the clips are held to: the one asked (``--tolerance``, or a
    build's own), else the default, or the card's when it is stricter. A card is not
    proven until validated, so it never loosens the check: a card recording a looser
    tolerance than the one asked is a problem naming the field."""
    asked = COVERAGE_TOLERANCE if tolerance is None else tolerance
    recorded = recorded_tolerance(card)
    if recorded is None or recorded <= asked:
        return asked if recorded is None else recorded
    problems.append(
        Problem(
            CARD,
            f"splice_build.tolerance {recorded:g} is looser than the {asked:g} s this "
            f"validation holds clips to; if the build was made with --tolerance "
            f"{recorded:g}, validate with --tolerance {recorded:g}",
        )
    )
    return asked


def _digests(
    opened: dict[str, list[Shard]],
    results: dict[tuple[str, int], PartResult],
    questions: list[QuestionsCheck],
) -> BuildDigests:
    """The digests of the rows read (`identity`): each shard's and each config's, from the
    parts' records of the row configs and the question checks' own digests."""
    shards: dict[str, str] = {}
    configs: dict[str, str] = {}
    for config in CONFIGS:
        cols = columns(config)
        whole = RowsDigest()
        for shard in opened[config]:
            own = RowsDigest()
            for record in (r for result in read_back(shard, results)[1] for r in result.rows):
                digest = row_digest(record.digests, cols)
                own.add(digest)
                whole.add(digest)
            shards[shard.rel] = own.hexdigest()
        if opened[config]:
            configs[config] = whole.hexdigest()
    for check in questions:
        found = dict(results[check.key].digests)
        configs[check.config] = found.pop(check.config)
        shards.update(found)
    return BuildDigests(shards, configs)


def _questions_check(config: str, opened: dict[str, list[Shard]]) -> QuestionsCheck:
    """The task checking a question config, over the shards of it and of the config it
    asks that opened."""

    def readable(of: str) -> tuple[tuple[str, str], ...]:
        return tuple((s.path, s.rel) for s in opened[of] if s.schema is not None)

    return QuestionsCheck(config, readable(config), readable(TEXT_QUESTION_CONFIGS[config][0]))


def _balanced(full: list[Part], opened: dict[str, list[Shard]]) -> list[Part]:
    """The configs' parts, in an order that keeps the workers evenly busy and the bar
    moving: the few large text parts first, then the clip configs' parts alternately."""
    others = [c for c in CONFIGS if c != FULL_CONFIG]
    parts = {c: [p for shard in opened[c] for p in shard.parts] for c in others}
    rows_only = [p for c in others if CLIPS not in columns(c) for p in parts[c]]
    clips = [p for c in others if CLIPS in columns(c) for p in parts[c]]
    return rows_only + [p for pair in zip_longest(full, clips) for p in pair if p is not None]


def _here(fn, tasks):
    return (fn(task, 1) for task in tasks)


def _clip_count(paths: list[Path]) -> int | None:
    """The clips the shards say they hold, for the bar's total (None if one does not say):
    read from the ``text`` shards (`BAR_CONFIG`), whose few row groups read in
    milliseconds, where the clip shards' hundreds took 0.17 s at 3,200 videos."""
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
