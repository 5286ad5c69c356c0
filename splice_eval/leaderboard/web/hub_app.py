"""The leaderboard Space's program (``app.py`` calls ``main``): the board read from the
Hub dataset repository, read-only, served with the submission form.

``SPLICE_BOARD_DIR`` names a local board folder instead (a mirror, or the tests, which
serve a board made here without reaching the Hub)."""

from __future__ import annotations

import os

from ..table import load_board
from .page import launch
from .submit import SUBMISSION_MAX, form

BOARD_ENV = "SPLICE_BOARD_DIR"


def main(repo_id: str) -> None:
    board = load_board(os.environ.get(BOARD_ENV) or repo_id)
    launch(
        board,
        host=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        submit_tab=form(repo_id),
        max_file_size=SUBMISSION_MAX,
    )
