"""A file none of whose videos is in the build is refused naming the option the command
has: `score` and `report` take the build as ``--data``; `leaderboard add` has no --data, its
build is the board's (issue 49 section 5)."""

from __future__ import annotations

from pathlib import Path

from splice_eval.predictions import Prediction, write_predictions
from tests.support.build_helpers import run_splice
from tests.support.one_line_errors import assert_one_line


def _elsewhere(path: Path) -> Path:
    """Answers for videos no demo build holds, with no build identity (another tool's)."""
    rows = [Prediction(v, "video_text", "m", None, [2, 1]) for v in ("zz-1", "zz-2")]
    return write_predictions(path, rows, {"producer": "other", "model": "m"})


def test_leaderboard_add_names_the_board_not_data(demo_build, tmp_path):
    board = tmp_path / "board"
    init = ["leaderboard", "init", "--board", board, "--data", demo_build, "--baselines", ""]
    assert run_splice(*init, cwd=tmp_path).returncode == 0
    done = run_splice("leaderboard", "add", _elsewhere(tmp_path / "p.jsonl"), "--board", board)
    assert_one_line(done, f"board {board}", "none of its 2 videos")
    assert "--data" not in done.stderr


def test_score_still_names_data(demo_build, tmp_path):
    done = run_splice("score", _elsewhere(tmp_path / "p.jsonl"), "--data", demo_build)
    assert_one_line(done, "is --data the build", "none of its 2 videos")
