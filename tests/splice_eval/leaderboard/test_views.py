"""The board's views through ``splice leaderboard show`` and ``export``: every ranking names
what it ranks by and shows that column, fits the terminal, orders unranked rows by one rule,
marks a stand-in build, and every export is safe to open (CSV in a spreadsheet) and to write."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_build.output.card_reader import read_card
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.scoring.score import read_answers

FORMATS = ("md", "csv", "json", "html")
# OWASP's CSV injection list: a cell (or a line of one) starting with these is a formula.
FORMULA = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def seeded(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board of the demo build (a stand-in build: its card says so) with one submission."""
    root = tmp_path_factory.mktemp("views")
    board = root / "b"
    assert main(["leaderboard", "init", "--board", str(board), "--data", str(demo_build)]) == 0
    pred = _answers(demo_build, root / "m.jsonl", "org/m-7b")
    assert main(["leaderboard", "add", str(pred), "--board", str(board)]) == 0
    return board


@pytest.fixture
def board(seeded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(seeded, tmp_path / "board"))


def _answers(build: Path, out: Path, model: str, right: int = 10) -> Path:
    refs = list(read_answers(build).references.items())
    rows = [
        Prediction(v, "video_text", model, None, list(o) if i < right else list(reversed(o)))
        for i, (v, o) in enumerate(refs)
    ]
    meta = {"producer": "splice run", "model": model, "config": "video_text"}
    return write_predictions(out, rows, meta | {"build_id": read_card(build).build_id})


def _run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(["leaderboard", *argv]) == 0
    return capsys.readouterr().out


def _header_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("rank "))


def test_show_names_the_ranking_and_always_shows_its_column(seeded, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    out = _run(capsys, "show", "--board", str(seeded), "--metric", "edit_distance")
    assert "ranking: video_text config by edit_distance (lower is better)" in out
    assert re.search(r"metric version [0-9a-f]{16}", out)
    assert not re.search(r"metric [0-9a-f]{16}", out)  # the version is labelled as one
    assert "video_text edit" in _header_line(out)
    out = _run(capsys, "show", "--board", str(seeded), "--config", "video", "--metric", "lcs_ratio")
    assert "ranking: video config by lcs_ratio (higher is better)" in out
    assert "video LCS" in _header_line(out)
    assert "video_text" not in _header_line(out)  # one config asked: its columns only


def test_show_fits_the_terminal(seeded, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = _run(capsys, "show", "--board", str(seeded), "--metric", "hamming_accuracy")
    assert max(len(line) for line in out.splitlines()) <= 100
    head = _header_line(out)
    for label in ("rank", "model", "video_text hamming"):
        assert label in head
    assert "org/m-7b" in out
    assert "not shown to fit 100 columns" in out  # what was left out, and why
    monkeypatch.setenv("COLUMNS", "400")
    wide = _run(capsys, "show", "--board", str(seeded))
    assert "params (B)" in _header_line(wide) and "not shown" not in wide


def _ranks_in_order(board: Path, capsys, metric: str) -> list[str]:
    out = _run(capsys, "export", "--board", str(board), "--format", "csv", "--metric", metric)
    return [r["rank"] for r in csv.DictReader(io.StringIO(out))]


def test_unranked_rows_follow_the_ranked_ones_in_every_ranking(seeded, capsys):
    for metric in ("binary_accuracy", "edit_distance", "hamming_accuracy"):
        ranks = _ranks_in_order(seeded, capsys, metric)
        ranked = [r for r in ranks if r]
        assert ranked and ranks[: len(ranked)] == ranked, (metric, ranks)
        shown = json.loads(
            _run(capsys, "show", "--board", str(seeded), "--json", "--metric", metric)
        )
        lows = [e["rank_low"] for e in shown["entries"] if e["config"] == "video_text"]
        assert lows[: len([x for x in lows if x])] == [x for x in lows if x]


def test_a_stand_in_board_says_so_in_every_view(seeded, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    assert "STAND-IN BUILD" in _run(capsys, "show", "--board", str(seeded))
    shown = json.loads(_run(capsys, "show", "--board", str(seeded), "--json"))
    assert shown["stand_in"] is True and all(e["stand_in"] for e in shown["entries"])
    for fmt in FORMATS:
        out = _run(capsys, "export", "--board", str(seeded), "--format", fmt)
        assert "STAND-IN BUILD" in out, fmt
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(out)))
            assert rows and all(r["stand_in"] == "yes" for r in rows)
        elif fmt == "json":
            assert all(e["stand_in"] for e in json.loads(out)["entries"])
        else:
            assert "stand-in videos" in out, fmt  # the column's header


def test_a_board_of_coin_videos_has_no_stand_in_mark(demo_build, tmp_path, capsys, monkeypatch):
    build = Path(shutil.copytree(demo_build, tmp_path / "build"))
    card = build / "README.md"
    text = card.read_text(encoding="utf-8")
    assert "stand_in: true" in text
    card.write_text(text.replace("stand_in: true", "stand_in: false"), encoding="utf-8")
    board = tmp_path / "b"
    assert main(["leaderboard", "init", "--board", str(board), "--data", str(build),
                 "--baselines", ""]) == 0  # fmt: skip
    monkeypatch.setenv("COLUMNS", "400")
    assert "STAND-IN" not in _run(capsys, "show", "--board", str(board))
    for fmt in FORMATS:
        out = _run(capsys, "export", "--board", str(board), "--format", fmt)
        assert "STAND-IN" not in out, fmt
    out = _run(capsys, "export", "--board", str(board), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and all(r["stand_in"] == "" for r in rows)


def test_markdown_export_leaves_numbers_as_written(seeded, capsys):
    out = _run(capsys, "export", "--board", str(seeded), "--format", "md")
    assert "0.8486" in out and "0\\.8486" not in out  # the paper's Human row, video binary
    assert "100.0%" in out


def test_html_export_names_the_build_and_the_ranking(seeded, demo_build, capsys):
    out = _run(capsys, "export", "--board", str(seeded), "--format", "html", "--config", "video",
               "--metric", "lcs_ratio")  # fmt: skip
    assert read_card(demo_build).build_id in out
    assert "video config by lcs_ratio" in out
    assert "metric version" in out


def test_csv_export_neutralizes_formulas_behind_line_breaks_and_tabs(
    board, demo_build, tmp_path, capsys
):
    names = ["Qwen-7B\r=cmd|' /C calc'!A0", '\t=HYPERLINK("http://e")', "a\n+1+1\t@SUM(1)"]
    for i, name in enumerate(names):
        pred = _answers(demo_build, tmp_path / f"x{i}.jsonl", f"org/x{i}")
        assert main(["leaderboard", "add", str(pred), "--board", str(board), "--name", name]) == 0
    out = _run(capsys, "export", "--board", str(board), "--format", "csv")
    records = list(csv.reader(io.StringIO(out, newline="")))
    header = records[0]
    assert all(len(r) == len(header) for r in records)
    by_name = {r[header.index("name")] for r in records[1:]}
    shown = json.loads(_run(capsys, "export", "--board", str(board), "--format", "json"))
    assert len(records) - 1 == len({e["slug"] for e in shown["entries"]})  # one row each
    for cell in (c for r in records for c in r):
        if re.fullmatch(r"-?[0-9.e+-]+", cell):
            continue  # a number
        for part in re.split(r"[\r\n\t]", cell):
            assert not part.startswith(FORMULA[:4]), repr(cell)
        assert not cell.startswith(FORMULA), repr(cell)
    assert "Qwen-7B\r'=cmd|' /C calc'!A0" in by_name
    # a spreadsheet splits rows at any CR or LF outside quotes: each such cell is quoted
    for raw in ("Qwen-7B\r'=cmd", "'\t'=HYPERLINK", "a\n'+1+1\t'@SUM(1)"):
        assert f'"{raw}' in out, raw


@pytest.mark.parametrize("where", ["folder", "missing", "through-file"])
def test_export_out_a_folder_or_through_a_missing_one_is_one_line(seeded, tmp_path, capsys, where):
    (tmp_path / "a-file").write_text("x")
    out = {
        "folder": tmp_path,
        "missing": tmp_path / "no" / "such" / "b.md",
        "through-file": tmp_path / "a-file" / "b.md",
    }[where]
    capsys.readouterr()
    assert main(["leaderboard", "export", "--board", str(seeded), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "--out" in err and str(out) in err
