"""``splice import-release``: the import as a whole, from a release folder to a build.

The release's files are found (`fetch`), grouped by video (`scan`) and each video made
into clips (`convert`) on the build's executors, so ``--executor ray`` and the workers'
dying with the driver are the build's. From there on an import is a build: the same
shuffle, writer, card and validator (`finish.finish_build`). What the import wrote (each
clip's frames, duration and sha256, and the release files used with their sha256) goes
into ``release_manifest.json``, against which ``splice validate`` checks the clips, since
COIN's segment times say nothing about the authors' cuts.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from splice_build.errors import UserError
from splice_build.output import card, validate
from splice_build.output.clip_verdict import VerifiedClip, VerifiedClips
from splice_build.output.release_manifest import (
    MANIFEST,
    ImportedClip,
    ReleaseFile,
    ReleaseManifest,
    sha256_text,
)
from splice_build.output.writing.write import WriteResult
from splice_build.plural import counted
from splice_build.records import CutSettings, Skip
from splice_build.remote.release.convert import (
    REENCODE,
    REMUX,
    ImportedVideo,
    ImportTask,
    import_one,
)
from splice_build.remote.release.fetch import (
    HUB_REPO,
    RELEASE_LICENSE,
    ReleaseFolder,
    resolve_source,
)
from splice_build.remote.release.scan import (
    ReleasePart,
    ReleaseScan,
    scan_release,
    segments_root,
)
from splice_build.remote.release.tables import release_intro, release_sections
from splice_build.running import ownership
from splice_build.running.executors import (
    Executor,
    add_executor_arguments,
    add_workers_argument,
    make_executor,
)
from splice_build.running.finish import finish_build
from splice_build.running.report import BuildReport
from splice_build.running.workdir import file_digest
from splice_build.stages import ingest, select, shuffle


@dataclass(frozen=True)
class ImportConfig:
    source: str  # a local release folder or a Hub dataset id
    out: Path
    annotations: Path = ingest.BUNDLED_ANNOTATIONS
    seed: int = 0
    revision: str | None = None
    cut: CutSettings = field(default_factory=CutSettings)
    validate: bool = True
    workers: int | None = 1  # None: all cores (or, on Ray, the cluster's CPUs)
    executor: str = "local"
    ray_address: str | None = None
    progress: bool = False


@dataclass(frozen=True)
class ImportResult:
    out: Path
    report: BuildReport
    manifest: ReleaseManifest
    problems: list[validate.Problem]
    remuxed: int
    re_encoded: int


def run_import(config: ImportConfig) -> ImportResult:
    """Import the release into ``config.out``, with the build's guarantees on its folders
    (`ownership`): a folder that is not a previous build's is refused, the output is locked
    and replaced only by a finished, validated import; raises `UserError` otherwise."""
    origin = resolve_source(config.source, config.revision)
    scan = scan_release(origin.folder)
    if not scan.parts:
        raise UserError(f"{segments_root(origin.folder)}: no <youtube_id>_part_<k>.mp4 file")
    annotations, selection = select.select_annotations(config.annotations)
    out = Path(config.out).absolute()
    # The clips are made in a work folder of the import's own beside the output, removed
    # at the end (under the lock, so never while another import uses it).
    work = out.with_name(f".{out.name}.import-work")
    ownership.check_folders(
        out=out, work=work, videos=origin.folder, annotations=config.annotations, curation=None
    )
    report = BuildReport(
        counted="the release",
        settings={
            "source": origin.repo_id,
            "revision": origin.revision,
            "annotations": config.annotations.name,
            "seed": config.seed,
            "cut": config.cut.encoding(),
        },
        local_roots={"<release>": origin.folder, "<out>": out, "<work>": work},
    )
    report.warnings.extend(f"not a release clip name, ignored: {rel}" for rel in scan.ignored)
    report.warnings.extend(f"cannot be read, not imported: {what}" for what in scan.unreadable)
    with ownership.locked(out, work):
        try:
            clips = work / ownership.WORK_CUTS
            if clips.exists():  # a killed import's: the folder is ours (its marker)
                shutil.rmtree(clips)
            tasks = import_tasks(scan, annotations, selection, config, clips)
            # One executor for the import and the final validation's parts.
            executor = make_executor(config.executor, config.workers, config.ray_address)
            imported = _import_all(tasks, config, report, executor)
            nothing = _nothing_imported(report, origin.repo_id, config.out)
            if not imported:
                raise UserError(nothing("imported"))
            return _finish(imported, scan, annotations, origin, config, report, nothing, executor)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def import_tasks(
    scan: ReleaseScan,
    annotations: ingest.IngestResult,
    selection: select.Selection,
    config: ImportConfig,
    work: Path,
) -> list[ImportTask]:
    """One task per video of the release, in id order.

    A video is usable when the annotations' selection (`select.select_annotations`, the
    build's: a valid entry with 2..7 steps) keeps it; the reason otherwise is the one
    ingest or selection gave."""
    entries = {e.video_id: e for e in selection.selected}
    rejected = {
        s.video_id: f"its annotation entry was rejected: {s.reason}" for s in annotations.skips
    }
    rejected.update({s.video_id: s.reason for s in selection.skips})
    bundled = Path(config.annotations).resolve() == ingest.BUNDLED_ANNOTATIONS.resolve()
    hint = ", COIN's public subset: the full COIN.json has every video" if bundled else ""
    absent = f"not in the annotations ({config.annotations.name}{hint})"
    return [
        ImportTask(vid, entries.get(vid), rejected.get(vid, absent), parts, work / vid, config.cut)
        for vid, parts in scan.parts.items()
    ]


def _import_all(
    tasks: list[ImportTask], config: ImportConfig, report: BuildReport, executor: Executor
) -> list[ImportedVideo]:
    """Every task run on the build's executors, imported or skipped into the report in id
    order whichever worker finished first (so nothing depends on ``--workers``)."""
    done: dict[str, ImportedVideo | Skip] = {}
    skipped = 0
    bar = tqdm(total=len(tasks), unit="video", disable=not config.progress, desc="import")
    with bar:
        for result in executor.run(import_one, tasks):
            done[result.video_id] = result
            skipped += isinstance(result, Skip)
            bar.set_postfix(skipped=skipped, refresh=False)
            bar.update()
    imported = []
    for task in tasks:
        result = done[task.video_id]
        if isinstance(result, Skip):
            report.skip(result)
        else:
            imported.append(result)
            report.include(result.video_id, len(result.cut.clips), note=_note(result))
    return imported


def _note(video: ImportedVideo) -> str:
    """How the clips were made; it names no part (that would say which label is which)."""
    n = len(video.methods)
    copied = video.methods.count(REMUX)
    if copied == n:
        return f"{n} clips remuxed"
    return f"{copied} of {n} clips remuxed, {n - copied} re-encoded ({'; '.join(video.reasons)})"


@dataclass(frozen=True)
class _Imported:
    """What the import made, before the shared tail writes it: the manifest and card of
    whichever videos the tail keeps follow from this alone (release files hashed once)."""

    scan: ReleaseScan
    origin: ReleaseFolder
    methods: dict[str, tuple[str, ...]]  # video id -> REMUX / REENCODE per clip
    clips: dict[str, tuple[ImportedClip, ...]]  # video id -> its clips in label order
    file_sha256: dict[str, str]  # release path -> sha256, of every imported video's parts

    def manifest(self, written: WriteResult) -> ReleaseManifest:
        """The manifest of the videos written (the pipeline drops a video whose clips fail
        validation and writes the rest again)."""
        kept = [v.video_id for v in written.videos]
        return ReleaseManifest(
            repo_id=self.origin.repo_id,
            revision=self.origin.revision,
            license=RELEASE_LICENSE,
            files=tuple(ReleaseFile(p.rel, self.file_sha256[p.rel]) for p in self.used(kept)),
            clips={vid: self.clips[vid] for vid in kept},
        )

    def used(self, kept: list[str]) -> list[ReleasePart]:
        """The release files of the videos ``kept``, in path order."""
        return sorted((p for vid in kept for p in self.scan.parts[vid]), key=lambda p: p.rel)

    def counts(self, manifest: ReleaseManifest) -> tuple[int, int]:
        """(clips remuxed, clips re-encoded) of the videos in ``manifest``."""
        done = [m for vid in manifest.clips for m in self.methods[vid]]
        return done.count(REMUX), done.count(REENCODE)


def _finish(
    imported: list[ImportedVideo],
    scan: ReleaseScan,
    annotations: ingest.IngestResult,
    origin: ReleaseFolder,
    config: ImportConfig,
    report: BuildReport,
    nothing: Callable[[str], str],
    executor: Executor,
) -> ImportResult:
    """The shared tail (`finish_build`) with the import's card and manifest; the manifest
    returned is that of the videos the output holds."""
    shuffled = [shuffle.shuffle(v.cut, config.seed) for v in imported]
    checked = {v.video_id: dict(zip(v.cut.clips, v.checked, strict=True)) for v in imported}
    known = _Imported(
        scan=scan,
        origin=origin,
        methods={v.video_id: v.methods for v in imported},
        clips={  # what the workers decoded, in label order: the driver hashes no clip
            s.entry.video_id: tuple(
                ImportedClip(c.num_frames, c.duration, checked[s.entry.video_id][c].sha256)
                for c in s.clips
            )
            for s in shuffled
        },
        file_sha256={p.rel: _sha256(p.path) for v in imported for p in scan.parts[v.video_id]},
    )

    def render(written: WriteResult, sections: list[tuple[str, str]]) -> dict[str, str]:
        manifest = known.manifest(written)
        text = manifest.to_json()
        remuxed, re_encoded = known.counts(manifest)
        source = card.ReleaseSource(
            repo_id=origin.repo_id,
            revision=origin.revision,
            license=RELEASE_LICENSE,
            files=len(manifest.files),
            bytes=sum(p.path.stat().st_size for p in known.used(list(manifest.clips))),
            manifest_sha256=sha256_text(text),
            remuxed=remuxed,
            re_encoded=re_encoded,
            videos_in_release=len(scan.parts),
            clips_in_release=sum(len(parts) for parts in scan.parts.values()),
            local=origin.local,
        )
        provenance = card.Provenance(
            annotations_file=config.annotations.name,
            annotations_sha256=annotations.sha256,
            seed=config.seed,
            cut_settings=config.cut.encoding(),
            videos_in_annotations=len(report.videos),
            videos_included=len(report.included),
            videos_skipped=len(report.skipped),
            skipped_by_stage=report.skips_by_stage(),
            release=source,
        )
        readme = card.render_card(
            written,
            provenance,
            intro=release_intro(origin.repo_id),
            extra_sections=[*release_sections(written, source), *sections],
        )
        return {"README.md": readme, MANIFEST: text}

    finished = finish_build(
        lambda: iter(shuffled),
        Path(config.out).absolute(),
        report,
        render,
        validate_output=config.validate,
        nothing=nothing,
        verified=verified_imports(imported),
        progress=config.progress,
        run=executor.run,
    )
    manifest = known.manifest(finished.written)
    remuxed, re_encoded = known.counts(manifest)
    return ImportResult(config.out, report, manifest, finished.problems, remuxed, re_encoded)


def verified_imports(imported: list[ImportedVideo]) -> VerifiedClips:
    """What the import's workers decoded and checked of each clip (`convert.import_video`):
    its final validation proves those clips by digest, as a build's does (an imported
    clip has no segment; the rule it met has no tolerance to loosen)."""
    return VerifiedClips(
        {
            v.video_id: tuple(
                VerifiedClip(c.sha256, None, c.duration, frames=c.frames) for c in v.checked
            )
            for v in imported
        }
    )


def _sha256(path: Path) -> str:
    return str(file_digest(path)["sha256"])  # the work folder's streaming digest


def _nothing_imported(report: BuildReport, repo_id: str, out: Path) -> Callable[[str], str]:
    """The one-line message of an import left with no video (`pipeline._nothing_built`'s)."""

    def message(what: str) -> str:
        skipped = report.skipped
        stages = ", ".join(f"{stage} {n}" for stage, n in report.skips_by_stage().items())
        first = f"; e.g. {skipped[0].video_id}: {skipped[0].reason}" if skipped else ""
        return (
            f"no video {what}: all {counted(len(report.videos), 'video')} of the release "
            f"{repo_id} were "
            f"skipped ({stages}){first}; nothing written, --out {out} left as it was"
        )

    return message


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        nargs="?",
        default=HUB_REPO,
        help=f"a local folder in the release's layout, or a Hub dataset id (default {HUB_REPO})",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    ingest.add_annotations_argument(parser)
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the shuffles (default %(default)s)"
    )
    parser.add_argument(
        "--revision", default=None, help="Hub revision (branch, tag or commit) to fetch"
    )
    add_workers_argument(parser)
    add_executor_arguments(parser)
    parser.add_argument(
        "--no-validate", action="store_true", help="skip the final `splice validate`"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    result = run_import(
        ImportConfig(
            source=args.source,
            out=args.out,
            annotations=args.annotations,
            seed=args.seed,
            revision=args.revision,
            validate=not args.no_validate,
            workers=args.workers,
            executor=args.executor,
            ray_address=args.ray_address,
            progress=not args.no_progress,
        )
    )
    print(result.report.summary())
    print(f"clips: {result.remuxed} remuxed, {result.re_encoded} re-encoded")
    print(f"wrote {result.out}")
    for problem in result.problems:
        print(f"validate: {problem}")
    # As for `splice build`: the folder is usable without a video dropped at validation,
    # but the exit status says it happened.
    rejected = [v for v in result.report.skipped if v.stage == "validate"]
    for video in rejected:
        print(f"validate: video {video.video_id} dropped: {video.reason}")
    return 1 if result.problems or rejected else 0
