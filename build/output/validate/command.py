"""``splice validate DIR``: the command line of the checks (`splice_build.cli` loads it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from splice_build.cli import float_in
from splice_build.errors import UserError
from splice_build.output.validate.folder import validate_report
from splice_build.stages.clipcheck import TOLERANCE_FRAMES
from splice_dataset import SPLIT


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
