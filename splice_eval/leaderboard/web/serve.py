"""``splice leaderboard serve --board B``: the board's page on this machine (Gradio; the
``[leaderboard]`` extra). The board is read once, at start: restart to show a change."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import store

HELP = "serve a board's web page (Gradio; extra [leaderboard])"
LOCAL_HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--board",
        default=store.DEFAULT_BOARD,
        help="the board: a folder, or a Hub dataset repository ORG/NAME (default %(default)s)",
    )
    parser.add_argument(
        "--host",
        default=LOCAL_HOST,
        help="address to listen on (default %(default)s: this machine only)",
    )
    parser.add_argument("--port", type=int, default=7860, help="port (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    from splice_build.errors import require

    print(
        f"splice leaderboard serve: loading the page's libraries (Gradio, matplotlib) and "
        f"the board {args.board}; its address follows",
        flush=True,
    )
    # the extra's one-line refusal, before the board is read
    for module in ("gradio", "matplotlib"):
        require(module, "leaderboard", "splice leaderboard serve")
    from ..table import load_board
    from .page import launch

    board = load_board(args.board)
    if args.host != LOCAL_HOST:
        print(
            f"splice leaderboard serve: listening on {args.host}: the page is open to the network",
            file=sys.stderr,
        )
    where = Path(board.path)
    print(f"serving {where} on http://{args.host}:{args.port} (Ctrl-C stops)", flush=True)
    launch(board, host=args.host, port=args.port, block=True)
    return 0
