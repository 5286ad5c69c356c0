"""Prediction files are read bounded and streamed (issue 40 §4, issue 47 §3): whatever a
user hands ``splice score``, it holds less than 300 MB; a streamed file (JSONL, CSV, TSV)
has no size bound, a row over the row bound costs only itself, and a file read whole (a
.json list, an .xlsx) over its bound is refused naming it."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from tests.support.peak_memory import peak_memory

LIMIT = 300 * 1024 * 1024  # the most any input may make a command hold


def test_a_gigabyte_row_costs_only_itself_in_little_memory(demo_build, tmp_path):
    """Issue 47 §3: JSONL, CSV and TSV files were refused over 64 MB although their readers
    stream, and one row over the row bound refused the whole file. A 1 GB file whose one
    row is a gigabyte of garbage (a sparse hole: no disk used) between good rows: the row
    is skipped with a warning naming it, every other row is scored, in under 300 MB."""
    from splice_eval.builddata import read_meta

    answers = {v: list(m.order) for v, m in read_meta(demo_build).items()}
    rows = [
        json.dumps({"video_id": v, "config": "text", "model": "m", "order": o}) + "\n"
        for v, o in answers.items()
    ]
    half = len(rows) // 2
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.write("".join(rows[:half]).encode())
        fh.write(b'{"video_id": "garbage", "raw_output": "')
        fh.seek(1024**3, os.SEEK_CUR)  # a hole: reads as a gigabyte of zero bytes
        fh.write(b'"}\n' + "".join(rows[half:]).encode())
    assert path.stat().st_size > 1024**3
    scores = tmp_path / "scores.json"
    argv = ["score", str(path), "--data", str(demo_build), "--json", str(scores)]
    code, err, peak = peak_memory(argv)
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert f"{path}:{half + 1}: a line of " in warning and "skipped" in warning, warning
    run = json.loads(scores.read_text())["runs"][0]
    assert run["missing"] == 0 and run["not_in_build"] == 0, run
    assert run["binary_accuracy"] == 1.0, run
    assert peak < LIMIT, peak


def _inflating_xlsx(path: Path, cell_bytes: int) -> Path:
    """A real .xlsx (openpyxl's parts) whose one cell (an inline string of the sheet)
    unpacks to ``cell_bytes``: small on disk, huge once read."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["video", "prediction"])
    book.active.append(["v1", "PLACEHOLDER"])
    book.save(path)
    with zipfile.ZipFile(path) as archive:
        parts = {info: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in parts.items():
            if b"PLACEHOLDER" not in data:
                archive.writestr(info, data)
                continue
            head, tail = data.split(b"PLACEHOLDER")
            with archive.open(info.filename, "w", force_zip64=True) as part:
                part.write(head)
                chunk = b"Video 1, " * (1024 * 1024 // 9)
                for _ in range(cell_bytes // len(chunk)):
                    part.write(chunk)
                part.write(tail)
    return path


def test_an_xlsx_that_unpacks_to_300_mb_is_refused_in_little_memory(demo_build, tmp_path):
    """A 300 kB .xlsx whose one cell inflates to 300 MB took 1.3 GB."""
    bomb = _inflating_xlsx(tmp_path / "m_SPLICE.xlsx", 300 * 1024 * 1024)
    assert bomb.stat().st_size < 1024 * 1024
    code, err, peak = peak_memory(["score", str(bomb), "--data", str(demo_build)])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{bomb}: unpacks to 300 MB, over the 16 MB an .xlsx prediction file" in err, err
    assert peak < LIMIT, peak


def test_a_file_just_under_the_bounds_is_read_in_little_memory(demo_build, tmp_path):
    """Under the bounds a file is read a row at a time: 60 MB of rows, each a long answer
    (a model that repeated itself), kept as its order only."""
    rows = tmp_path / "long.jsonl"
    answer = "Video 1 comes before Video 2. " * (2 * 1024 * 1024 // 30)
    with rows.open("w", encoding="utf-8") as fh:
        for i in range(30):
            row = f'"video_id": "v{i}", "config": "text", "order": [1, 2], "raw_output": "{answer}"'
            fh.write("{" + row + "}\n")
    assert 55 * 1024 * 1024 < rows.stat().st_size < 64 * 1024 * 1024
    code, err, peak = peak_memory(["score", str(rows), "--data", str(demo_build)])
    assert code == 2 and "none of its 30 videos" in err, err  # read to the end
    assert peak < LIMIT, peak
