"""``splice build``: runs the stages from COIN annotations to a validated dataset folder.

The driver does the cheap, global stages (ingest, select) itself, hands the per-video work
(probe, cut) to an executor, and then streams the committed cuts, sorted by video id and
shuffled, into the shard writer. The output depends only on the inputs, the seed and the
settings, never on the executor, the number of workers or earlier interruptions: the work
folder is keyed by what each cut depends on, and the writer sees the same sequence.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

import splice_dataset as schema

from . import card, ingest, probe, select, shuffle, validate, write
from .executors import make_executor
from .records import CutSettings, ShuffledVideo, Skip, VideoEntry
from .report import BuildReport
from .workdir import WorkDir, work_key
from .worker import VideoTask

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
    tolerance: float = probe.COVERAGE_TOLERANCE
    validate: bool = True
    stand_in: bool = False  # the demo's rendered stand-ins, stated on the card
    progress: bool = True

    @property
    def work_dir(self) -> Path:
        return self.work or self.out.with_name(self.out.name + "-work")


@dataclass(frozen=True)
class BuildResult:
    out: Path
    report: BuildReport
    problems: list[validate.Problem] = field(default_factory=list)
    seconds: float = 0.0


def run_build(config: BuildConfig) -> BuildResult:
    started = time.monotonic()
    report = BuildReport(settings=_settings(config))
    annotations = ingest.load_annotations(config.annotations)
    for skip in annotations.skips:
        report.skip(skip)
    selection = select.select(
        annotations.entries,
        subset_size=config.subset_size,
        seed=config.seed,
        curation=config.curation,
        limit=config.limit,
    )
    for skip in selection.skips:
        report.skip(skip)
    report.warnings.extend(selection.warnings)

    work = WorkDir(config.work_dir)
    work.clean_temp()
    included = _cut_all(selection.selected, work, config, report)

    entries = [e for e in selection.selected if e.video_id in included]
    provenance = card.Provenance(
        annotations_file=config.annotations.name,
        annotations_sha256=annotations.sha256,
        seed=config.seed,
        cut_settings=asdict(config.cut),
        subset_size=config.subset_size,
        curation_file=config.curation.name if config.curation else None,
        videos_in_annotations=len(report.videos),
        videos_included=len(report.included),
        videos_skipped=len(report.skipped),
        stand_in=config.stand_in,
        limit=config.limit,
        skipped_by_stage=report.skips_by_stage(),
        curation_sha256=_sha256(config.curation) if config.curation else None,
    )
    problems = finish_build(
        lambda: _shuffled(entries, work, config),
        config.out,
        report,
        lambda written, sections: card.render_card(written, provenance, extra_sections=sections),
        format=config.format,
        max_shard_bytes=config.max_shard_bytes,
        validate_output=config.validate,
    )
    return BuildResult(config.out, report, problems, time.monotonic() - started)


def finish_build(
    videos: Callable[[], Iterable[ShuffledVideo]],
    out: Path,
    report: BuildReport,
    render_card: Callable[[write.WriteResult, list[tuple[str, str]]], str],
    *,
    format: str = "parquet",
    max_shard_bytes: int = write.MAX_SHARD_BYTES,
    validate_output: bool = True,
    extra_files: Mapping[str, str] | None = None,
) -> list[validate.Problem]:
    """The tail every build shares (``splice build``, ``splice import-release``): shuffled
    videos -> shards -> card -> report -> ``out`` -> validate.

    ``videos`` is called once per output format (each pass streams the clips again);
    ``render_card(written, extra_sections)`` gives README.md; ``extra_files`` (name ->
    text) are written beside it before validation, which may read them.
    """
    staging = out.with_name(out.name + ".incomplete")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    written = write.write_dataset(videos(), staging, max_shard_bytes=max_shard_bytes)
    sections = []
    if format == "both":
        from .write_wds import card_section, write_webdataset

        tars = write_webdataset(videos(), staging)
        sections.append(card_section(len(tars)))
    for name, text in (extra_files or {}).items():
        (staging / name).write_text(text, "utf-8")
    (staging / "README.md").write_text(render_card(written, sections), "utf-8")
    report.write(staging)
    if out.exists():
        shutil.rmtree(out)
    os.replace(staging, out)
    return validate.validate(out) if validate_output else []


def _cut_all(
    entries: list[VideoEntry], work: WorkDir, config: BuildConfig, report: BuildReport
) -> set[str]:
    """Cut every selected video not already in the work folder; return the ids that made it."""
    tasks = [VideoTask(e, config.videos, work.root, config.cut, config.tolerance) for e in entries]
    executor = make_executor(config.executor, config.workers, config.ray_address)
    included: set[str] = set()
    bar = tqdm(total=len(tasks), unit="video", disable=not config.progress, desc="probe+cut")
    clips = 0
    seconds = 0.0
    start = time.monotonic()
    with bar:
        for outcome in executor.run(tasks):
            if outcome.ok:
                included.add(outcome.video_id)
                report.include(outcome.video_id, outcome.num_clips)
                clips += outcome.num_clips
                seconds += outcome.seconds
            else:
                report.skip(Skip(outcome.video_id, outcome.stage, outcome.reason))
            elapsed = max(time.monotonic() - start, 1e-9)
            bar.set_postfix(
                clips_s=f"{clips / elapsed:.1f}",
                video_s=f"{seconds / elapsed:.1f}",
                skipped=len(report.skipped),
                refresh=False,
            )
            bar.update()
    return included


def _shuffled(
    entries: list[VideoEntry], work: WorkDir, config: BuildConfig
) -> Iterator[ShuffledVideo]:
    """Committed cuts in video-id order, shuffled; one video in memory at a time."""
    for entry in sorted(entries, key=lambda e: e.video_id):
        cut = work.load(entry.video_id, work_key(entry, config.cut))
        if cut is None:  # removed from the work folder during the build
            raise RuntimeError(f"work folder lost the cut of video {entry.video_id}")
        yield shuffle.shuffle(cut, config.seed)


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _settings(config: BuildConfig) -> dict:
    """Settings that shape the output (and so go into the report), not how it is run."""
    return {
        "annotations": config.annotations.name,
        "seed": config.seed,
        "subset_size": config.subset_size,
        "limit": config.limit,
        "curation": config.curation.name if config.curation else None,
        "cut": asdict(config.cut),
        "format": config.format,
        "max_shard_bytes": config.max_shard_bytes,
        "tolerance": config.tolerance,
    }


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--annotations",
        type=Path,
        default=ingest.BUNDLED_ANNOTATIONS,
        help=ingest.BUNDLED_ANNOTATIONS_HELP,
    )
    parser.add_argument(
        "--videos", type=Path, required=True, help="folder of source videos named <id>.<ext>"
    )
    parser.add_argument("--out", type=Path, default=Path("splice"), help="output folder")
    parser.add_argument(
        "--work", type=Path, default=None, help="resumable work folder (default: <out>-work)"
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: all cores)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of shuffles and subset draw")
    parser.add_argument(
        "--limit", type=int, default=None, help="keep only the first N selected videos"
    )
    parser.add_argument(
        "--subset-size", type=int, default=None, help="seeded random subset (the paper: 3600)"
    )
    parser.add_argument("--curation", type=Path, default=None, help="CSV video_id,decision,reason")
    parser.add_argument(
        "--max-side",
        type=int,
        default=schema.PAPER_MAX_SIDE,
        help="cap on the clips' short side in pixels, never upscaled (default %(default)s)",
    )
    parser.add_argument(
        "--fps", type=float, default=None, help="output frame rate (default: the source's)"
    )
    parser.add_argument("--format", choices=FORMATS, default="parquet")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (ray only)")
    parser.add_argument(
        "--max-shard-mb",
        type=int,
        default=write.MAX_SHARD_BYTES // 1_000_000,
        help="cap on one Parquet shard (MB)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=probe.COVERAGE_TOLERANCE,
        help="seconds a source may fall short of the last segment's end",
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
        cut=CutSettings(max_side=args.max_side, fps=args.fps),
        workers=args.workers,
        executor=args.executor,
        ray_address=args.ray_address,
        format=args.format,
        max_shard_bytes=args.max_shard_mb * 1_000_000,
        tolerance=args.tolerance,
        validate=not args.no_validate,
        progress=not args.no_progress,
    )


def run(args: argparse.Namespace) -> int:
    for path, what in ((args.annotations, "annotation file"), (args.videos, "video folder")):
        if not path.exists():
            print(f"splice build: {what} not found: {path}")
            return 2
    result = run_build(config_from_args(args))
    print(result.report.summary())
    print(f"wrote {result.out} in {result.seconds:.1f} s")
    for problem in result.problems:
        print(f"validate: {problem}")
    return 1 if result.problems else 0
