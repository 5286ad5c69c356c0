"""Stage 1: ingest: the chosen source's adapter (`splice_build.sources`) reads its
annotations into validated ``VideoEntry`` records, and ``Skip``s for the videos its rules
drop. COIN is one adapter among them (`sources.coin`), the default: the names below that
are COIN's are re-exported from it for the commands that have always read them here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from splice_build.errors import UserError
from splice_build.sources import registry
from splice_build.sources.base import LEVELS, REPEATED_STEPS, IngestResult, SourceOptions
from splice_build.sources.coin import (
    BUNDLED_ANNOTATIONS,
    MAX_VIDEO_ID,
    SEGMENT_TOLERANCE,
    bundled_sha256,
    load_annotations,
    parse_annotation_json,
    parse_database,
)

_ANNOTATIONS_HELP = (
    "the source's annotations: a file or its release folder (for --source coin, the "
    "default, a COIN.json-format file; default: the bundled public subset of COIN, 10,070 of "
    "its 11,827 videos; pass COIN's full COIN.json to build from all of them)"
)


def add_annotations_argument(parser: argparse.ArgumentParser) -> None:
    """``--annotations``, the same for every command that reads annotations."""
    parser.add_argument(
        "--annotations", type=Path, default=BUNDLED_ANNOTATIONS, help=_ANNOTATIONS_HELP
    )


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``--source`` and the rules' options, the same for every command that reads a source."""
    parser.add_argument(
        "--source",
        choices=tuple(registry.ADAPTERS),
        default=registry.DEFAULT,
        help="the step-annotated source the annotations come from (default %(default)s; "
        "docs/sources.md)",
    )
    parser.add_argument(
        "--repeated-steps",
        choices=REPEATED_STEPS,
        default=None,
        help="merge: adjacent repeats of a caption merge into one step and a video whose "
        "caption still repeats is skipped; keep: as the source has them (default: merge, "
        "but keep for coin, as the paper published it)",
    )
    parser.add_argument(
        "--min-step-seconds",
        type=float,
        default=None,
        help="skip a video with a step shorter than this (default 1; 0 for coin, as published)",
    )
    parser.add_argument(
        "--level",
        choices=LEVELS,
        default="step",
        help="goalstep: clips of the steps or of their substeps (default %(default)s)",
    )


def options_from_args(args: argparse.Namespace) -> SourceOptions:
    return SourceOptions(
        repeated_steps=getattr(args, "repeated_steps", None),
        min_step_seconds=getattr(args, "min_step_seconds", None),
        level=getattr(args, "level", "step"),
    )


def load(
    source: str, annotations: str | Path, options: SourceOptions | None = None
) -> IngestResult:
    """``annotations`` read by ``source``'s adapter (`sources.registry.load`)."""
    annotations = Path(annotations)
    if source != registry.DEFAULT and annotations == BUNDLED_ANNOTATIONS:
        raise UserError(
            f"--source {source}: give its --annotations (the default file is COIN's bundled "
            "annotations)"
        )
    return registry.load(source, annotations, options)


__all__ = [
    "BUNDLED_ANNOTATIONS",
    "MAX_VIDEO_ID",
    "SEGMENT_TOLERANCE",
    "IngestResult",
    "add_annotations_argument",
    "add_source_arguments",
    "bundled_sha256",
    "load",
    "load_annotations",
    "options_from_args",
    "parse_annotation_json",
    "parse_database",
]
