"""Prediction files are read bounded and streamed (issue 40 §4): whatever a user hands
``splice score``, it holds less than 300 MB, and a file over a bound is refused naming it."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.support.peak_memory import peak_memory

LIMIT = 300 * 1024 * 1024  # the most any input may make a command hold


def test_a_gigabyte_of_garbage_is_refused_by_its_size_in_little_memory(demo_build, tmp_path):
    """A 1 GB file of garbage was read whole (2.8 GB)."""
    garbage = tmp_path / "garbage.jsonl"
    with garbage.open("wb") as fh:  # sparse: a gigabyte of zero bytes, no disk used
        fh.truncate(1024**3)
    code, err, peak = peak_memory(["score", str(garbage), "--data", str(demo_build)])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"prediction file {garbage}: 1.02e+03 MB, over the 64 MB" in err, err
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
