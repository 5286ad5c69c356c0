"""``splice demo --source crosstask``: the bundled synthetic CrossTask-format release built
on rendered stand-ins with the real adapter and its rules, loaded, scored and boarded the
way ``splice demo`` does COIN's, with no COIN words on its card and no paper rows on its
board."""

from __future__ import annotations

import json

from splice_build.demo.source_demo import demo_release
from splice_build.output.card_reader import read_card
from tests.support.source_builds import load_three, skips_by_reason, splice


def test_crosstask_demo_builds_scores_and_boards(tmp_path):
    out, board = tmp_path / "splice-data", tmp_path / "board"
    code, stdout, stderr = splice(
        "demo", "--source", "crosstask", "--out", out, "--board", board, "--workers", "2"
    )
    assert code == 0, stdout[-3000:] + stderr[-3000:]
    assert "synthetic CrossTask-format release" in stdout and "STAND-INS" in stdout
    assert "binary_accuracy" in stdout and "the paper's rows are COIN's" in stdout
    # every rule of the adapter met by the bundled release (its SOURCES.md lists them)
    assert skips_by_reason(out) == {
        "not-primary-task": 1, "repeated-step": 1, "segment-count": 1, "too-short-step": 1,
    }  # fmt: skip
    assert "synthetic" in (demo_release("crosstask") / "SOURCES.md").read_text("utf-8")
    card = read_card(out)
    assert card.source == "crosstask" and card.stand_in
    text = (out / "README.md").read_text("utf-8")
    assert "not from CrossTask's videos" in text and "real COIN entries" not in text
    rows = load_three(out)["video_text"]
    assert {r["video_id"] for r in rows} == {
        "-demoBoat01", "_demoBoat02", "demoPlant01", "demoPlant02", "demoTeaPot1",
    }  # fmt: skip
    entries = sorted(p.name for p in (board / "entries").iterdir())
    assert "random-exact" in entries and any(e.startswith("identity") for e in entries)
    assert not [e for e in entries if e.startswith("paper-") or "taxonomy" in e]
    index = json.loads((board / "index.json").read_text("utf-8"))
    assert index  # the board's index was written
