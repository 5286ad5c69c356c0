"""``splice leaderboard push --board B --repo ORG/NAME``: a board uploaded to a Hub dataset
repository, the one a Space (``splice leaderboard space``) reads.

Exactly the board's files go up (``board.yaml``, ``videos.json``, ``index.json`` and each
entry's prediction file, ``meta.yaml`` and ``score.json``), read while the board's lock is
held, so a concurrent ``add`` can never be sent half-done; hidden staging folders and the
lock never go. The upload is ``splice publish``'s: the same ``HfApi`` (the seam its tests
replace), the same limits checked before a byte is sent, the same one-line errors, the
token resolved by huggingface_hub and never printed. A board of a stand-in build
(``board.yaml``'s ``stand_in``) is refused unless ``--allow-stand-in``, as ``splice
publish`` refuses such a build, and a dry run of one never says its checks all passed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

import splice_dataset as sd
from splice_build.errors import UserError
from splice_build.remote import publish
from splice_build.remote.upload_plan import (
    COMMON_IGNORE_PATTERNS,
    check_limits,
    plan_upload,
    print_plan,
)

from .. import store

HELP = "upload a board to a Hugging Face dataset repository (read by its Space)"
# The board's own files; anything else in the folder (notes, exports) stays local.
ALLOW_PATTERNS = [
    store.BOARD_FILE,
    store.AUDIT_FILE,
    store.VIDEOS_FILE,
    store.INDEX_FILE,
    f"{store.ENTRIES}/*/{store.META_FILE}",
    f"{store.ENTRIES}/*/{store.SCORE_FILE}",
    f"{store.ENTRIES}/*/{store.PREDICTIONS_STEM}*",
]
IGNORE_PATTERNS = [*COMMON_IGNORE_PATTERNS, store.LOCK_FILE]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--board", type=Path, default=Path(store.DEFAULT_BOARD), help="the board folder"
    )
    parser.add_argument("--repo", required=True, help="the dataset repository, ORG/NAME")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument(
        "--dry-run", action="store_true", help="list the files and check limits; send nothing"
    )
    parser.add_argument(
        "--allow-stand-in",
        action="store_true",
        help="push a board of a stand-in build (the demo's rendered videos; its views say so)",
    )


def push_board(
    board: Path,
    repo_id: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    allow_stand_in: bool = False,
    out: TextIO | None = None,
) -> int:
    """Check ``board`` and (unless ``dry_run``) upload it; 0 when sent, 1 when refused."""
    out = out or sys.stdout
    board = Path(board)
    if not sd.HUB_ID_RE.match(repo_id):  # THE Hub-id rule
        raise UserError(f"--repo {repo_id!r}: expected ORG/NAME")
    config = store.read_config(board)  # refuses a folder that is no board, naming it
    with store.board_lock(board):
        files = plan_upload(board, ALLOW_PATTERNS, IGNORE_PATTERNS)
        problems = check_limits(board, files)
        target = f"datasets/{repo_id}"
        header = f"splice leaderboard push: {board} cannot be sent:"
        if config.stand_in and not allow_stand_in:
            problems.append(
                f"{board / store.BOARD_FILE} says stand_in: true: the board ranks a build cut "
                "from rendered stand-in videos (the demo's), not COIN's; pass --allow-stand-in "
                "to push it anyway (every view of it says so)"
            )
        if config.stand_in and dry_run and not problems:
            print(f"would upload to {target}", file=out)
            print_plan(files, out)
            print(
                "dry run: nothing sent; the Hub's limits hold, but this is a board of a "
                "STAND-IN build (allowed by --allow-stand-in)",
                file=out,
            )
            return 0
        stop = publish.check_before_sending(problems, header, target, files, dry_run, out)
        if stop is not None:
            return stop
        api = publish.hub_api()  # the token as publish resolves it
        with publish.hub_errors(target):
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            info = api.upload_folder(
                repo_id=repo_id,
                folder_path=str(board),
                repo_type="dataset",
                allow_patterns=[f.path_in_repo for f in files],
                ignore_patterns=IGNORE_PATTERNS,
                commit_message=f"Upload the SPLICE board of build {config.build_id} "
                f"({len(files)} files)",
            )
    print(f"uploaded {len(files)} files to {getattr(info, 'commit_url', repo_id)}", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return push_board(
            args.board,
            args.repo,
            private=args.private,
            dry_run=args.dry_run,
            allow_stand_in=args.allow_stand_in,
        )
    except PermissionError as e:  # no token
        raise UserError(str(e)) from None
