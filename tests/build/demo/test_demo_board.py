"""The demo's leaderboard: seeded on the demo build with its baselines and the paper's
rows, opened with the command it prints, and never replaced once there."""

from __future__ import annotations

import json
from pathlib import Path

from splice_build.cli import main
from splice_build.demo.run import make_board


def test_demo_board_is_made_once_and_opens(demo_build: Path, tmp_path: Path, capsys):
    board = tmp_path / "splice-board"
    said = make_board(board, demo_build)
    assert f"splice leaderboard show --board {board}" in said
    assert f"splice leaderboard serve --board {board}" in said
    capsys.readouterr()
    assert main(["leaderboard", "show", "--board", str(board), "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)["entries"]}
    assert {"identity (baseline)", "random (baseline)", "random (exact)"} <= names
    assert "Qwen2-VL-7B (paper)" in names
    (board / "mine.txt").write_text("kept")
    assert "left as it is" in make_board(board, demo_build)
    assert (board / "mine.txt").read_text() == "kept"
