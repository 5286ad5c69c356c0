"""The one atomic-write helper: the file is the old one or the new one, never half of one,
and no temporary file is left either way."""

from __future__ import annotations

import pytest

from splice_build.atomic import atomic_path


@pytest.mark.parametrize("fsync", [False, True])
def test_a_finished_write_replaces_the_file_and_leaves_no_temporary(tmp_path, fsync) -> None:
    path = tmp_path / "record.json"
    path.write_text("old", "utf-8")
    with atomic_path(path, fsync=fsync) as tmp:
        assert tmp.parent == path.parent and tmp.name.startswith(".") and tmp != path
        tmp.write_text("new", "utf-8")
        assert path.read_text("utf-8") == "old"  # not in place before the block ends
    assert path.read_text("utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_path(path) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("disk full")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_two_writers_of_one_file_never_share_a_temporary(tmp_path) -> None:
    path = tmp_path / "sheet.csv"
    with atomic_path(path) as a, atomic_path(path) as b:
        assert a != b
        a.write_text("a", "utf-8")
        b.write_text("b", "utf-8")
    assert path.read_text("utf-8") == "a"  # the outer block ended last
