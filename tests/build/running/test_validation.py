"""Issue 22: a build's final validation proves its shards hold exactly the clips its
workers decoded and checked (by sha256, decoding only what differs), and a standalone
``splice validate`` decodes every clip on as many workers as it is given."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import splice_dataset as schema
from splice_build.cli import main
from splice_build.output import validate
from splice_build.output.validate import parts
from splice_build.output.writing import write
from splice_build.running.pipeline import run_build, verified_clips
from splice_build.running.report import load_report
from splice_build.running.workdir import CUT_RECORD, WorkDir, file_digest
from splice_build.stages.select import select_annotations
from tests.support.build_helpers import config, copy_build, subset_annotations, tree_digest

STATUS = "splice: validated "


def _validated(err: str) -> str:
    """The build's status line saying what its validation did."""
    (line,) = [x for x in err.splitlines() if x.startswith(STATUS)]
    return line


@pytest.fixture
def three(tmp_path: Path, demo_ids: list[str]) -> Path:
    return subset_annotations(tmp_path, demo_ids[:3])


def _tampered(monkeypatch, change) -> None:
    """Make the writer embed other bytes than the work folder's for some clips (a bug or
    damage between the worker's check and the shards: Parquet's checksums and the card
    then agree with the shards, so only the clips' own digests can tell)."""
    real = write.write_dataset

    def writer(videos, out, **kw):
        return real((change(v) for v in videos), out, **kw)

    monkeypatch.setattr(write, "write_dataset", writer)


def _with_clip(video, label: int, path: Path):
    clips = list(video.clips)
    clips[label - 1] = replace(clips[label - 1], path=path)
    return replace(video, clips=tuple(clips))


def test_fresh_build_proves_its_clips_by_digest(tmp_path, sources, three, capsys) -> None:
    result = run_build(replace(config(three, sources, tmp_path / "splice"), progress=True))
    assert result.problems == [] and len(result.report.included) == 3
    clips = sum(v.num_clips for v in result.report.included)
    assert _validated(capsys.readouterr().err) == (
        f"{STATUS}{clips} clips (0 decoded, the rest by digest)"
    )
    # The same folder checked standalone decodes every clip, and agrees.
    report = validate.validate_report(result.out)
    assert report.problems == [] and report.decoded == clips


@pytest.mark.parametrize("tamper", ["swap", "flip"])
def test_shard_clips_other_than_the_checked_ones_fail_the_build(
    tmp_path, sources, three, monkeypatch, tamper, subset_build
) -> None:
    ids = sorted(json.loads(three.read_text())["database"])
    work = tmp_path / "work"
    copy_build(subset_build(3), tmp_path / "first", work)  # cut and checked
    first, second = ids[0], ids[1]
    other = work / "videos" / second / "step00.mp4"
    flipped = tmp_path / "flipped.mp4"
    data = bytearray((work / "videos" / first / "step00.mp4").read_bytes())
    data[len(data) // 2] ^= 0x01
    flipped.write_bytes(bytes(data))

    def change(video):
        if video.entry.video_id != first:
            return video
        label = 1 + next(i for i, c in enumerate(video.clips) if c.path.name == "step00.mp4")
        return _with_clip(video, label, other if tamper == "swap" else flipped)

    _tampered(monkeypatch, change)
    out = tmp_path / "splice"
    result = run_build(config(three, sources, out, work=work))
    dropped = {s.video_id: s.reason for s in result.report.skipped if s.stage == "validate"}
    assert list(dropped) == [first]
    assert "differ from every clip its worker checked" in dropped[first]
    rows = pq.read_table(out / schema.shard_dir(schema.FULL_CONFIG)).to_pylist()
    assert sorted(r[schema.VIDEO_ID] for r in rows) == ids[1:]
    assert main(["validate", str(out), "--no-progress"]) == 0


def _reseal_free_edit(folder: Path, replacement: Path) -> None:
    """Replace a committed clip and edit its recorded size and sha256 to match, as a hand
    edit (or a tool that knows the record but not the check) would."""
    record = json.loads((folder / CUT_RECORD).read_text("utf-8"))
    shutil.copy(replacement, folder / "step00.mp4")
    record["files"]["step00.mp4"] = file_digest(folder / "step00.mp4")
    (folder / CUT_RECORD).write_text(json.dumps(record), "utf-8")


def _shards_and_card(out: Path) -> dict[str, str]:
    return {k: v for k, v in tree_digest(out).items() if not k.startswith("build_report")}


def test_work_entry_with_an_edited_digest_is_not_trusted(
    tmp_path, sources, three, subset_build
) -> None:
    ids = sorted(json.loads(three.read_text())["database"])
    out, work = tmp_path / "splice", tmp_path / "work"
    straight = _shards_and_card(copy_build(subset_build(3), out, work))
    _reseal_free_edit(work / "videos" / ids[0], work / "videos" / ids[1] / "step00.mp4")
    found = WorkDir(work).lookup(ids[0])
    assert found.video is None and "check seal does not match" in found.damage
    result = run_build(config(three, sources, out, work=work))
    assert result.problems == []
    (note,) = load_report(result.out)["notes"]
    assert note.startswith(f"video {ids[0]}: work entry damaged") and "seal" in note
    assert _shards_and_card(result.out) == straight  # the report differs: it has the note


def test_a_record_without_its_check_is_decoded(
    tmp_path, sources, three, capsys, subset_build
) -> None:
    ids = sorted(json.loads(three.read_text())["database"])
    out, work = tmp_path / "splice", tmp_path / "work"
    copy_build(subset_build(3), out, work)
    path = work / "videos" / ids[0] / CUT_RECORD
    record = json.loads(path.read_text("utf-8"))
    del record["checked"]  # as a record made before the worker recorded its check
    path.write_text(json.dumps(record), "utf-8")
    annotations, selection = select_annotations(three)
    keys = {e.video_id: json.loads((work / "videos" / e.video_id / CUT_RECORD).read_text())["key"]
            for e in selection.selected}  # fmt: skip
    entries = list(selection.selected)
    cuts = {e.video_id: WorkDir(work).lookup(e.video_id, keys[e.video_id]) for e in entries}
    verified = verified_clips(entries, cuts)
    assert ids[0] not in verified.clips and set(verified.clips) == set(ids[1:])
    capsys.readouterr()
    result = run_build(replace(config(three, sources, out, work=work), progress=True))
    assert result.problems == []
    assert _validated(capsys.readouterr().err).endswith(
        f"({len(record['clips'])} decoded, the rest by digest)"
    )


def _swap_clip_bytes(build: Path) -> None:
    """Swap the first clips of two rows and rewrite the shard whole (its page checksums
    then hold): the clips no longer last their segments."""
    path = next((build / schema.shard_dir(schema.FULL_CONFIG)).glob("*.parquet"))
    table = pq.read_table(path)
    rows = table.to_pylist()
    a, b = rows[0][schema.CLIPS][0], rows[1][schema.CLIPS][0]
    a["bytes"], b["bytes"] = b["bytes"], a["bytes"]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_validate_on_two_workers_finds_what_one_finds(demo_build, tmp_path, capsys) -> None:
    build = Path(shutil.copytree(demo_build, tmp_path / "splice"))
    _swap_clip_bytes(build)
    listings = []
    for workers in ("1", "2"):
        assert main(["validate", str(build), "--workers", workers, "--no-progress"]) == 1
        listings.append(capsys.readouterr().out)
    assert listings[0] == listings[1]
    assert "lasts" in listings[0] and "sha256" in listings[0]
    # --quick decodes nothing: the swap is then seen by the card's digest of the shards only.
    assert main(["validate", str(build), "--quick", "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "lasts" not in captured.out and "sha256" in captured.out
    assert "(0 decoded)" in captured.err


def _flip_clip_page(path: Path, row_group: int) -> None:
    """Flip a byte in the middle of a row group's clip bytes, in place: that row group's
    page checksum then fails, the others still read."""
    group = pq.ParquetFile(path).metadata.row_group(row_group)
    (chunk,) = [
        group.column(i)
        for i in range(group.num_columns)
        if group.column(i).path_in_schema.startswith(schema.CLIPS)
        and group.column(i).path_in_schema.endswith("bytes")
    ]
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    offset = start + chunk.total_compressed_size // 2
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)[0]
        fh.seek(offset)
        fh.write(bytes([byte ^ 0xFF]))


def test_rows_split_into_parts_any_way_list_the_same_problems(
    demo_build, tmp_path, monkeypatch, capsys
) -> None:
    build = Path(shutil.copytree(demo_build, tmp_path / "splice"))
    shard = next((build / schema.shard_dir(schema.FULL_CONFIG)).glob("*.parquet"))
    meta = pq.ParquetFile(shard).metadata
    assert meta.num_row_groups >= 3  # several row groups, so several parts below
    for row_group in (0, 2):
        _flip_clip_page(shard, row_group)
    listings = {}
    for rows, workers in ((parts.PART_ROWS, "1"), (1, "1"), (1, "2")):
        monkeypatch.setattr(parts, "PART_ROWS", rows)  # parts are made in this process
        assert main(["validate", str(build), "--workers", workers, "--no-progress"]) == 1
        listings[rows, workers] = capsys.readouterr().out
    assert len(set(listings.values())) == 1, listings
    out = listings[1, "2"]
    first = [0, meta.row_group(0).num_rows, meta.row_group(0).num_rows + meta.row_group(1).num_rows]
    for row_group in (0, 2):
        rows = meta.row_group(row_group).num_rows
        assert (
            f"row group {row_group} (rows {first[row_group]}..{first[row_group] + rows - 1})" in out
        )
    lost = meta.row_group(0).num_rows + meta.row_group(2).num_rows
    # The lost rows' videos are missing from the full config: the other two clip-row
    # configs report each of them; every other row was read and checked.
    assert out.count(f"video not in the {schema.FULL_CONFIG} shards") == 2 * lost
    assert "OK" not in out


def test_a_shard_replaced_or_rewritten_since_a_part_read_it_is_read_anew(tmp_path) -> None:
    """Parts keep a shard open per process (`parts._opened`): a file replaced since (a new
    inode) or rewritten in place must be read anew, never through the old handle."""
    path, other = tmp_path / "test-00000-of-00001.parquet", tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    assert parts.read_group(str(path), 0) == [{"x": 1}, {"x": 2}]
    pq.write_table(pa.table({"x": [3, 4]}), other)
    os.replace(other, path)
    assert parts.read_group(str(path), 0) == [{"x": 3}, {"x": 4}]
    pq.write_table(pa.table({"x": [5, 6, 7]}), path)  # the same file, truncated and written
    assert parts.read_group(str(path), 0) == [{"x": 5}, {"x": 6}, {"x": 7}]


def test_a_validation_worker_starts_without_datasets() -> None:
    """What a spawned validation worker imports (the parts and the schema's names) leaves
    ``datasets`` and pandas out: over a second and about 100 MB per worker."""
    code = (
        "import sys, splice_build.output.validate.parts, splice_dataset; "
        "print(sorted(m for m in ('datasets', 'pandas') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_parts_hold_32_rows_or_8_mb_of_whole_row_groups() -> None:
    """Tiny rows make parts of `PART_ROWS`; real clips (MBs a row group) a part per row
    group or two, so the bar moves every few seconds of decoding."""
    tiny = parts.parts_of("video", "p", "video/p", [(4, 20_000)] * 20)
    assert [sum(g.rows for g in p.groups) for p in tiny] == [32, 32, 16]
    real = parts.parts_of(
        "video", "p", "video/p", [(4, 18_000_000), (4, 5_000_000), (4, 3_000_000), (2, 1)]
    )
    assert [[g.index for g in p.groups] for p in real] == [[0], [1, 2], [3]]
    assert [p.groups[0].first for p in real] == [0, 4, 12]
