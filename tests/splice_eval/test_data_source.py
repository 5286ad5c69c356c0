"""``--data`` of every command: a file, or a path that is not there, said as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from splice_build.cli import main


def _commands(data: str, tmp_path: Path) -> list[list[str]]:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"video_id": "a", "config": "text", "order": [1, 2]}\n')
    return [
        ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text",
         "--data", data, "--out", str(tmp_path / "run.jsonl")],
        ["score", str(preds), "--data", data],
        ["report", str(preds), "--data", data, "--out", str(tmp_path / "report")],
        ["baseline", "random", "--data", data, "--out", str(tmp_path / "b.jsonl")],
    ]  # fmt: skip


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_file_given_as_data_is_said_to_be_a_file(tmp_path, capsys) -> None:
    """Issue 40 §5: ``splice run --data FILE`` ended in a ValueError traceback."""
    given = tmp_path / "build.parquet"
    given.write_bytes(b"PAR1")
    for argv in _commands(str(given), tmp_path):
        err = _one_line(capsys, argv)
        assert f"--data {given}: is a file" in err, err


def test_a_mistyped_folder_is_no_such_folder_not_the_hub_offline(
    tmp_path, capsys, monkeypatch
) -> None:
    """Issue 40 §5 and 41 §3.8: ``data/x`` (a Hub id's shape) was looked up on the Hub and
    said "the Hub cannot be reached"; ``nowhere`` said "no text shards". Both are no such
    folder; ``data/x`` also says what it would be as a Hub id."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for argv in _commands("nowhere", tmp_path):
        err = _one_line(capsys, argv)
        assert f"--data nowhere: no such folder in {tmp_path}" in err, err
        assert "Hub" not in err and "shards" not in err, err
    for argv in _commands("data/x", tmp_path):
        err = _one_line(capsys, argv)
        assert f"--data data/x: no such folder in {tmp_path}; as a Hub dataset id" in err, err
        assert "HF_HUB_OFFLINE" in err, err
