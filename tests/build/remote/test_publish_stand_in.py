"""A build made from rendered stand-in videos (the demo's) is no SPLICE dataset (issue 21,
wall 6): `splice publish` refuses it, dry run included, unless `--allow-stand-in` says so,
and `splice report` marks its results as the stand-ins'."""

from __future__ import annotations

import shutil
from pathlib import Path

from huggingface_hub import DatasetCard

from splice_build.cli import main as splice_main


def test_publish_refuses_a_stand_in_build(demo_build: Path, capsys) -> None:
    assert DatasetCard.load(demo_build / "README.md").data["splice_build"]["stand_in"] is True
    code = splice_main(["publish", str(demo_build), "--repo-id", "org/splice", "--dry-run"])
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "stand-in" in lines[0] and "--allow-stand-in" in lines[0]
    assert "all checks passed" not in captured.out


def test_allow_stand_in_publishes_the_dry_run(demo_build: Path, capsys) -> None:
    code = splice_main(
        ["publish", str(demo_build), "--repo-id", "org/splice", "--dry-run", "--allow-stand-in"]
        + ["--code-url", "https://github.com/someone/splice-benchmark"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "all checks passed" in out and "stand-in" in out


def test_a_real_build_is_not_refused_as_stand_in(demo_build: Path, tmp_path: Path, capsys):
    """The same folder with its card saying ``stand_in: false`` passes the stand-in check
    (it is then refused only by `splice validate`, which checks the card: the check is the
    card's flag, not the folder's name)."""
    folder = Path(shutil.copytree(demo_build, tmp_path / "splice"))
    card = DatasetCard.load(folder / "README.md")
    card.data["splice_build"]["stand_in"] = False
    card.save(folder / "README.md")
    splice_main(["publish", str(folder), "--repo-id", "org/splice", "--dry-run"])
    assert "--allow-stand-in" not in capsys.readouterr().err


def test_report_marks_stand_in_results(demo_build: Path, tmp_path: Path, capsys) -> None:
    predictions = tmp_path / "random.jsonl"
    argv = ["baseline", "random", "--data", str(demo_build), "--config", "text"]
    assert splice_main([*argv, "--out", str(predictions)]) == 0
    out_dir = tmp_path / "report"
    argv = ["report", str(predictions), "--data", str(demo_build), "--out", str(out_dir)]
    assert splice_main(argv) == 0
    assert "stand-in" in capsys.readouterr().out
    markdown = (out_dir / "report.md").read_text("utf-8")
    assert "stand-in" in markdown.split("## Coverage")[0]
