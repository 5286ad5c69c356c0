"""``splice build``: runs the stages from a source's annotations (COIN's by default, any
adapter of `splice_build.sources` by ``--source``) to a validated dataset folder.

The driver does the cheap, global stages (ingest, select) itself, hands the per-video work
(probe, cut) to an executor, and then streams the committed cuts, sorted by video id and
shuffled, into the shard writer. The output depends only on the inputs, the seed and the
settings, never on the executor, the number of workers or earlier interruptions: the work
folder is keyed by what each cut depends on, and the writer sees the same sequence.

Before any of it, the options and the folders are checked and the folders locked
(`ownership`): a build never deletes what it did not make, writes its output beside the old
one and swaps it in only when finished, so a failed, empty or killed build changes nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from tqdm.auto import tqdm

import splice_dataset as schema
from splice_build.errors import UserError, ignore_further_interrupts, stop_exit, stop_words
from splice_build.output import card, validate
from splice_build.output.clip_verdict import VerifiedClip, VerifiedClips
from splice_build.output.writing import write
from splice_build.output.writing.shards import WriteResult
from splice_build.plural import counted
from splice_build.records import (
    COVERAGE_TOLERANCE,
    MIN_FPS,
    MIN_SIDE,
    CutSettings,
    ShuffledVideo,
    Skip,
    SourceIndex,
    VideoEntry,
)
from splice_build.remote import download_report
from splice_build.running import ownership
from splice_build.running.executors import (
    Executor,
    add_executor_arguments,
    add_workers_argument,
    make_executor,
)
from splice_build.running.finish import finish_build
from splice_build.running.report import BuildReport
from splice_build.running.workdir import Lookup, WorkDir
from splice_build.running.worker import Outcome, VideoTask, process_video, reuse
from splice_build.sources import rules
from splice_build.sources.base import SourceOptions
from splice_build.stages import ingest, select, shuffle, sources

# Parquet is always written: the card, `splice validate` and `load_dataset` read it. "both"
# adds WebDataset tar shards of the same rows for loaders that stream tar files.
FORMATS = ("parquet", "both")


@dataclass(frozen=True)
class BuildConfig:
    annotations: Path
    videos: Path
    out: Path
    work: Path | None = None  # default: <out>-work beside the output
    seed: int = 0
    subset_size: int | None = None
    limit: int | None = None
    curation: Path | None = None
    cut: CutSettings = field(default_factory=CutSettings)
    workers: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    format: str = "parquet"
    max_shard_bytes: int = write.MAX_SHARD_BYTES
    validate: bool = True
    stand_in: bool = False  # the demo's rendered stand-ins, stated on the card
    progress: bool = True
    source: str = "coin"  # the adapter reading `annotations` (`sources.registry`)
    source_options: SourceOptions = field(default_factory=SourceOptions)

    @property
    def work_dir(self) -> Path:
        # Spelled out absolute: `--out .` or `--out ..` have no name to add "-work" to.
        return self.work or Path(os.path.abspath(self.out) + "-work")


@dataclass(frozen=True)
class BuildResult:
    out: Path
    report: BuildReport
    problems: list[validate.Problem] = field(default_factory=list)
    seconds: float = 0.0


def run_build(config: BuildConfig) -> BuildResult:
    """Build ``config.out``; raises `UserError`, having changed nothing of value, for bad
    options or folders, another build holding the folders, or a build of no video.

    The previous output is replaced only by a finished (and, unless ``validate`` is off,
    validated) build; until then the new one is written into a hidden folder beside it."""
    started = time.monotonic()
    check_options(config)
    ownership.check_folders(
        out=config.out,
        work=config.work_dir,
        videos=config.videos,
        annotations=config.annotations,
        curation=config.curation,
    )
    # Absolute from here on: workers (Ray's above all) may run in another folder.
    given = config
    config = replace(
        config,
        annotations=config.annotations.absolute(),
        videos=config.videos.absolute(),
        out=config.out.absolute(),
        work=config.work_dir.absolute(),
        curation=config.curation.absolute() if config.curation else None,
    )
    with ownership.locked(config.out, config.work_dir):
        return _locked_build(config, given, started)


def _locked_build(config: BuildConfig, given: BuildConfig, started: float) -> BuildResult:
    roots = {"<videos>": config.videos, "<work>": config.work_dir, "<out>": config.out}
    report = BuildReport(settings=_settings(config), local_roots=roots)
    annotations, selection = select.select_annotations(
        given.annotations,
        subset_size=config.subset_size,
        seed=config.seed,
        curation=config.curation,
        limit=config.limit,
        source=config.source,
        options=config.source_options,
    )
    for skip in annotations.skips:
        report.skip(skip)
    for skip in selection.skips:
        report.skip(skip)
    report.warnings.extend(selection.warnings)
    if not selection.selected:
        raise UserError(_nothing_built(report, given, "selected"))

    work = WorkDir(config.work_dir)
    work.clean_temp()
    # One executor for the cut and the final validation's parts.
    executor = make_executor(config.executor, config.workers, config.ray_address)
    looked = _cut_all(selection.selected, work, config, report, executor)
    if not looked:
        raise UserError(_nothing_built(report, given, "included"))

    entries = [e for e in selection.selected if e.video_id in looked]
    downloaded = download_report.missing_among(
        config.videos, [e.video_id for e in selection.selected]
    )

    def render(written: WriteResult, sections: list[tuple[str, str]]) -> dict[str, str]:
        about = card.Provenance(
            annotations_file=config.annotations.name,
            annotations_sha256=annotations.sha256,
            seed=config.seed,
            cut_settings=config.cut.encoding(),
            subset_size=config.subset_size,
            curation_file=config.curation.name if config.curation else None,
            videos_in_annotations=len(report.videos),
            videos_included=report.counts.included,
            videos_skipped=report.counts.skipped,
            stand_in=config.stand_in,
            limit=config.limit,
            skipped_by_stage=report.skips_by_stage(),
            curation_sha256=_sha256(config.curation) if config.curation else None,
            download=downloaded,
            tolerance=config.cut.tolerance,
            source=annotations.source,
            skipped_by_rule=rules.skip_counts(annotations.skips),
            steps_removed=annotations.removed,
            source_options=annotations.options,
        )
        return {
            "README.md": card.render_card(
                written, about, extra_sections=sections, **card.source_texts(annotations.source)
            )
        }

    finished = finish_build(
        lambda: _shuffled(entries, looked, config.seed),
        config.out,
        report,
        render,
        format=config.format,
        max_shard_bytes=config.max_shard_bytes,
        validate_output=config.validate,
        nothing=lambda what: _nothing_built(report, given, what),
        verified=verified_clips(entries, looked) if config.validate else None,
        progress=config.progress,
        run=executor.run,
        tolerance=config.cut.tolerance,
    )
    return BuildResult(given.out, report, finished.problems, time.monotonic() - started)


def verified_clips(entries: list[VideoEntry], cuts: dict[str, Lookup]) -> VerifiedClips:
    """What the workers checked of each included video's clips, from their committed work
    records (each sealed by the check it records; an entry that records none is decoded in
    full).

    The clips are trusted only if the loosest rule any of them met is at least as strict as
    the one validation applies."""
    found: dict[str, tuple[VerifiedClip, ...]] = {}
    rules = set()
    for entry in entries:
        cut = cuts[entry.video_id]
        if cut.checked is None:
            continue
        checked = cut.checked
        rules.add((checked.tolerance, checked.tolerance_frames))
        found[entry.video_id] = tuple(
            VerifiedClip(sha, _segment(entry, c.step_index), float(c.duration))
            for sha, c in zip(checked.sha256, cut.video.clips, strict=True)
        )
    if not rules:
        return VerifiedClips()
    return VerifiedClips(found, max(r[0] for r in rules), max(r[1] for r in rules))


def check_options(config: BuildConfig) -> None:
    """Refuse settings that cannot give a usable build, before any work, naming the option
    (the library call is checked like the command line, so the names are the options')."""
    cut = config.cut
    least = config.source_options.min_step_seconds
    checks = (
        ("--short-side", cut.short_side, cut.short_side >= MIN_SIDE,
         f"at least {MIN_SIDE} pixels (the clips' short side)"),
        ("--fps", cut.fps, cut.fps is None or MIN_FPS <= cut.fps < math.inf,
         f"at least {MIN_FPS:g} frame per second, so that every step (COIN's shortest "
         "lasts 1 s) keeps a frame and no frame outlasts its step"),
        ("--tolerance", cut.tolerance, 0 <= cut.tolerance < math.inf,
         "a number of seconds, not negative"),
        ("--workers", config.workers, config.workers is None or config.workers >= 1,
         "at least 1"),
        ("--limit", config.limit, config.limit is None or config.limit >= 1,
         "a positive number of videos"),
        ("--subset-size", config.subset_size, config.subset_size is None or config.subset_size >= 1,
         "a positive number of videos"),
        ("--max-shard-mb", config.max_shard_bytes / 1_000_000, config.max_shard_bytes > 0,
         "positive"),
        ("--min-step-seconds", least, least is None or 0 <= least < math.inf,
         "a number of seconds, not negative"),
    )  # fmt: skip
    for option, value, ok, rule in checks:
        if not ok:
            raise UserError(f"{option} {value:g}: must be {rule}")


def _nothing_built(report: BuildReport, given: BuildConfig, what: str) -> str:
    """Why a build has no video, in one line: counts per stage and a reason from the latest
    stage any video reached (a probe's "no source video" says more than "beyond --limit")."""
    skipped = report.skipped
    stages = ", ".join(f"{stage} {n}" for stage, n in report.skips_by_stage().items())
    late = [v for v in skipped if v.stage not in ("ingest", "select")] or skipped
    first = f"; e.g. {late[0].video_id}: {report.portable(late[0].reason)}" if late else ""
    kept = "left as it was" if given.out.exists() else "not created"
    return (
        f"no video {what}: all {counted(len(report.videos), 'video')} of "
        f"{given.annotations.name} were "
        f"skipped ({stages}){first} (--videos {given.videos}); nothing written, --out "
        f"{given.out} {kept}"
    )


def _cut_all(
    entries: list[VideoEntry],
    work: WorkDir,
    config: BuildConfig,
    report: BuildReport,
    executor: Executor,
) -> dict[str, Lookup]:
    """Cut every selected video not already in the work folder; return the committed cut
    of each that made it, found there or cut now."""
    index = sources.index_sources(config.videos)
    report.warnings.extend(sources.duplicate_warnings(index, entries))
    report.warnings.extend(sources.misnamed_warnings(index))
    tasks = video_tasks(entries, index, work.root, config)
    included: dict[str, Lookup] = {}
    bar = tqdm(total=len(tasks), unit="video", disable=not config.progress, desc="probe+cut")
    clips = 0
    seconds = 0.0
    start = time.monotonic()
    with bar:
        for outcome in _outcomes(executor, tasks, work):
            if outcome.note:
                report.notes.append(outcome.note)
            if outcome.ok:
                included[outcome.video_id] = outcome.cut
                report.include(outcome.video_id, outcome.num_clips)
                clips += outcome.num_clips
                seconds += outcome.seconds
            else:
                report.skip(Skip(outcome.video_id, outcome.stage, outcome.reason))
            elapsed = max(time.monotonic() - start, 1e-9)
            bar.set_postfix(
                clips_s=f"{clips / elapsed:.1f}",
                video_s=f"{seconds / elapsed:.1f}",
                skipped=report.counts.skipped,  # kept as videos come: constant per video
                refresh=False,
            )
            bar.update()
    return included


def _outcomes(executor: Executor, tasks: list[VideoTask], work: WorkDir) -> Iterator[Outcome]:
    """Every video's outcome: those the work folder already holds first, found here as the
    bar moves (`reuse`), then the executor's of the videos left to cut (no worker starts
    for none)."""
    to_cut = []
    for task in tasks:
        found = reuse(task, work)
        if isinstance(found, Outcome):
            yield found
        else:
            to_cut.append(found)
    if to_cut:
        yield from executor.run(process_video, to_cut)


def video_tasks(
    entries: list[VideoEntry], index: SourceIndex, work_root: Path, config: BuildConfig
) -> list[VideoTask]:
    """One task per video, carrying its source candidates from the driver's one index."""
    return [
        VideoTask(e, config.videos, work_root, config.cut, sources.candidates_for(index, e))
        for e in entries
    ]


def _shuffled(
    entries: list[VideoEntry], looked: dict[str, Lookup], seed: int
) -> Iterator[ShuffledVideo]:
    """Committed cuts (their records, not their clips) in video-id order, shuffled; one
    video's clips in memory at a time."""
    for entry in sorted(entries, key=lambda e: e.video_id):
        yield shuffle.shuffle(looked[entry.video_id].video, seed)


def _segment(entry: VideoEntry, step_index: int) -> tuple[float, float]:
    step = entry.steps[step_index]
    return (float(step.start), float(step.end))


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _settings(config: BuildConfig) -> dict:
    """Settings that shape the output (and so go into the report), not how it is run (the
    source only when not COIN's: a COIN build's report stays as it was)."""
    source = {}
    if config.source != "coin" or config.source_options != SourceOptions():
        source = {"source": config.source, "source_options": asdict(config.source_options)}
    return {
        **source,
        "annotations": config.annotations.name,
        "seed": config.seed,
        "subset_size": config.subset_size,
        "limit": config.limit,
        "curation": config.curation.name if config.curation else None,
        "cut": config.cut.encoding(),
        "format": config.format,
        "max_shard_bytes": config.max_shard_bytes,
        "tolerance": config.cut.tolerance,
    }


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    select.add_selection_arguments(parser)
    ingest.add_source_arguments(parser)
    parser.add_argument(
        "--videos",
        type=Path,
        required=True,
        help="folder of source videos (for goalstep, the Ego4D videos you hold a licence "
        "for): <id>.<ext>, <recipe_type>/<id>.<ext> or yt-dlp's "
        "'<title> [<id>].<ext>', in any sub-folder (`splice download` fills it)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(schema.DEFAULT_BUILD_DIR),
        help="output folder (default: %(default)s)",
    )
    parser.add_argument(
        "--work", type=Path, default=None, help="resumable work folder (default: <out>-work)"
    )
    add_workers_argument(parser)
    parser.add_argument(
        "--short-side",
        type=int,
        default=schema.CLIP_SHORT_SIDE,
        help="cap on the clips' short side in pixels, never upscaled (default %(default)s)",
    )
    parser.add_argument(
        "--fps", type=float, default=None, help="output frame rate (default: the source's)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="parquet",
        help="parquet: the Parquet shards (always written); both: also WebDataset tar "
        "shards of the same rows (default %(default)s)",
    )
    add_executor_arguments(parser)
    parser.add_argument(
        "--max-shard-mb",
        type=int,
        default=write.MAX_SHARD_BYTES // 1_000_000,
        help="cap on one Parquet shard (MB; default %(default)s)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=COVERAGE_TOLERANCE,
        help="seconds a source may fall short of the last segment's end (default %(default)s)",
    )
    parser.add_argument(
        "--no-validate", action="store_true", help="skip the final `splice validate`"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def config_from_args(args: argparse.Namespace) -> BuildConfig:
    return BuildConfig(
        annotations=args.annotations,
        videos=args.videos,
        out=args.out,
        work=args.work,
        seed=args.seed,
        subset_size=args.subset_size,
        limit=args.limit,
        curation=args.curation,
        cut=CutSettings(short_side=args.short_side, fps=args.fps, tolerance=args.tolerance),
        workers=args.workers,
        executor=args.executor,
        ray_address=args.ray_address,
        format=args.format,
        max_shard_bytes=args.max_shard_mb * 1_000_000,
        validate=not args.no_validate,
        progress=not args.no_progress,
        source=args.source,
        source_options=ingest.options_from_args(args),
    )


def run(args: argparse.Namespace) -> int:
    for path, what in ((args.annotations, "--annotations"), (args.videos, "--videos")):
        if not path.exists():
            raise UserError(f"{what} {path}: not found")
    if not args.videos.is_dir():
        raise UserError(f"--videos {args.videos}: not a folder")
    config = config_from_args(args)
    try:
        result = run_build(config)
    except KeyboardInterrupt as stop:
        ignore_further_interrupts()
        print(
            f"splice build: {stop_words(stop)}; the videos already cut are kept in "
            f"{config.work_dir}: run the same command again to resume",
            file=sys.stderr,
        )
        return stop_exit(stop)
    print(result.report.summary())
    for problem in result.problems:
        print(f"validate: {problem}")
    # A video whose clips fail the validator's rule means a cutter bug: the build is
    # usable without it, but the exit status says it happened (the report says which).
    rejected = [v for v in result.report.skipped if v.stage == "validate"]
    for video in rejected:
        print(f"validate: video {video.video_id} dropped: {video.reason}")
    if result.problems:
        print(f"{len(result.problems)} problem(s): nothing written, {args.out} left as it was")
        return 1
    print(f"wrote {args.out} in {result.seconds:.1f} s")
    return 1 if rejected else 0
