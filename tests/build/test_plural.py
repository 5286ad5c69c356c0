"""Counts as words (issue 41 wall 8: a one-video build said "1 videos")."""

from __future__ import annotations

from splice_build.cli import main
from splice_build.plural import counted
from splice_build.running.report import REPORT_TXT


def test_counted() -> None:
    assert [counted(n, "video") for n in (0, 1, 2)] == ["0 videos", "1 video", "2 videos"]
    assert counted(1, "entry", "entries") == "1 entry" and counted(3, "entry", "entries") == (
        "3 entries"
    )


def test_a_one_video_build_says_1_video(subset_build, capsys) -> None:
    out, _work = subset_build(1)
    assert "included: 1 video, " in (out / REPORT_TXT).read_text("utf-8")
    assert main(["validate", str(out), "--quick"]) == 0
    captured = capsys.readouterr()
    assert "OK: 1 video, " in captured.out and " of 1 video checked" in captured.err
    assert "1 videos" not in captured.out + captured.err
