"""Prediction files that were read wrong without a word (issue 40 §3), through ``splice
score`` on the session's demo build: each is refused naming the file and row, or read as
what it says."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from splice_build.cli import main
from splice_build.output.card_reader import read_card
from splice_eval.builddata import read_meta
from splice_metric import RATES


@pytest.fixture(scope="module")
def answers(demo_build: Path) -> dict[str, list[int]]:
    return {v: list(m.order) for v, m in read_meta(demo_build).items()}


def _score(capsys, tmp_path: Path, demo_build: Path, path: Path, *more: str):
    """``splice score`` of one file: exit status, stderr, and the run's numbers (exit 0)."""
    out = tmp_path / f"{path.name}.scores.json"
    argv = ["score", str(path), "--data", str(demo_build), "--json", str(out), *more]
    code = main(argv)
    captured = capsys.readouterr()
    run = json.loads(out.read_text())["runs"][0] if code == 0 else None
    return code, captured.err.strip(), run, captured.out


def _one_line(err: str) -> str:
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _answer(order: list[int]) -> str:
    return "<order>" + ", ".join(f"Video {k}" for k in order) + "</order>"


def test_lmms_logs_of_two_builds_are_refused_at_the_first_other_row(
    demo_build, answers, tmp_path, capsys
) -> None:
    """Two builds' sample logs concatenated: only the first row's identity was checked."""
    ours = read_card(demo_build).build_id
    other = "f" * 64
    lines = []
    for doc_id, (video, order) in enumerate(answers.items()):
        made_on = ours if doc_id < len(answers) // 2 else other
        record = {"video_id": video, "config": "text", "raw_output": _answer(order),
                  "order": None, "build_id": made_on}  # fmt: skip
        lines.append(json.dumps({"doc_id": doc_id} | {name: record for name in RATES}))
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err, _, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 2
    first_other = len(answers) // 2 + 1
    assert f"{path}:{first_other} was made on build ffffffffffffffff" in _one_line(err), err
    code, err, run, printed = _score(capsys, tmp_path, demo_build, path, "--allow-other-build")
    assert code == 0 and f"SCORED AGAINST ANOTHER BUILD (--allow-other-build): {path}:" in printed


def test_a_vlmevalkit_table_of_other_shuffles_is_refused_naming_the_row(
    demo_build, answers, tmp_path, capsys
) -> None:
    """A VLMEvalKit table whose answer column is another build's (other shuffles) was
    scored without a word: its answers are checked against the build's."""
    path = tmp_path / "m_SPLICE.tsv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(["index", "video", "answer", "prediction"])
        for i, (video, order) in enumerate(answers.items()):
            shuffled = order if i else order[::-1]  # the first row: another build's answer
            writer.writerow([i, video, json.dumps({"order": shuffled}), _answer(shuffled)])
    code, err, _, _ = _score(capsys, tmp_path, demo_build, path)
    video = next(iter(answers))
    assert code == 2 and f"{path}:2: its answer for video {video!r} is" in _one_line(err), err
    code, _, run, printed = _score(capsys, tmp_path, demo_build, path, "--allow-other-build")
    assert code == 0 and "SCORED AGAINST ANOTHER BUILD" in printed and f"{path}:2:" in printed


def test_a_csv_with_a_quote_left_open_is_refused_naming_its_line(
    demo_build, answers, tmp_path, capsys
) -> None:
    """An unclosed quote shifted later answers onto the wrong videos."""
    rows = [f'{v},"{_answer(o)}"' for v, o in answers.items()]
    rows[1] = rows[1][:-1]  # the second answer's quote is never closed
    path = tmp_path / "open.csv"
    path.write_text("video_id,raw_output\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, err, _, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 2 and f"{path}:3: a quote in the row starting on this line" in _one_line(err)


@pytest.mark.parametrize("cells", ["formulas", "empty"])
def test_an_xlsx_without_answers_is_refused_with_the_reason(
    cells, demo_build, answers, tmp_path, capsys
) -> None:
    """Formulas without saved values (openpyxl saves none), or no answers at all, scored 0
    as if a model had answered nothing."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["index", "video", "prediction"])
    for i, video in enumerate(answers):
        book.active.append([i, video, '=CONCAT("Video 1", "")' if cells == "formulas" else None])
    path = tmp_path / f"{cells}.xlsx"
    book.save(path)
    code, err, _, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 2 and f"{path}: all {len(answers)} answer cells are empty" in _one_line(err)
    assert ("formulas whose values were never saved" in err) == (cells == "formulas"), err


def test_video_ids_with_spaces_around_them_are_those_videos(
    demo_build, answers, tmp_path, capsys
) -> None:
    """`` abc `` (as spreadsheets leave ids) was set aside as not in the build."""
    path = tmp_path / "spaced.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["video_id", "order"])
        writer.writerows([f"  {v} ", json.dumps(o)] for v, o in answers.items())
    code, err, run, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 0, err
    assert run["binary_accuracy"] == 1.0 and run["missing"] == 0


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_cell_over_the_csv_field_limit_is_read(
    suffix, demo_build, answers, tmp_path, capsys
) -> None:
    """A cell over Python's csv field limit (131,072 characters) gave a traceback; a long
    answer is read, its order parsed from the whole text."""
    (video, order), *rest = answers.items()
    long = "Let me think about the clips again. " * 5_000 + _answer(order)
    assert len(long) > 131_072
    path = tmp_path / f"m_SPLICE{suffix}"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t" if suffix == ".tsv" else ",")
        writer.writerow(["video", "prediction"] if suffix == ".tsv" else ["video_id", "raw_output"])
        writer.writerow([video, long])
        writer.writerows([v, _answer(o)] for v, o in rest)
    code, err, run, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 0, err
    assert run["binary_accuracy"] == 1.0 and run["orders_from_raw"]["readable"] == len(answers)


def _long_answer(order: list[int]) -> str:
    """A reasoning model's degenerate answer: 12 MB of thinking (three times the row bound),
    quotes and line breaks in it, then its final answer."""
    thinking = 'Hmm, "Video 1" or "Video 2" first? Let me weigh them again.\n' * 200_000
    return f"<think>{thinking}</think>{_answer(order)}"


@pytest.mark.parametrize("form", ["jsonl", "lmms-eval", "csv", "tsv"])
def test_a_row_over_the_row_bound_is_read_from_its_end_and_costs_no_other_row(
    form, demo_build, answers, tmp_path, capsys
) -> None:
    """Issue 47 §3: one answer over the 4 MB row bound among good ones refused the whole
    file (23 answers lost for one degenerate row). The row is read in bounded memory, its
    text kept to its last megabyte (where the final answer is), and scored, with a warning
    naming it; every other row is read."""
    rows = [
        (v, _long_answer(o) if i == 1 else _answer(o)) for i, (v, o) in enumerate(answers.items())
    ]
    path = tmp_path / f"m.{'jsonl' if form == 'lmms-eval' else form}"
    with path.open("w", newline="", encoding="utf-8") as fh:
        if form in ("csv", "tsv"):
            writer = csv.writer(fh, delimiter="\t" if form == "tsv" else ",")
            writer.writerow(["video_id", "raw_output"])
            writer.writerows(rows)
            line = 3  # the long row's first line, under the header
        else:
            for doc_id, (video, raw) in enumerate(rows):
                record = {"video_id": video, "config": "text", "raw_output": raw, "order": None}
                if form == "lmms-eval":
                    record = {"doc_id": doc_id} | {name: record for name in RATES}
                fh.write(json.dumps(record) + "\n")
            line = 2
    assert path.stat().st_size > 3 * 4 * 1024 * 1024
    code, err, run, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 0, err
    warnings = [w for w in err.splitlines() if w.startswith("warning:")]
    assert len(warnings) == 1 and f"{path}:{line}: " in warnings[0], err
    assert "kept to its last 1 MB" in warnings[0], warnings[0]
    assert run["binary_accuracy"] == 1.0 and run["missing"] == 0, run
    assert run["orders_from_raw"]["readable"] == len(answers), run


def test_a_csv_quote_closing_at_a_later_line_end_is_refused_naming_its_row(
    demo_build, answers, tmp_path, capsys
) -> None:
    """Issue 47 §8: a quote left open that closes at the end of a later line (an answer
    that starts with a quote, another that ends with one, written unescaped) swallowed the
    rows between into one answer, silently: their videos scored as missing. A quoted cell
    holding lines that read as rows of their own is refused naming the row it opens in;
    a cell holding lines of prose is read."""
    words = [" then ".join(f"Video {k}" for k in o) for o in answers.values()]
    rows = [f"{v},{w}" for v, w in zip(answers, words, strict=True)]
    rows[1] = rows[1].replace(",", ',"', 1)  # the second answer opens a quote...
    rows[3] += '"'  # ...and the fourth ends with one: rows 3 and 4 would be one answer
    path = tmp_path / "closes_later.csv"
    path.write_text("video_id,raw_output\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, err, _, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 2 and f"{path}:3: the quoted cell of the row starting on this line" in (
        _one_line(err)
    ), err
    (video, order), *rest = answers.items()
    prose = f'"Let me think.\nFirst, the pan.\nSo: {_answer(order)}"'
    path.write_text(
        "video_id,raw_output\n"
        + "\n".join([f"{video},{prose}"] + [f'{v},"{_answer(o)}"' for v, o in rest])
        + "\n",
        encoding="utf-8",
    )
    code, err, run, _ = _score(capsys, tmp_path, demo_build, path)
    assert code == 0 and run["binary_accuracy"] == 1.0, err
