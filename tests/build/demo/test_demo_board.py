"""The demo's leaderboard: seeded on the demo build with its baselines and the paper's
rows, opened with the command it prints, never replaced once there, and always the board
of the build the demo just made (issue 49 section 4; issue 47 section 7)."""

from __future__ import annotations

import json
from pathlib import Path

from splice_build.cli import main
from splice_build.demo.run import make_board
from splice_build.output.card_reader import read_card
from splice_eval.leaderboard import store
from splice_eval.leaderboard.records import BoardConfig
from tests.support.build_helpers import run_splice
from tests.support.one_line_errors import assert_one_line


def _other_builds_board(board: Path) -> None:
    """A board's config of a build that is not the one under test (as the committed
    ``splice-board/`` was, of one build, met by a demo of another)."""
    board.mkdir()
    store.write_config(board, BoardConfig(build_id="0" * 16, data="elsewhere", metric_version="x"))


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


def test_a_board_of_another_build_is_never_pointed_at(demo_build: Path, tmp_path: Path):
    board = tmp_path / "board"
    _other_builds_board(board)
    said = make_board(board, demo_build)
    assert "another build" in said and "see it" not in said, said
    assert store.read_config(board).build_id == "0" * 16  # left as it is


def test_demo_with_its_own_out_and_seed_points_at_its_own_board(tmp_path: Path):
    """`splice demo --seed 1 --out X` beside a board of another build (the committed
    ``splice-board/``) pointed the user at that board, where their add was refused."""
    _other_builds_board(tmp_path / "splice-board")
    done = run_splice("demo", "--seed", "1", "--out", "X", "--workers", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("Leaderboard X-board/: this build's"), last
    assert "splice leaderboard show --board X-board" in last
    built = read_card(tmp_path / "X").build_id
    assert store.read_config(tmp_path / "X-board").build_id == built
    assert store.read_config(tmp_path / "splice-board").build_id == "0" * 16


def test_demo_board_a_file_is_one_line_before_building(tmp_path: Path):
    (tmp_path / "a-file").write_text("mine")
    done = run_splice("demo", "--out", "X", "--board", "a-file", cwd=tmp_path)
    assert_one_line(done, "--board a-file", "is a file")
    assert not (tmp_path / "X").exists()


def test_demo_board_a_folder_that_is_not_a_board_is_one_line(tmp_path: Path):
    """It said "left as it is. see it: splice leaderboard show", which then failed."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    done = run_splice("demo", "--out", "X", "--board", "notes", cwd=tmp_path)
    assert_one_line(done, "--board notes", "not a board")
    assert "see it" not in done.stdout + done.stderr
    assert not (tmp_path / "X").exists()


def test_demo_out_through_a_regular_file_is_one_line(tmp_path: Path):
    (tmp_path / "a-file").write_text("mine")
    done = run_splice("demo", "--out", "a-file/X", cwd=tmp_path)
    assert_one_line(done, "--out a-file/X", "a-file is a file")
    assert (tmp_path / "a-file").read_text() == "mine"
