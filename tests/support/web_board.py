"""A small real board for the web page's tests: ``splice leaderboard init`` on the demo build
(the paper's rows, random, exact, the baselines, a human row) and three submissions added
with ``splice leaderboard add``: an open model run by ``splice run``, a closed one through
lmms-eval (two files: its video_text and text runs), and one whose name and meta text are an
HTML and Markdown injection."""

from __future__ import annotations

from pathlib import Path

from splice_build.cli import main
from splice_build.output.card_reader import read_card
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.scoring.score import read_answers

# Rendered as markup this would be an image fetching "x" (and running a script), a link
# elsewhere, bold text and a heading; the page must show these characters as typed.
INJECTION = "<img src=x onerror=alert(1)> **bold** [link](http://evil.example) # h"
SUBMITTER_INJECTION = "<script>alert(2)</script>_em_ `code`"


def answers_file(
    build: Path,
    out: Path,
    model: str,
    right_share: float,
    metadata: dict,
    config: str = "video_text",
) -> Path:
    """A prediction file answering every video: the first ``right_share`` of them right,
    the rest reversed."""
    refs = list(read_answers(build).references.items())
    cut = round(len(refs) * right_share)
    rows = [
        Prediction(v, config, model, None, list(o) if i < cut else list(reversed(o)))
        for i, (v, o) in enumerate(refs)
    ]
    meta = {"producer": "splice run", "model": model, "config": config}
    meta["build_id"] = read_card(build).build_id
    return write_predictions(out, rows, meta | metadata)


TWO_FILES = "org/closed-api"  # submitted with two files: its video_text and text runs
SUBMISSIONS = (
    # (model, name or None, share right, the file's metadata, meta.yaml)
    ("org/open-7b", None, 0.8, {}, "params_b: 7\nweights: open\nsubmitter: alice\n"),
    (
        "org/closed-api",
        None,
        0.5,
        {"producer": "lmms-eval"},
        "weights: closed\nsubmitter: bob\n",
    ),
    (
        "org/injected-72b",
        INJECTION,
        0.3,
        {},
        f"params_b: 72\nweights: open\nsubmitter: '{SUBMITTER_INJECTION}'\n",
    ),
)


def make_board(build: Path, root: Path) -> Path:
    """The board folder, under ``root``."""
    board = root / "board"
    assert main(["leaderboard", "init", "--board", str(board), "--data", str(build)]) == 0
    for i, (model, name, right, recorded, meta) in enumerate(SUBMISSIONS):
        preds = [answers_file(build, root / f"pred-{i}.jsonl", model, right, recorded)]
        if model == TWO_FILES:
            text = answers_file(build, root / f"pred-{i}-text.jsonl", model, 0.4, recorded, "text")
            preds.append(text)
        meta_file = root / f"meta-{i}.yaml"
        meta_file.write_text(meta, encoding="utf-8")
        argv = ["leaderboard", "add", *map(str, preds), "--board", str(board)]
        argv += ["--meta", str(meta_file)]
        assert main([*argv, *(["--name", name] if name else [])]) == 0
    return board
