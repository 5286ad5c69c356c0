"""``splice validate DIR`` (stage 8): reopen a built folder and check everything a user relies on.

Checks, each reported as a ``Problem`` naming the file, row, video and column:

- Layout: one folder per config (``splice_dataset.shard_dir``), shards named
  ``{split}-{i:05d}-of-{n:05d}.parquet`` with no gap, no leftover temporary shard; each
  shard's columns are exactly its config's (the Hub's viewer casts every column of a file
  to the config's features), and its ``huggingface`` schema metadata restores exactly
  ``splice_dataset.features``.
- Rows: ``num_clips`` within 2..7 and equal to the lengths of clips, captions, clip
  durations and every ``answer`` list; ``answer.order`` a permutation of 1..n that agrees
  with ``answer.segments`` (the label of the earliest segment comes first); segments
  non-empty and non-overlapping; ``duration`` the sum of ``clip_durations``.
- Clips: every clip is an mp4 that decodes with PyAV (every frame, unless ``quick``), H.264,
  yuv420p, even size, at least ``MIN_SIDE`` px on its short side and ``MIN_FPS`` frames per
  second; its duration matches its segment and its ``clip_durations`` entry to a frame (see
  ``TOLERANCE``).
- Order leaks outside ``answer``: clip file names other than ``clip_file_name(video_id,
  label)``; clips whose timestamps do not start at 0 (they would carry source times); mp4
  metadata beyond the muxer's own keys (``creation_time``, comments, titles... could carry
  source times or positions); ``video`` and ``text`` rows that disagree with the
  ``video_text`` shards (the one config holding every column, checked in full); and a
  build where every video's labels are in chronological order (no shuffle). Captions and
  clip durations are aligned with the labels, so they are not leaks by themselves.
- Card: README.md parses (``huggingface_hub.DatasetCard``), names the three configs with
  their columns and data files, and its ``num_examples``, ``num_bytes`` and Table 1 agree
  with the shards.
- Bytes: every Parquet page's CRC is verified (the writer stores them), and the sha256 of
  the shards is recomputed and compared with the one the card recorded, so a flipped byte
  anywhere in a shard fails validation (and ``publish``), even one inside a clip that
  would still decode.

Duration tolerance: the clips are checked by ``splice_build.stages.clipcheck``, the rule the
cutter's workers apply before committing a cut: a clip lasts its segment within
``tolerance_frames`` (default 1) frame durations of its own rate, plus 0.1 ms for the
rounding of times, except that a segment ending within the build's coverage tolerance
(``splice_build.tolerance`` on the card) of the video's last end may lack that part: the
source may end there, and the clip then ends with its last frame.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from huggingface_hub import DatasetCard

from splice_build.cli import float_in
from splice_build.errors import UserError
from splice_build.output.card import TABLE1_HEADER, markdown_table, table1_rows
from splice_build.output.stats import VideoStats, compute_stats
from splice_build.output.write import TMP_PREFIX, ShardInfo, WriteResult, shard_info
from splice_build.remote.release_manifest import (
    MANIFEST,
    ORIGIN,
    ImportedClip,
    ReleaseManifest,
    read_manifest,
    sha256_text,
)
from splice_build.stages.clipcheck import (
    ROUNDING,
    TOLERANCE_FRAMES,
    ClipProbe,
    clip_problems,
    probe_clip,
)
from splice_build.stages.probe import COVERAGE_TOLERANCE
from splice_dataset import (
    ANSWER,
    CAPTIONS,
    CLIP_DURATIONS,
    CLIPS,
    CONFIGS,
    DEFAULT_CONFIG,
    DURATION,
    FULL_CONFIG,
    MAX_CLIPS,
    MIN_CLIPS,
    NUM_CLIPS,
    SHARD_NAME_RE,
    SPLIT,
    VIDEO_ID,
    clip_file_name,
    columns,
    data_files_pattern,
    features,
    shard_dir,
)

# Below this probability of every video being in chronological order by chance, the build
# is reported as unshuffled.
UNSHUFFLED_P = 1e-6


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a built folder, and where."""

    file: str  # path relative to the build folder
    what: str
    row: int | None = None  # row index within the file
    video_id: str | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.video_id is not None:
            where.append(f"video {self.video_id}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.what}"


@dataclass
class ValidationReport:
    problems: list[Problem] = field(default_factory=list)
    videos: int = 0
    clips: int = 0
    shards: dict[str, int] = field(default_factory=dict)  # config -> shard count

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        counts = ", ".join(f"{n} {config}" for config, n in self.shards.items())
        return (
            f"OK: {self.videos} videos, {self.clips} clips; shards: {counts}; every clip "
            "decodes, answers are permutations, no order leak found, the card matches"
        )


def _list_shards(root: Path, folder: str, split: str) -> tuple[list[Path], list[Problem]]:
    """The shards of one folder in index order, and any naming problem."""
    problems: list[Problem] = []
    directory = root / folder
    if not directory.is_dir():
        return [], [Problem(folder, "folder missing")]
    found: dict[int, Path] = {}
    totals: set[int] = set()
    for path in sorted(directory.iterdir()):
        rel = f"{folder}/{path.name}"
        if path.name.startswith(TMP_PREFIX):
            problems.append(Problem(rel, "leftover temporary shard of an unfinished write"))
            continue
        if path.suffix != ".parquet":
            continue
        m = SHARD_NAME_RE.match(path.name)
        if not m or m["split"] != split:
            problems.append(Problem(rel, f"not a {split!r} shard name like {split}-00000-of-00001"))
            continue
        found[int(m["i"])] = path
        totals.add(int(m["n"]))
    if not found:
        problems.append(Problem(folder, f"no {split!r} shard"))
        return [], problems
    if len(totals) > 1:
        problems.append(Problem(folder, f"shards disagree on their count: {sorted(totals)}"))
    total = max(totals)
    missing = sorted(set(range(total)) - set(found))
    if missing or max(found) >= total:
        problems.append(
            Problem(folder, f"shard indices {sorted(found)} do not cover 0..{total - 1}")
        )
    return [found[i] for i in sorted(found)], problems


def _check_schema(rel: str, pf: pq.ParquetFile, config: str) -> list[Problem]:
    problems = []
    schema = pf.schema_arrow
    expected = list(columns(config))
    if schema.names != expected:
        extra = [c for c in schema.names if c not in expected]
        missing = [c for c in expected if c not in schema.names]
        problems.append(
            Problem(
                rel,
                f"columns {schema.names} are not the {config} config's {expected}"
                + (f"; extra {extra} (a model-facing column outside the answer?)" if extra else "")
                + (f"; missing {missing}" if missing else ""),
            )
        )
    if not schema.metadata or b"huggingface" not in schema.metadata:
        problems.append(Problem(rel, "no 'huggingface' schema metadata: features not restorable"))
    elif Features.from_arrow_schema(schema) != features(config):
        problems.append(Problem(rel, f"schema metadata does not restore the {config} features"))
    return problems


def _open(rel: str, path: Path, problems: list[Problem]) -> pq.ParquetFile | None:
    try:
        return pq.ParquetFile(path, page_checksum_verification=True)
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(rel, f"not a readable Parquet file: {exc}"))
        return None


def _rows(
    rel: str, pf: pq.ParquetFile, problems: list[Problem]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row index, row), one row group at a time so memory stays bounded by a row group;
    every page's CRC is verified on the way (a flipped byte anywhere is a problem)."""
    first = 0
    for rg in range(pf.metadata.num_row_groups):
        size = pf.metadata.row_group(rg).num_rows
        try:
            rows = pf.read_row_group(rg).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            problems.append(
                Problem(rel, f"row group {rg} (rows {first}..{first + size - 1}): {exc}")
            )
            rows = []
        yield from enumerate(rows, start=first)
        first += size


def _check_answer(row: dict[str, Any], n: int) -> list[tuple[str, str]]:
    """(column, what) problems of the answer struct."""
    answer = row.get(ANSWER) or {}
    out: list[tuple[str, str]] = []
    order = answer.get("order") or []
    segments = answer.get("segments") or []
    step_ids = answer.get("step_ids") or []
    if sorted(order) != list(range(1, n + 1)):
        out.append((f"{ANSWER}.order", f"{order} is not a permutation of 1..{n}"))
    for name, value in (("segments", segments), ("step_ids", step_ids)):
        if len(value) != n:
            out.append((f"{ANSWER}.{name}", f"{len(value)} entries for {n} clips"))
    if len(segments) == n and all(s and s["start"] is not None for s in segments):
        for k, s in enumerate(segments, start=1):
            if not s["end"] > s["start"] >= 0:
                out.append((f"{ANSWER}.segments", f"segment of clip {k} is {s}: empty"))
        chrono = sorted(range(1, n + 1), key=lambda label: segments[label - 1]["start"])
        if sorted(order) == list(range(1, n + 1)) and chrono != list(order):
            out.append((f"{ANSWER}.order", f"{order} disagrees with the segments' order {chrono}"))
        for a, b in zip(chrono, chrono[1:], strict=False):
            if segments[a - 1]["end"] > segments[b - 1]["start"] + ROUNDING:
                out.append((f"{ANSWER}.segments", f"segments of clips {a} and {b} overlap"))
    return out


def _check_row(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(column, what) problems of one clip-shard row, clips not decoded (text rows are
    checked by comparing them with these)."""
    out: list[tuple[str, str]] = []
    n = row.get(NUM_CLIPS)
    if not isinstance(n, int) or not MIN_CLIPS <= n <= MAX_CLIPS:
        return [(NUM_CLIPS, f"{n!r} is not within {MIN_CLIPS}..{MAX_CLIPS}")]
    for col in (CLIPS, CAPTIONS, CLIP_DURATIONS):
        if len(row.get(col) or []) != n:
            out.append((col, f"{len(row.get(col) or [])} entries for num_clips={n}"))
    durations = row.get(CLIP_DURATIONS) or []
    if len(durations) == n and not math.isclose(
        row.get(DURATION) or 0.0, math.fsum(durations), abs_tol=1e-6
    ):
        out.append((DURATION, f"{row.get(DURATION)} is not the sum of clip_durations"))
    out += _check_answer(row, n)
    return out


def _check_clips(
    row: dict[str, Any],
    tolerance_frames: float,
    full: bool,
    tolerance: float,
    imported: tuple[ImportedClip, ...] | None = None,
) -> list[tuple[str, str]]:
    """Decode a row's clips; those of an imported build (``imported``: what the import
    recorded) are checked against that record instead of COIN's segment times."""
    out: list[tuple[str, str]] = []
    clips = row.get(CLIPS) or []
    if imported is not None and len(imported) != len(clips):
        out.append((CLIPS, f"{len(clips)} clips but {MANIFEST} records {len(imported)}"))
    vid = row[VIDEO_ID]
    segments = (row.get(ANSWER) or {}).get("segments") or []
    durations = row.get(CLIP_DURATIONS) or []
    ends = [s["end"] for s in segments if s and s.get("end") is not None]
    last_end = max(ends) if ends else 0.0
    for label, clip in enumerate(row.get(CLIPS) or [], start=1):
        col = f"{CLIPS}[{label - 1}]"
        if clip is None or not clip.get("bytes"):
            out.append((col, "no embedded bytes"))
            continue
        if clip.get("path") != clip_file_name(vid, label):
            out.append(
                (col, f"file name {clip.get('path')!r} is not {clip_file_name(vid, label)!r}")
            )
        try:
            probe = probe_clip(clip["bytes"], full=full)
        except (av.FFmpegError, ValueError, OSError) as exc:
            out.append((col, f"does not decode: {exc}"))
            continue
        seg = segments[label - 1] if label <= len(segments) and imported is None else None
        what = clip_problems(
            probe,
            segment=(seg["start"], seg["end"]) if seg else None,
            last_end=last_end,
            recorded=durations[label - 1] if label <= len(durations) else None,
            tolerance=tolerance,
            tolerance_frames=tolerance_frames,
        )
        out += [(col, w) for w in what]
        if imported is not None and label <= len(imported):
            out += _check_imported(col, clip["bytes"], probe, imported[label - 1])
    return out


def _check_imported(
    col: str, data: bytes, probe: ClipProbe, recorded: ImportedClip
) -> list[tuple[str, str]]:
    out = []
    if hashlib.sha256(data).hexdigest() != recorded.sha256:
        out.append((col, f"bytes differ from the clip {MANIFEST} records"))
    if probe.frames != recorded.frames:
        out.append((col, f"{probe.frames} frames but {MANIFEST} records {recorded.frames}"))
    if abs(probe.duration - recorded.duration) > ROUNDING:
        out.append(
            (col, f"lasts {probe.duration:.3f} s but {MANIFEST} records {recorded.duration:.3f} s")
        )
    return out


def _check_origin(root: Path, splice_build: Any) -> list[Problem]:
    """An imported build's card and its manifest must agree (and a build cut from COIN's
    videos has no manifest), so the check of the clips cannot be switched silently."""
    meta = splice_build if isinstance(splice_build, dict) else {}
    path = root / MANIFEST
    if meta.get("origin") != ORIGIN:
        if path.exists():
            return [Problem(MANIFEST, "present, but the card does not say origin: release")]
        return []
    if not path.is_file():
        return [Problem("README.md", f"says origin: release, but there is no {MANIFEST}")]
    want = (meta.get("release") or {}).get("manifest_sha256")
    if sha256_text(path.read_text("utf-8")) != want:
        return [Problem(MANIFEST, f"sha256 differs from the card's manifest_sha256 {want}")]
    return []


def _recorded_tolerance(root: Path) -> float:
    """The coverage tolerance the build probed its sources with, from its card (the
    default for a card that does not say)."""
    try:
        recorded = DatasetCard.load(root / "README.md").data.to_dict()["splice_build"]
        return float(recorded["tolerance"])
    except Exception:  # no card, no block, no value: the card checks report what is wrong
        return COVERAGE_TOLERANCE


def _parse_table(text: str, header: tuple[str, ...]) -> list[tuple[str, ...]] | None:
    """Body rows of the first Markdown table with this header, or None if there is none."""
    lines = text.splitlines()
    want = markdown_table(header, ()).splitlines()[0]
    for i, line in enumerate(lines):
        if line.strip() == want:
            rows = []
            for body in lines[i + 2 :]:
                if not body.strip().startswith("|"):
                    break
                rows.append(tuple(c.strip() for c in body.strip().strip("|").split("|")))
            return rows
    return None


def _check_card(root: Path, shards: WriteResult) -> list[Problem]:
    """Compare the card with what the shards hold, computed by the very ``WriteResult``
    methods and table formatting the card was rendered from."""
    split, num_rows = shards.split, shards.num_rows
    path = root / "README.md"
    if not path.is_file():
        return [Problem("README.md", "missing: the configs are defined by the card's YAML")]
    try:
        card = DatasetCard.load(path)
    except Exception as exc:  # the Hub's parser raises several kinds
        return [Problem("README.md", f"does not parse as a dataset card: {exc}")]
    data = card.data.to_dict()
    problems = _check_origin(root, data.get("splice_build"))
    configs = {c.get("config_name"): c for c in data.get("configs") or []}
    for config in CONFIGS:
        entry = configs.get(config)
        if entry is None:
            problems.append(Problem("README.md", f"configs: no {config!r} config"))
            continue
        files = entry.get("data_files") or []
        want = [{"split": split, "path": data_files_pattern(config, split)}]
        if files != want:
            problems.append(Problem("README.md", f"config {config}: data_files {files} != {want}"))
        if "columns" in entry and entry["columns"] != list(columns(config)):
            problems.append(
                Problem("README.md", f"config {config}: columns {entry.get('columns')}")
            )
        if bool(entry.get("default")) != (config == DEFAULT_CONFIG):
            problems.append(Problem("README.md", f"config {config}: wrong default flag"))
    problems += _check_fingerprint(data, shards)
    infos = data.get("dataset_info") or []
    infos = {i.get("config_name"): i for i in (infos if isinstance(infos, list) else [infos])}
    for config in CONFIGS:
        splits = {s.get("name"): s for s in (infos.get(config) or {}).get("splits") or []}
        info = splits.get(split)
        if info is None:
            problems.append(Problem("README.md", f"dataset_info: no {split} split for {config}"))
            continue
        if info.get("num_examples") != num_rows:
            problems.append(
                Problem(
                    "README.md",
                    f"dataset_info {config}: num_examples {info.get('num_examples')} but the "
                    f"shards hold {num_rows} rows",
                )
            )
        num_bytes = shards.num_bytes(config)
        if info.get("num_bytes") != num_bytes:
            problems.append(
                Problem(
                    "README.md",
                    f"dataset_info {config}: num_bytes {info.get('num_bytes')} but the shards "
                    f"hold {num_bytes}",
                )
            )
    stats_rows = table1_rows(compute_stats(shards.videos))
    table = _parse_table(card.text, TABLE1_HEADER)
    if table is None:
        problems.append(Problem("README.md", "no Table 1 (videos per number of clips)"))
    elif table != stats_rows:
        found = {r[0]: r for r in table}
        for want in stats_rows:
            got = found.pop(want[0], None)
            if got != want:
                problems.append(
                    Problem(
                        "README.md",
                        f"Table 1 row for {want[0]} clips is {got} but the shards give {want}",
                    )
                )
        for extra in found.values():
            problems.append(Problem("README.md", f"Table 1 has an extra row {extra}"))
    return problems


def _check_fingerprint(data: dict[str, Any], shards: WriteResult) -> list[Problem]:
    """The shards' sha256, recomputed, against the one the card recorded when it was
    built (in full under ``splice_build``, its first 16 digits in each description)."""
    actual = shards.fingerprint()
    problems = []
    recorded = (data.get("splice_build") or {}).get("shards_sha256")
    if recorded is not None and recorded != actual:
        problems.append(
            Problem(
                "README.md",
                f"splice_build.shards_sha256 {str(recorded)[:16]}... but the shards' is "
                f"{actual[:16]}...: a shard changed after the build",
            )
        )
    described = 0
    for config in data.get("configs") or []:
        found = re.search(r"shards sha256 ([0-9a-f]+)", str(config.get("description") or ""))
        if found is None:
            continue
        described += 1
        if found[1] != actual[: len(found[1])] or len(found[1]) < 16:
            problems.append(
                Problem(
                    "README.md",
                    f"config {config.get('config_name')}: description says shards sha256 "
                    f"{found[1]} but the shards' is {actual[:16]}...",
                )
            )
    if recorded is None and not described:
        problems.append(Problem("README.md", "records no sha256 of the shards to check"))
    return problems


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
        paths[config], found = _list_shards(root, shard_dir(config), split)
        problems += found
        report.shards[config] = len(paths[config])

    tolerance = _recorded_tolerance(root)
    manifest: ReleaseManifest | None = None
    try:
        manifest = read_manifest(root)
    except ValueError as exc:
        problems.append(Problem(MANIFEST, str(exc)))

    # The full config's rows are checked in full, the other configs' rows against them.
    # video id -> column -> digest of its value in the full config's shards
    seen: dict[str, dict[str, bytes]] = {}
    videos: list[VideoStats] = []
    identity_p = 1.0  # probability that all orders seen so far are chronological by chance
    all_identity = True
    infos: dict[str, list[ShardInfo]] = {config: [] for config in CONFIGS}
    full_dir = shard_dir(FULL_CONFIG)
    for path in paths[FULL_CONFIG]:
        rel = f"{full_dir}/{path.name}"
        pf = _open(rel, path, problems)
        if pf is None:
            continue
        problems += _check_schema(rel, pf, FULL_CONFIG)
        infos[FULL_CONFIG].append(shard_info(path))
        for i, row in _rows(rel, pf, problems):
            vid = row.get(VIDEO_ID)
            if not vid or not isinstance(vid, str):
                problems.append(Problem(rel, "no video_id", row=i, column=VIDEO_ID))
                continue
            if vid in seen:
                problems.append(Problem(rel, "duplicate video id", row=i, video_id=vid))
            row_problems = _check_row(row)
            imported = None
            if manifest is not None:
                imported = manifest.clips.get(vid, ())
                if vid not in manifest.clips:
                    row_problems.append((VIDEO_ID, f"not in {MANIFEST}"))
            row_problems += _check_clips(row, tolerance_frames, not quick, tolerance, imported)
            problems += [Problem(rel, what, i, vid, col) for col, what in row_problems]
            seen[vid] = {c: _digest(row.get(c)) for c in columns(FULL_CONFIG)}
            n = row.get(NUM_CLIPS) or 0
            report.clips += len(row.get(CLIPS) or [])
            order = (row.get(ANSWER) or {}).get("order") or []
            all_identity = all_identity and list(order) == list(range(1, n + 1))
            identity_p /= math.factorial(max(n, 0))
            videos.append(VideoStats.from_row(row))
    report.videos = len(videos)
    for vid in sorted(set(manifest.clips) - set(seen)) if manifest else ():
        problems.append(Problem(MANIFEST, "video not in the clip shards", video_id=vid))
    if videos and all_identity and identity_p < UNSHUFFLED_P:
        problems.append(
            Problem(
                full_dir,
                "every video's clips are labelled in chronological order "
                f"(chance {identity_p:.1e}): the labels give the order away",
                column=f"{ANSWER}.order",
            )
        )

    for config in CONFIGS:
        if config != FULL_CONFIG:
            problems += _check_against_full(root, config, paths[config], seen, infos[config])

    shards = WriteResult(
        out_dir=root,
        split=split,
        config_shards={config: tuple(infos[config]) for config in CONFIGS},
        videos=tuple(videos),
    )
    problems += _check_card(root, shards)
    return report


def _digest(value: Any) -> bytes:
    """A cell's value as a short digest: what the other configs' rows are compared by,
    so that only 32 bytes per column of every video stay in memory."""
    return hashlib.sha256(pickle.dumps(value, protocol=5)).digest()


def _check_against_full(
    root: Path,
    config: str,
    paths: list[Path],
    seen: dict[str, dict[str, bytes]],
    infos: list[ShardInfo],
) -> list[Problem]:
    """A config's shards must hold the full config's rows, projected to its columns."""
    problems: list[Problem] = []
    folder = shard_dir(config)
    found: set[str] = set()
    for path in paths:
        rel = f"{folder}/{path.name}"
        pf = _open(rel, path, problems)
        if pf is None:
            continue
        problems += _check_schema(rel, pf, config)
        infos.append(shard_info(path))
        for i, row in _rows(rel, pf, problems):
            vid = row.get(VIDEO_ID)
            if vid in found:
                problems.append(Problem(rel, "duplicate video id", row=i, video_id=vid))
            found.add(vid)
            full = seen.get(vid)
            if full is None:
                problems.append(
                    Problem(rel, f"video not in the {FULL_CONFIG} shards", row=i, video_id=vid)
                )
                continue
            for col in columns(config):
                if _digest(row.get(col)) != full.get(col):
                    problems.append(
                        Problem(rel, f"differs from the {FULL_CONFIG} shards' row", i, vid, col)
                    )
    for vid in sorted(set(seen) - found):
        problems.append(Problem(folder, f"video missing from the {config} shards", video_id=vid))
    return problems


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        type=Path,
        help="a built SPLICE folder (README.md and one folder of shards per config)",
    )
    parser.add_argument("--split", default=SPLIT, help=f"split to check (default {SPLIT})")
    parser.add_argument(
        "--tolerance-frames",
        type=float_in(0),
        default=TOLERANCE_FRAMES,
        help="allowed difference between a clip and its segment, in frames (default 1)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="read clip packets instead of decoding every frame (timing checks only)",
    )


def run(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        raise UserError(f"{args.dir}: not a folder")
    report = validate_report(
        args.dir, split=args.split, tolerance_frames=args.tolerance_frames, quick=args.quick
    )
    for problem in report.problems:
        print(problem)
    if report.problems:
        print(f"{len(report.problems)} problem(s) in {args.dir}")
        return 1
    print(report.summary())
    return 0


__all__ = [
    "ClipProbe",
    "Problem",
    "ValidationReport",
    "add_arguments",
    "probe_clip",
    "run",
    "validate",
    "validate_report",
]
