"""``splice validate DIR``: the command line of the checks (`splice_build.output.validate`),
here beside the executors it runs them on (`splice_build.cli` loads it).

Standalone, every clip is decoded (nothing vouches for a folder handed over), on the same
executors as the build (``--workers``, ``--executor ray``), with a bar of clips per second;
``--quick`` does only the structural and digest checks."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from splice_build.cli import float_in
from splice_build.errors import UserError
from splice_build.output.validate import validate_report
from splice_build.plural import counted
from splice_build.records import COVERAGE_TOLERANCE
from splice_build.running.executors import (
    add_executor_arguments,
    add_workers_argument,
    make_executor,
)
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
        "--tolerance",
        type=float_in(0),
        default=None,
        help="seconds a source may end before its last step that the clips are held to "
        f"(default {COVERAGE_TOLERANCE:g}, or the card's when stricter; a card recording a "
        "looser one fails unless it is given here)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="decode no clip: layout, rows, names, the card and every digest only",
    )
    add_workers_argument(parser, "processes decoding clips")
    add_executor_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        raise UserError(f"{args.dir}: not a folder")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: must be at least 1")
    executor = make_executor(args.executor, args.workers, args.ray_address)
    started = time.monotonic()
    print(f"validate: checking {args.dir}", file=sys.stderr)
    report = validate_report(
        args.dir,
        split=args.split,
        tolerance_frames=args.tolerance_frames,
        quick=args.quick,
        tolerance=args.tolerance,
        run=executor.run,
        progress=not args.no_progress,
    )
    seconds = time.monotonic() - started
    print(
        f"validate: {counted(report.clips, 'clip')} of {counted(report.videos, 'video')} checked "
        f"({report.decoded} decoded) in {seconds:.1f} s",
        file=sys.stderr,
    )
    for problem in report.problems:
        print(problem)
    if report.problems:
        print(f"{len(report.problems)} problem(s) in {args.dir}")
        return 1
    print(report.summary())
    return 0
