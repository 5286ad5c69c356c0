"""``splice import-release``: the authors' own clips (the Hub release
``prokajevo/splice-benchmark``) as a leak-free SPLICE build.

The release is the only public trace of the paper's 3,381 curated videos: loose clips
``splice_video_segments/<2-digit folder>/<youtube_id>_part_<k>.mp4`` where ``k`` is the
clip's chronological position, so the answer is in every file name. There is no metadata
file. This module reads that layout, groups the parts of each video (they can sit in
different folders), takes a video only when its parts are exactly 1..n and n is its COIN
step count (part k is then step k, and its caption is COIN's k-th step label), and never
guesses otherwise: every other video is skipped with its reason in the build report.

Clips keep the release's pictures: each part is remuxed without re-encoding (audio and
container metadata dropped, timestamps from 0, index first) when its video stream is
H.264 yuv420p with an even size and starts on a keyframe with nothing shown before it, and
the remuxed clip decodes frame for frame; otherwise it is re-encoded by the build's own
cutter (`cut.cut_video`) with the build's settings. From there on an import is a build:
the same shuffle, writer, card and validator (`pipeline.finish_build`). What the import
wrote (each clip's frames, duration and sha256, and the release files used with their
sha256) goes into ``release_manifest.json``, against which ``splice validate`` checks the
clips, since COIN's segment times say nothing about the authors' cuts.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

import av
from tqdm.auto import tqdm

from splice_build.cli import int_at_least
from splice_build.errors import UserError
from splice_build.output import card, stats, validate
from splice_build.records import (
    Clip,
    CutSettings,
    CutVideo,
    ProbedVideo,
    Skip,
    SkipVideo,
    SourceInfo,
    Step,
    VideoEntry,
)
from splice_build.remote.release_manifest import (
    MANIFEST,
    ImportedClip,
    ReleaseFile,
    ReleaseManifest,
    sha256_text,
)
from splice_build.running import ownership
from splice_build.running.pipeline import finish_build
from splice_build.running.report import BuildReport
from splice_build.running.workdir import file_digest
from splice_build.stages import cut, ingest, select, shuffle
from splice_build.stages.clipcheck import STREAM_KEYS, ClipProbe, clip_problems, probe_clip
from splice_build.stages.frames import DECODE_ERRORS, source_rate

HUB_REPO = "prokajevo/splice-benchmark"
SEGMENTS_DIR = "splice_video_segments"
# What the import downloads: the clips only (the release has no other data file).
ALLOW_PATTERNS = (f"{SEGMENTS_DIR}/*/*.mp4",)
RELEASE_LICENSE = "cc-by-nc-4.0"  # the release card's licence (its Hub page)
PART_NAME = re.compile(r"^(?P<video_id>[A-Za-z0-9_-]+)_part_(?P<part>\d+)\.mp4$")
LFS_POINTER = b"version https://git-lfs"
STAGE = "import"
REMUX, REENCODE = "remux", "re-encode"
# Past any frame of a part: a re-encoded part's one step ends with its stream.
_WHOLE_PART_END = 1e6

# The paper's figures, copied here (never read at run time).
PAPER_VIDEOS, PAPER_CLIPS = 3381, 11423  # Table 1's caption
# Table 1: number of clips -> (videos, average duration in seconds)
PAPER_TABLE1: dict[int, tuple[int, float]] = {
    2: (1020, 46.83),
    3: (1026, 53.31),
    4: (734, 62.41),
    5: (333, 72.67),
    6: (172, 67.86),
    7: (96, 73.50),
}
# Table 6: segments -> (videos, clips, mean s, std dev s, videos per duration bin), the
# bins being (2, 35], (35, 68], (68, 100], (100, 133], (133, 166], (166, 198], (198, 330].
PAPER_TABLE6: dict[int, tuple[int, int, float, float, tuple[int, ...]]] = {
    2: (1020, 2040, 46.84, 40.75, (531, 245, 128, 65, 35, 12, 4)),
    3: (1026, 3078, 53.32, 42.68, (434, 309, 142, 79, 36, 19, 7)),
    4: (734, 2936, 62.41, 40.76, (209, 260, 146, 70, 32, 13, 4)),
    5: (333, 1665, 72.67, 43.20, (62, 123, 69, 46, 21, 10, 2)),
    6: (172, 1032, 67.86, 37.49, (38, 56, 45, 22, 9, 2, 0)),
    7: (96, 672, 73.50, 38.28, (19, 26, 30, 14, 5, 2, 0)),
}


def download_release(repo_id: str = HUB_REPO, revision: str | None = None) -> Path:
    """The release's clips in the Hub cache (resumable; files already there are reused)."""
    from huggingface_hub import snapshot_download

    return Path(
        snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=list(ALLOW_PATTERNS),
        )
    )


@dataclass(frozen=True)
class ReleasePart:
    video_id: str
    part: int  # chronological position, 1-based, as the file name says
    path: Path
    rel: str  # path inside the release, for reports and the manifest


@dataclass(frozen=True)
class ReleaseScan:
    parts: dict[str, tuple[ReleasePart, ...]]  # video id -> its parts, sorted by (part, rel)
    ignored: tuple[str, ...]  # files under the layout that are not <id>_part_<k>.mp4


@dataclass(frozen=True)
class ImportedVideo:
    cut: CutVideo  # clips in chronological order
    methods: tuple[str, ...]  # REMUX or REENCODE per chronological clip
    reasons: tuple[str, ...]  # why each re-encoded clip could not be remuxed


def segments_root(source: Path) -> Path:
    """The ``splice_video_segments`` folder of a release folder (or the folder itself)."""
    if (source / SEGMENTS_DIR).is_dir():
        return source / SEGMENTS_DIR
    if source.name == SEGMENTS_DIR and source.is_dir():
        return source
    raise UserError(f"{source}: no {SEGMENTS_DIR}/ folder (the release's layout)")


def scan_release(source: Path) -> ReleaseScan:
    """Every file of every folder of the layout, grouped by YouTube id."""
    root = segments_root(Path(source))
    base = root.parent
    grouped: dict[str, list[ReleasePart]] = defaultdict(list)
    ignored = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        rel = path.relative_to(base).as_posix()
        m = PART_NAME.match(path.name)
        if m is None:
            ignored.append(rel)
            continue
        vid = m["video_id"]
        grouped[vid].append(ReleasePart(vid, int(m["part"]), path, rel))
    parts = {
        vid: tuple(sorted(found, key=lambda p: (p.part, p.rel)))
        for vid, found in sorted(grouped.items())
    }
    return ReleaseScan(parts=parts, ignored=tuple(ignored))


def chronological_parts(parts: tuple[ReleasePart, ...], num_steps: int) -> tuple[ReleasePart, ...]:
    """The parts as steps 1..n, or ``SkipVideo`` when they are not exactly 1..num_steps."""
    by_number: dict[int, list[ReleasePart]] = defaultdict(list)
    for p in parts:
        by_number[p.part].append(p)
    for number, same in sorted(by_number.items()):
        if len(same) > 1:
            raise SkipVideo(
                STAGE,
                f"extra part: part {number} appears {len(same)} times "
                f"({', '.join(p.rel for p in same)})",
            )
    if 0 in by_number:
        raise SkipVideo(STAGE, f"extra part: {by_number[0][0].rel} (parts count from 1)")
    n = max(by_number)
    missing = [k for k in range(1, n + 1) if k not in by_number]
    if missing:
        raise SkipVideo(
            STAGE,
            f"missing part {', '.join(map(str, missing))} of 1..{n} "
            f"(found {', '.join(map(str, sorted(by_number)))})",
        )
    if n != num_steps:
        raise SkipVideo(STAGE, f"step count differs: parts 1..{n} but COIN has {num_steps} steps")
    return tuple(by_number[k][0] for k in range(1, n + 1))


def _check_file(part: ReleasePart) -> None:
    size = part.path.stat().st_size
    if size == 0:
        raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) is empty (0 bytes)")
    with open(part.path, "rb") as fh:
        head = fh.read(len(LFS_POINTER))
    if head == LFS_POINTER:
        raise SkipVideo(
            STAGE,
            f"part {part.part} ({part.rel}) is a Git LFS pointer, not the video "
            "(fetch the LFS objects)",
        )


def _scrub(message: str, part: ReleasePart) -> str:
    """A reason without local paths: the report and card are the same on every machine."""
    return str(message).replace(str(part.path), part.rel)


@dataclass(frozen=True)
class _Stream:
    """What the remux decision needs to know about one part's video stream."""

    source: SourceInfo
    blockers: tuple[str, ...]  # why the packets cannot be copied as they are
    packets: int


def _inspect(part: ReleasePart) -> _Stream:
    """Open a part and read its video packets (no decoding)."""
    try:
        container = av.open(str(part.path))
    except DECODE_ERRORS as err:
        reason = _scrub(f"part {part.part} ({part.rel}) does not open: {err}", part)
        raise SkipVideo(STAGE, reason) from None
    with container:
        if not container.streams.video:
            raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) has no video stream")
        stream = container.streams.video[0]
        ctx = stream.codec_context
        blockers = []
        if ctx.name != "h264" or str(ctx.format.name if ctx.format else "") != "yuv420p":
            fmt = ctx.format.name if ctx.format else "?"
            blockers.append(f"{ctx.name}/{fmt}, not h264/yuv420p")
        if ctx.width % 2 or ctx.height % 2:
            blockers.append(f"odd size {ctx.width}x{ctx.height}")
        count, first_key, min_pts = 0, None, None
        try:
            for packet in container.demux(stream):
                if packet.size == 0:
                    continue
                if packet.pts is None or packet.dts is None:
                    blockers.append("a packet without timestamps")
                    break
                if packet.is_discard or packet.is_corrupt:
                    blockers.append("discarded or corrupt packets (an edit list or damage)")
                    break
                if count == 0:
                    if not packet.is_keyframe:
                        blockers.append("does not start on a keyframe")
                    first_key = packet.pts
                min_pts = packet.pts if min_pts is None else min(min_pts, packet.pts)
                count += 1
        except DECODE_ERRORS as err:
            raise SkipVideo(
                STAGE, _scrub(f"part {part.part} ({part.rel}) does not demux: {err}", part)
            ) from None
        if count == 0:
            raise SkipVideo(STAGE, f"part {part.part} ({part.rel}) has no video frame")
        if first_key is not None and min_pts is not None and min_pts < first_key:
            blockers.append("frames shown before its first keyframe")
        rate = source_rate(stream)
        time_base = Fraction(stream.time_base)
        duration = float(stream.duration * time_base) if stream.duration else 0.0
        source = SourceInfo(
            path=part.path,
            container=container.format.name,
            codec=ctx.name,
            width=ctx.width,
            height=ctx.height,
            fps=float(rate) if rate else 0.0,
            duration=duration,
            start_time=float((stream.start_time or 0) * time_base),
            has_audio=bool(container.streams.audio),
        )
    return _Stream(source=source, blockers=tuple(dict.fromkeys(blockers)), packets=count)


def remux(src: Path, dst: Path) -> None:
    """Copy the video packets of ``src`` into a fresh mp4: no audio, no metadata beyond the
    muxer's own, the first shown frame at time 0, the index first (+faststart)."""
    with av.open(str(src)) as inp:
        stream = inp.streams.video[0]
        packets = [p for p in inp.demux(stream) if p.size]
        shift = min(p.pts for p in packets)
        with av.open(
            str(dst), "w", format="mp4", container_options={"movflags": "+faststart"}
        ) as out:
            copy = out.add_stream_from_template(stream)
            for key in list(copy.metadata):
                if key not in STREAM_KEYS:
                    del copy.metadata[key]
            for packet in packets:
                packet.pts -= shift
                packet.dts -= shift
                packet.stream = copy
                out.mux(packet)


def _reencode(part: ReleasePart, source: SourceInfo, entry, out_dir: Path, settings) -> Path:
    """The whole part through the build's cutter: one step from the first frame to the end."""
    step = entry.steps[part.part - 1]
    whole = replace(entry, steps=(Step(step.step_id, step.label, 0.0, _WHOLE_PART_END),))
    work = out_dir / f"reencode{part.part:02d}"
    try:
        result = cut.cut_video(ProbedVideo(whole, source), work, settings)
    except SkipVideo as err:
        reason = _scrub(f"part {part.part} ({part.rel}): {err.reason}", part)
        raise SkipVideo(STAGE, reason) from None
    return result.clips[0].path


def import_video(
    entry, parts: tuple[ReleasePart, ...], out_dir: Path, settings: CutSettings
) -> ImportedVideo:
    """One video's parts as clips in ``out_dir`` (chronological), or ``SkipVideo``."""
    ordered = chronological_parts(parts, entry.num_steps)
    for part in ordered:
        _check_file(part)
    out_dir.mkdir(parents=True, exist_ok=True)
    clips, methods, reasons, sources = [], [], [], []
    for part in ordered:
        info = _inspect(part)
        sources.append(info.source)
        path = out_dir / cut.clip_name(part.part - 1)
        why = "; ".join(info.blockers)
        if not why:
            remux(part.path, path)
            why, probe = _check_remuxed(path, info.packets)
        if why:
            path.unlink(missing_ok=True)
            path = _reencode(part, info.source, entry, out_dir, settings).rename(path)
            reasons.append(why)
            probe = _probe(path, part)
        methods.append(REENCODE if why else REMUX)
        clips.append(
            Clip(
                step_index=part.part - 1,
                path=path,
                duration=probe.duration,
                num_frames=probe.frames,
                first_time=0.0,
                last_time=probe.duration - probe.frame_duration,
                width=probe.width,
                height=probe.height,
            )
        )
    # A release video has one file per clip; the record's one source is its first part's
    # (nothing downstream reads it: shuffle and write use the entry and the clips).
    cut_video = CutVideo(entry=entry, source=sources[0], clips=tuple(clips))
    return ImportedVideo(cut=cut_video, methods=tuple(methods), reasons=tuple(reasons))


def _probe(path: Path, part: ReleasePart) -> ClipProbe:
    try:
        return probe_clip(path.read_bytes())
    except (*DECODE_ERRORS, ValueError) as err:
        raise SkipVideo(
            STAGE, _scrub(f"part {part.part} ({part.rel}) does not decode: {err}", part)
        ) from None


def _check_remuxed(path: Path, packets: int) -> tuple[str, ClipProbe | None]:
    """(why the remuxed clip is not clean, or "", and its probe): decoded frame by frame
    and held to the clip rule `splice validate` applies (`clipcheck`), with no segment to
    last (the release's cut times are unknown)."""
    try:
        probe = probe_clip(path.read_bytes())
    except (*DECODE_ERRORS, ValueError) as err:
        return f"the remuxed clip does not decode: {err}", None
    if probe.frames != packets:
        return f"{probe.frames} of its {packets} frames decode when remuxed", probe
    what = clip_problems(probe, segment=None, last_end=0.0, recorded=None, tolerance=0.0)
    return "; ".join(what), probe


# --- the whole import ----------------------------------------------------------------


@dataclass(frozen=True)
class ImportConfig:
    source: str  # a local release folder or a Hub dataset id
    out: Path
    annotations: Path = ingest.BUNDLED_ANNOTATIONS
    seed: int = 0
    revision: str | None = None
    cut: CutSettings = field(default_factory=CutSettings)
    validate: bool = True
    workers: int = 1
    progress: bool = False


@dataclass(frozen=True)
class ImportResult:
    out: Path
    report: BuildReport
    manifest: ReleaseManifest
    problems: list[validate.Problem]
    remuxed: int
    re_encoded: int


HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def resolve_source(source: str, revision: str | None) -> tuple[Path, str, str, bool]:
    """(folder, repository id, revision, local?) of SOURCE: a folder, or a Hub id to fetch.

    A local folder is named by itself: nothing proves it is a copy of the release."""
    path = Path(source)
    if path.is_dir():
        return path, path.resolve().name, revision or "unknown", True
    if path.exists():
        raise UserError(f"SOURCE {source}: not a folder")
    if not HUB_ID.match(source):
        raise UserError(f"SOURCE {source!r}: no such folder, and not a Hub dataset id")
    try:
        folder = download_release(source, revision)
    except (OSError, ValueError) as exc:  # huggingface_hub's errors are OSError/ValueError
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"cannot fetch dataset {source} (revision {revision or 'main'}) from the Hub: {detail}"
        ) from None
    # A snapshot folder is named by the commit it holds: the exact revision imported.
    commit = folder.name if re.fullmatch(r"[0-9a-f]{40}", folder.name) else None
    return folder, source, commit or revision or "main", False


def run_import(config: ImportConfig) -> ImportResult:
    """Import the release into ``config.out``, with the build's guarantees on its folders
    (`ownership`): a folder that is not a previous build's is refused, the output is locked
    and replaced only by a finished, validated import; raises `UserError` otherwise."""
    folder, repo_id, revision, local = resolve_source(config.source, config.revision)
    scan = scan_release(folder)
    if not scan.parts:
        raise UserError(f"{segments_root(folder)}: no <youtube_id>_part_<k>.mp4 file")
    annotations, selection = select.select_annotations(config.annotations)
    out = Path(config.out).absolute()
    # The clips are made in a work folder of the import's own beside the output, removed
    # at the end (under the lock, so never while another import uses it).
    work = out.with_name(f".{out.name}.import-work")
    ownership.check_folders(
        out=out, work=work, videos=folder, annotations=config.annotations, curation=None
    )
    report = BuildReport(
        counted="the release",
        settings={
            "source": repo_id,
            "revision": revision,
            "annotations": config.annotations.name,
            "seed": config.seed,
            "cut": config.cut.encoding(),
        },
        local_roots={"<release>": folder, "<out>": out, "<work>": work},
    )
    report.warnings.extend(f"not a release clip name, ignored: {rel}" for rel in scan.ignored)
    with ownership.locked(out, work):
        try:
            clips = work / ownership.WORK_CUTS
            if clips.exists():  # a killed import's: the folder is ours (its marker)
                shutil.rmtree(clips)
            imported = _import_all(scan, annotations, selection, config, clips, report)
            nothing = _nothing_imported(report, repo_id, config.out)
            if not imported:
                raise UserError(nothing("imported"))
            where = (repo_id, revision, local)
            return _finish(imported, scan, annotations, where, config, report, nothing)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _nothing_imported(report: BuildReport, repo_id: str, out: Path):
    """The one-line message of an import left with no video (`pipeline._nothing_built`'s)."""

    def message(what: str) -> str:
        skipped = report.skipped
        stages = ", ".join(f"{stage} {n}" for stage, n in report.skips_by_stage().items())
        first = f"; e.g. {skipped[0].video_id}: {skipped[0].reason}" if skipped else ""
        return (
            f"no video {what}: all {len(report.videos)} videos of the release {repo_id} were "
            f"skipped ({stages}){first}; nothing written, --out {out} left as it was"
        )

    return message


@dataclass(frozen=True)
class _Task:
    """One video of the release to import: plain values, so it pickles to a worker."""

    video_id: str
    entry: VideoEntry | None  # None: not usable by the annotations' selection (``unusable``)
    unusable: str
    parts: tuple[ReleasePart, ...]
    out_dir: Path
    settings: CutSettings


def _run_task(task: _Task) -> ImportedVideo | Skip:
    """Import one video; a ``Skip`` (not the exception, which does not pickle) otherwise."""
    try:
        if task.entry is None:
            raise SkipVideo(STAGE, task.unusable)
        return import_video(task.entry, task.parts, task.out_dir, task.settings)
    except SkipVideo as skip:
        shutil.rmtree(task.out_dir, ignore_errors=True)
        return Skip(task.video_id, STAGE, skip.reason)


def _map(tasks: list[_Task], workers: int) -> Iterator[ImportedVideo | Skip]:
    """Results in task order, whichever process made them (so the output never depends on
    ``--workers``). Workers are spawned like the build's, and each video is independent."""
    if workers <= 1:
        yield from map(_run_task, tasks)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield from pool.map(_run_task, tasks)


def _import_all(scan, annotations, selection, config, work, report) -> list[ImportedVideo]:
    """Every video of the release, imported or skipped into the report, in id order.

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
    tasks = [
        _Task(vid, entries.get(vid), rejected.get(vid, absent), parts, work / vid, config.cut)
        for vid, parts in scan.parts.items()
    ]
    imported = []
    bar = tqdm(total=len(tasks), unit="video", disable=not config.progress, desc="import")
    with bar:
        for result in _map(tasks, config.workers):
            if isinstance(result, Skip):
                report.skip(result)
            else:
                imported.append(result)
                vid = result.cut.entry.video_id
                report.include(vid, len(result.cut.clips), note=_note(result))
            bar.set_postfix(skipped=len(report.skipped), refresh=False)
            bar.update()
    return imported


def _note(video: ImportedVideo) -> str:
    """How the clips were made; it names no part (that would say which label is which)."""
    n = len(video.methods)
    copied = video.methods.count(REMUX)
    if copied == n:
        return f"{n} clips remuxed"
    return f"{copied} of {n} clips remuxed, {n - copied} re-encoded ({'; '.join(video.reasons)})"


def _finish(imported, scan, annotations, where, config, report, nothing) -> ImportResult:
    repo_id, revision, local = where
    shuffled = [shuffle.shuffle(v.cut, config.seed) for v in imported]
    methods = {v.cut.entry.video_id: v.methods for v in imported}
    recorded = {
        s.entry.video_id: tuple(
            ImportedClip(c.num_frames, c.duration, _sha256(c.path)) for c in s.clips
        )
        for s in shuffled
    }
    last: dict[str, ReleaseManifest] = {}

    def render(written, sections) -> dict[str, str]:
        """The card and the manifest of the videos written (the pipeline drops a video
        whose clips fail validation and renders again)."""
        kept = [v.video_id for v in written.videos]
        used = sorted((p for vid in kept for p in scan.parts[vid]), key=lambda p: p.rel)
        manifest = ReleaseManifest(
            repo_id=repo_id,
            revision=revision,
            license=RELEASE_LICENSE,
            files=tuple(ReleaseFile(p.rel, _sha256(p.path)) for p in used),
            clips={vid: recorded[vid] for vid in kept},
        )
        text = manifest.to_json()
        done = [m for vid in kept for m in methods[vid]]
        origin = card.ReleaseSource(
            repo_id=repo_id,
            revision=revision,
            license=RELEASE_LICENSE,
            files=len(manifest.files),
            bytes=sum(p.path.stat().st_size for p in used),
            manifest_sha256=sha256_text(text),
            remuxed=done.count(REMUX),
            re_encoded=done.count(REENCODE),
            videos_in_release=len(scan.parts),
            clips_in_release=sum(len(parts) for parts in scan.parts.values()),
            local=local,
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
            release=origin,
        )
        last["manifest"] = manifest
        readme = card.render_card(
            written,
            provenance,
            intro=release_intro(repo_id),
            extra_sections=[*_release_sections(written, origin), *sections],
        )
        return {"README.md": readme, MANIFEST: text}

    problems = finish_build(
        lambda: iter(shuffled),
        Path(config.out).absolute(),
        report,
        render,
        validate_output=config.validate,
        nothing=nothing,
    )
    manifest = last["manifest"]
    counts = [m for vid in manifest.clips for m in methods[vid]]
    return ImportResult(
        config.out, report, manifest, problems, counts.count(REMUX), counts.count(REENCODE)
    )


def _sha256(path: Path) -> str:
    return str(file_digest(path)["sha256"])  # the work folder's streaming digest


# --- the card: where the clips came from, and the paper's tables next to this build's ---


def release_intro(repo_id: str) -> str:
    return (
        "SPLICE (Ballout, Okajevo et al., 2025) probes event-based visual reasoning: each row "
        "is one COIN instructional video cut into one clip per annotated step (2 to 7), "
        'shuffled and labelled "Video 1" .. "Video n"; a model must put the clips back in '
        f"chronological order. The clips of this folder are the authors' own, from their "
        f"release `{repo_id}` (the paper's curated videos), imported by `splice "
        "import-release`: the release names each clip by its chronological position, so "
        "they were renamed by their shuffled label, stripped of audio and metadata, and "
        "given COIN's step labels as captions."
    )


def _cell(ours: float | int | None, paper: float | int | None, fmt: str = "{}") -> str:
    mine = "–" if ours is None else fmt.format(ours)
    return f"{mine} ({'–' if paper is None else fmt.format(paper)})"


def comparison_tables(build: stats.BuildStats) -> str:
    """Tables 1 and 6 of this build with the paper's figure in brackets after each."""
    rows = {r.num_clips: r for r in build.rows}
    t1 = []
    for n in sorted(set(rows) | set(PAPER_TABLE1)):
        r, p = rows.get(n), PAPER_TABLE1.get(n)
        t1.append(
            (
                str(n),
                _cell(r.videos if r else 0, p[0] if p else None),
                _cell(r.mean_duration if r else None, p[1] if p else None, "{:.2f}"),
            )
        )
    total = f"{build.clips} ({PAPER_CLIPS}) clips"
    t1.append(("**all**", _cell(build.videos, PAPER_VIDEOS), total))
    bins = stats.BIN_LABELS[1:-1]  # the paper's seven bins
    t6 = []
    for n in sorted(set(rows) | set(PAPER_TABLE6)):
        r, p = rows.get(n), PAPER_TABLE6.get(n)
        ours_bins = r.bins[1:-1] if r else (0,) * len(bins)
        t6.append(
            (
                str(n),
                _cell(r.videos if r else 0, p[0] if p else None),
                _cell(r.clips if r else 0, p[1] if p else None),
                _cell(r.mean_duration if r else None, p[2] if p else None, "{:.2f}"),
                _cell(r.std_duration if r else None, p[3] if p else None, "{:.2f}"),
                *(_cell(o, p[4][i] if p else None) for i, o in enumerate(ours_bins)),
            )
        )
    outside = sum(r.bins[0] + r.bins[-1] for r in build.rows)
    return "\n\n".join(
        [
            card.markdown_table(("Clips", "Videos (paper)", "Average Duration (s) (paper)"), t1),
            card.markdown_table(
                (
                    "Segments",
                    "Videos (paper)",
                    "Clips (paper)",
                    "Mean Time (s) (paper)",
                    "Std Dev (paper)",
                    *bins,
                ),
                t6,
            ),
            f"Videos outside the paper's duration bins in this build: {outside}.",
        ]
    )


def _release_sections(written, origin: card.ReleaseSource) -> list[tuple[str, str]]:
    build = stats.compute_stats(written.videos)

    def versus(videos: int, clips: int) -> str:
        if (videos, clips) == (PAPER_VIDEOS, PAPER_CLIPS):
            return "the paper's counts"
        return (
            f"{videos - PAPER_VIDEOS:+d} videos and {clips - PAPER_CLIPS:+d} clips against "
            "the paper"
        )

    if origin.local:
        where = (
            f"Clips from the local folder `{origin.repo_id}` in the layout of the release "
            f"`{HUB_REPO}` (revision: {origin.revision})"
        )
    else:
        url = f"https://huggingface.co/datasets/{origin.repo_id}"
        where = f"Clips from [`{origin.repo_id}`]({url}) at revision `{origin.revision}`"
    source = (
        f"{where}, released "
        f"under **{origin.license}** (Creative Commons Attribution-NonCommercial 4.0): "
        f"{origin.files} files ({origin.bytes} bytes) of the release's "
        f"{origin.videos_in_release} videos, each listed with its sha256 in `{MANIFEST}` "
        f"(sha256 `{origin.manifest_sha256}`). {origin.remuxed} clips were remuxed without "
        f"re-encoding (the release's pictures kept; audio and container metadata dropped, "
        f"timestamps from 0) and {origin.re_encoded} re-encoded with the build's settings "
        "where remuxing could not give a clean clip; `build_report.json` lists every video "
        "of the release, imported (with how) or skipped with its reason. A video was "
        "imported only when its parts are exactly 1..n with n its COIN step count, part k "
        "being step k: its captions are COIN's step labels and `answer.segments` COIN's "
        "segment times, not measured on the release's clips (whose cut times were not "
        "published). `splice validate` checks each clip against the frames, duration and "
        f"sha256 recorded in `{MANIFEST}`."
    )
    held = (origin.videos_in_release, origin.clips_in_release)
    compare = (
        f"The release holds **{held[0]} videos and {held[1]} clips** "
        f"({versus(*held)}); this build imported **{build.videos} videos and "
        f"{build.clips} clips** ({versus(build.videos, build.clips)}). The paper's curated "
        f"set (Table 1): {PAPER_VIDEOS} videos, {PAPER_CLIPS} clips. Each cell below is this "
        "build's figure with the paper's in brackets (Table 1, then Table 6).\n\n"
        + comparison_tables(build)
    )
    return [("Source: the SPLICE release", source), ("Against the paper", compare)]


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
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffles")
    parser.add_argument(
        "--revision", default=None, help="Hub revision (branch, tag or commit) to fetch"
    )
    parser.add_argument(
        "--workers",
        type=int_at_least(1),
        default=os.cpu_count() or 1,
        help="worker processes (default: all cores)",
    )
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


__all__ = [
    "ALLOW_PATTERNS",
    "HUB_REPO",
    "PAPER_TABLE1",
    "PAPER_TABLE6",
    "ImportConfig",
    "download_release",
    "run_import",
    "scan_release",
]
