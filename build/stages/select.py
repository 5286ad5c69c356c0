"""Stage 2: choose which ingested videos go into the build, recording why each other is left out.

Rules, applied in this order; a video dropped by several is reported with the first one:

1. Step count. SPLICE keeps videos with ``min_steps`` to ``max_steps`` steps (2..7, paper
   Section 3.2). Nothing overrides this: it defines the benchmark.
2. Curation ``exclude`` (a person's decision, so it wins over the random draw).
3. Seeded subset (``subset_size``), drawn from the videos that pass rule 1. Each video gets
   the rank ``sha256(f"splice-subset/v1\\n{seed}\\n{video_id}")`` (as a big-endian integer)
   and the ``subset_size`` smallest ranks are drawn. The draw depends on the seed and the
   video ids only (not on file order, Python's salted ``hash()`` or library versions), is a
   uniform sample without replacement, and is stable: adding a video can only displace the
   one ranked last, never reshuffle the rest. A curation ``include`` re-admits a video the
   draw left out (the subset then holds more than ``subset_size`` videos); it cannot admit
   one outside the step range, and including an already selected video changes nothing.
4. ``limit``: keep the first N of what remains, by video id, for quick runs.

The curation file is a CSV with the header ``video_id,decision,reason``; ``decision`` is
``include`` or ``exclude`` and ``reason`` is required (it goes into the build report).
Rows for video ids that are not among the ingested entries (for example a curation file
written for the full COIN.json used with a partial one) are not errors; they are listed in
``Selection.warnings``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from splice_build.errors import UserError, read_text
from splice_build.records import Skip, VideoEntry
from splice_build.stages import ingest
from splice_dataset import MAX_CLIPS, MIN_CLIPS

STAGE = "select"
CURATION_HEADER = ("video_id", "decision", "reason")
DECISIONS = ("include", "exclude")


@dataclass(frozen=True)
class CurationDecision:
    video_id: str
    decision: str  # "include" or "exclude"
    reason: str
    line: int  # line number in the curation file, for messages


@dataclass(frozen=True)
class Selection:
    selected: list[VideoEntry]  # sorted by video_id
    skips: list[Skip]  # one per dropped video, sorted by video_id
    warnings: list[str] = field(default_factory=list)  # curation rows that matched nothing


def subset_rank(seed: int, video_id: str) -> int:
    """The draw's rank of a video: smaller ranks are drawn first."""
    digest = hashlib.sha256(f"splice-subset/v1\n{seed}\n{video_id}".encode()).digest()
    return int.from_bytes(digest, "big")


def load_curation(path: str | Path) -> dict[str, CurationDecision]:
    """Read a curation CSV (UTF-8, BOM accepted); UserError names the file and the line of
    the first bad row."""
    path = Path(path)
    try:
        return _parse_curation(path, read_text(path, "curation file"))
    except csv.Error as exc:
        raise UserError(f"{path}: not a readable CSV file ({exc})") from None


def _parse_curation(path: Path, text: str) -> dict[str, CurationDecision]:
    rows = csv.reader(text.splitlines())
    header = next(rows, None)
    if header is None or tuple(h.strip() for h in header) != CURATION_HEADER:
        raise UserError(f"{path} line 1: header must be {','.join(CURATION_HEADER)}, got {header}")
    decisions: dict[str, CurationDecision] = {}
    for line, row in enumerate(rows, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(CURATION_HEADER):
            raise UserError(
                f"{path} line {line}: expected {len(CURATION_HEADER)} fields "
                f"(video_id,decision,reason), got {len(row)}; quote a reason that has commas"
            )
        video_id, decision, reason = (cell.strip() for cell in row)
        if not video_id:
            raise UserError(f"{path} line {line}: empty video_id")
        if decision not in DECISIONS:
            raise UserError(f"{path} line {line}: decision {decision!r} is not include or exclude")
        if not reason:
            raise UserError(f"{path} line {line}: {video_id}: a reason is required")
        if video_id in decisions:
            first = decisions[video_id].line
            raise UserError(f"{path} line {line}: {video_id} already listed on line {first}")
        decisions[video_id] = CurationDecision(video_id, decision, reason, line)
    return decisions


def select(
    entries: Iterable[VideoEntry],
    *,
    min_steps: int = MIN_CLIPS,
    max_steps: int = MAX_CLIPS,
    subset_size: int | None = None,
    seed: int = 0,
    curation: Mapping[str, CurationDecision] | str | Path | None = None,
    limit: int | None = None,
) -> Selection:
    """Apply the module's rules to ingested entries (any order; ids must be unique)."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {min_steps}..{max_steps}")
    if subset_size is not None and subset_size < 0:
        raise ValueError(f"subset_size must be >= 0, got {subset_size}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if isinstance(curation, str | Path):
        curation = load_curation(curation)
    curation = curation or {}
    steps = range(min_steps, max_steps + 1)

    by_id: dict[str, VideoEntry] = {}
    for entry in entries:
        if entry.video_id in by_id:
            raise ValueError(f"video {entry.video_id} given twice to select")
        by_id[entry.video_id] = entry

    dropped = _steps_and_exclusions(by_id, steps, curation)  # rules 1 and 2
    if subset_size is not None:
        _draw(by_id, steps, subset_size, seed, curation, dropped)
    kept = sorted(v for v in by_id if v not in dropped)
    if limit is not None:
        for vid in kept[limit:]:
            dropped[vid] = f"beyond --limit {limit}"
        kept = kept[:limit]
    return Selection(
        selected=[by_id[v] for v in kept],
        skips=[Skip(v, STAGE, dropped[v]) for v in sorted(dropped)],
        warnings=_curation_warnings(by_id, steps, curation, dropped),
    )


def _steps_and_exclusions(
    by_id: Mapping[str, VideoEntry], steps: range, curation: Mapping[str, CurationDecision]
) -> dict[str, str]:
    """Rules 1 and 2: video id -> why it is dropped, for the videos they drop."""
    dropped: dict[str, str] = {}
    for vid, entry in by_id.items():
        if entry.num_steps not in steps:
            dropped[vid] = f"{entry.num_steps} steps, outside {steps[0]}..{steps[-1]}"
        elif vid in curation and curation[vid].decision == "exclude":
            dropped[vid] = f"curation exclude (line {curation[vid].line}): {curation[vid].reason}"
    return dropped


def _draw(
    by_id: Mapping[str, VideoEntry],
    steps: range,
    subset_size: int,
    seed: int,
    curation: Mapping[str, CurationDecision],
    dropped: dict[str, str],
) -> None:
    """Rule 3: add to ``dropped`` the videos the seeded subset leaves out (a curation
    ``include`` keeps its video; one dropped already keeps its first reason)."""
    eligible = sorted(
        (v for v, e in by_id.items() if e.num_steps in steps),
        key=lambda v: subset_rank(seed, v),
    )
    for vid in eligible[subset_size:]:
        decision = curation.get(vid)
        if vid not in dropped and not (decision and decision.decision == "include"):
            dropped[vid] = (
                f"not drawn in the seeded subset of {subset_size} (seed {seed}) "
                f"from {len(eligible)} videos with {steps[0]}..{steps[-1]} steps"
            )


def _curation_warnings(
    by_id: Mapping[str, VideoEntry],
    steps: range,
    curation: Mapping[str, CurationDecision],
    dropped: Mapping[str, str],
) -> list[str]:
    """Curation rows that changed nothing: ids not ingested, includes outside the steps."""
    warnings: list[str] = []
    for d in sorted(curation.values(), key=lambda d: d.line):
        entry = by_id.get(d.video_id)
        if entry is None:
            warnings.append(
                f"curation line {d.line}: {d.video_id} ({d.decision}) is not among the "
                "ingested videos"
            )
        elif d.decision == "include" and entry.num_steps not in steps:
            warnings.append(
                f"curation line {d.line}: include of {d.video_id} ignored: {dropped[d.video_id]}"
            )
    return warnings


def select_annotations(
    annotations: str | Path,
    *,
    subset_size: int | None = None,
    seed: int = 0,
    curation: str | Path | None = None,
    limit: int | None = None,
    source: str = "coin",
    options: ingest.SourceOptions | None = None,
    min_steps: int = MIN_CLIPS,
    max_steps: int = MAX_CLIPS,
) -> tuple[ingest.IngestResult, Selection]:
    """The videos a command works on: THE selection of ``splice build`` and ``splice
    download``, so that a user fetches exactly the videos the build will use; ``source``
    names the adapter reading ``annotations`` (`splice_build.sources`).

    A missing or malformed annotation or curation file is the user's mistake: `UserError`.
    """
    try:
        ingested = ingest.load(source, annotations, options)
        selection = select(
            ingested.entries,
            min_steps=min_steps,
            max_steps=max_steps,
            subset_size=subset_size,
            seed=seed,
            curation=curation,
            limit=limit,
        )
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from None
    if not ingested.entries and not ingested.skips:
        raise UserError(f"annotations {annotations}: no video in them")
    return ingested, selection


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `select_annotations`, the same for every command that selects."""
    ingest.add_annotations_argument(parser)
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of shuffles and subset draw (default %(default)s)"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="keep only the first N selected videos"
    )
    parser.add_argument(
        "--subset-size", type=int, default=None, help="seeded random subset (the paper: 3600)"
    )
    parser.add_argument("--curation", type=Path, default=None, help="CSV video_id,decision,reason")


__all__ = [
    "CurationDecision",
    "Selection",
    "add_selection_arguments",
    "load_curation",
    "select",
    "select_annotations",
    "subset_rank",
]
