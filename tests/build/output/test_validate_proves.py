"""`splice validate` proves every fact it states (issue 31, defect 3): each tampering below
of a sealed build (Parquet, WebDataset tars and card) makes the command exit non-zero with
a line naming the file and the row or the card's field."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from splice_build.cli import main
from splice_build.output.card import Provenance, write_card
from splice_build.output.validate import validate
from splice_build.output.writing.shards import WriteResult, shard_info
from splice_build.output.writing.write import write_dataset
from splice_build.output.writing.write_webdataset import write_webdataset
from splice_build.remote.upload_plan import plan_upload
from splice_dataset import SPLIT, WRITTEN_CONFIGS, shard_files, shard_name

TAR = "webdataset/test-000000.tar"
VIDEO = f"video/{shard_name(SPLIT, 0, 1)}"
FULL = f"video_text/{shard_name(SPLIT, 0, 1)}"


def provenance(n: int, stand_in: bool = False) -> Provenance:
    return Provenance(
        annotations_file="COIN.json",
        annotations_sha256="ab" * 32,
        seed=0,
        cut_settings={},
        videos_included=n,
        tolerance=1.0,
        stand_in=stand_in,
    )


@pytest.fixture(scope="module")
def sealed(tmp_path_factory, tiny_videos) -> tuple[Path, WriteResult]:
    out = tmp_path_factory.mktemp("proves") / "splice"
    written = write_dataset(tiny_videos, out, rows_per_row_group=2)
    write_webdataset(tiny_videos, out)
    write_card(out, written, provenance(len(tiny_videos)))
    assert validate(out, quick=True) == []
    return out, written


@pytest.fixture
def build(sealed, tmp_path) -> Path:
    return Path(shutil.copytree(sealed[0], tmp_path / "splice"))


def refused(build: Path, capsys, *pattern: str) -> list[str]:
    """`splice validate --quick` exits 1, and a line matches every pattern."""
    code = main(["validate", str(build), "--quick", "--no-progress", "--workers", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1, lines
    hits = [line for line in lines if all(re.search(p, line) for p in pattern)]
    assert hits, lines
    return hits


def edit_card(build: Path, change: Callable[[str], str]) -> None:
    card = build / "README.md"
    text = card.read_text()
    changed = change(text)
    assert changed != text
    card.write_text(changed)


def rewrite_tar(path: Path, change: Callable[[list[tuple[str, bytes]]], None]) -> None:
    with tarfile.open(path) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar]
    change(members)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


# --- the WebDataset tars, checked as the Parquet --------------------------------------


def test_a_replaced_clip_member_in_a_tar(build, capsys):
    def swap(members):
        clips = [i for i, (name, _) in enumerate(members) if name.endswith(".mp4")]
        a, b = clips[0], clips[1]
        members[a] = (members[a][0], members[b][1])

    rewrite_tar(build / TAR, swap)
    refused(build, capsys, re.escape(TAR), r"row 0", r"column clips", "differs")


def test_a_reversed_answer_in_a_tar(build, capsys):
    def reverse(members):
        i = next(i for i, (name, _) in enumerate(members) if name.endswith(".json"))
        row = json.loads(members[i][1])
        row["answer"]["order"].reverse()
        members[i] = (members[i][0], json.dumps(row).encode())

    rewrite_tar(build / TAR, reverse)
    refused(build, capsys, re.escape(TAR), r"row 0", r"column answer", "differs")


def test_a_tar_cut_short(build, capsys):
    tar = build / TAR
    tar.write_bytes(tar.read_bytes()[:-1000])
    refused(build, capsys, re.escape(TAR), "cut short")


# --- card facts, recomputed from the shards -------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (r"(\n  videos: )(\d+)", lambda m: f"{m[1]}{int(m[2]) + 1}", "splice_build.videos"),
        (r"(\n  clips: )(\d+)", lambda m: f"{m[1]}{int(m[2]) - 1}", "splice_build.clips"),
        (r"(annotations_sha256: )ab", lambda m: f"{m[1]}ac", "splice_build.annotations_sha256"),
        (r"(download_size: )(\d+)", lambda m: f"{m[1]}{int(m[2]) + 5}", "download_size"),
        (r"(tolerance: )1\.0", lambda m: f"{m[1]}30.0", "splice_build.tolerance"),
        (r"(\n  seed: )0", lambda m: f"{m[1]}1", "splice_build.seed"),
    ],
)
def test_an_edited_card_field(build, capsys, old, new, field):
    edit_card(build, lambda text: re.sub(old, new, text, count=1))
    refused(build, capsys, r"^README\.md", re.escape(field))


def test_a_seed_edited_everywhere_is_caught_by_the_rows_shuffles(build, capsys):
    edit_card(
        build,
        lambda t: t.replace("\n  seed: 0", "\n  seed: 1").replace("**Seed:** 0", "**Seed:** 1"),
    )
    refused(
        build, capsys, r"^README\.md", r"splice_build\.seed: only \d+ of \d+ rows' answer orders"
    )


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (r"\| 2 \| \d+ \| \d+ \|", "Table 6"),
        (r"\| Dish \| \d+ \|", "the domain table"),
        (r"\d+ videos from \d+ domains", "the statistics sentence"),
    ],
)
def test_an_edited_card_table_or_sentence(build, capsys, where, field):
    def change(text):
        found = re.search(where, text)
        assert found, where
        return text.replace(
            found[0], re.sub(r"\d+", lambda m: str(int(m[0]) + 1), found[0], count=1), 1
        )

    edit_card(build, change)
    refused(build, capsys, r"^README\.md", re.escape(field))


def test_a_stand_in_flag_turned_off(tmp_path, tiny_videos, capsys):
    out = tmp_path / "splice"
    written = write_dataset(tiny_videos, out, rows_per_row_group=2)
    write_card(out, written, provenance(len(tiny_videos), stand_in=True))
    assert validate(out, quick=True) == []
    edit_card(out, lambda text: text.replace("stand_in: true", "stand_in: false"))
    refused(out, capsys, r"^README\.md", r"splice_build\.stand_in disagrees")


# --- files and rows ---------------------------------------------------------------------


def test_a_file_no_config_names_is_an_error_and_never_uploaded(build, capsys):
    sub = build / "video" / "sub"
    sub.mkdir()
    shutil.copy(build / VIDEO, sub / shard_name(SPLIT, 0, 1))
    assert "video/sub/" + shard_name(SPLIT, 0, 1) not in {
        f.path_in_repo for f in plan_upload(build)
    }
    refused(build, capsys, r"^video/sub: a folder in the video/ folder that no config")


def test_video_rows_reordered_and_the_card_sealed_again(sealed, build, capsys):
    _, written = sealed
    path = build / VIDEO
    table = pq.read_table(path)
    pq.write_table(table.take(list(range(table.num_rows))[::-1]), path, row_group_size=2)
    shards = {
        c: tuple(shard_info(p) for p in shard_files(build, c)[SPLIT]) for c in WRITTEN_CONFIGS
    }
    write_card(
        build,
        replace(written, out_dir=build, config_shards=shards),
        provenance(len(written.videos)),
    )
    refused(build, capsys, re.escape(VIDEO), "rows reordered")


def test_a_clip_changed_in_both_clip_configs_names_each_shard(build, capsys):
    for rel in (VIDEO, FULL):
        table = pq.read_table(build / rel)
        rows = table.to_pylist()
        clip = rows[1]["clips"][0]
        clip["bytes"] = next(c["bytes"] for c in rows[0]["clips"] if c["bytes"] != clip["bytes"])
        pq.write_table(table.from_pylist(rows, schema=table.schema), build / rel, row_group_size=2)
    for rel in (VIDEO, FULL):
        refused(build, capsys, rf"^{re.escape(rel)}: its rows' digest", "shard_digests")
    # decoded (no --quick), the clip itself is held to its row's segment: the row is named
    found = validate(build)
    assert any(p.file == FULL and p.row == 1 and "clip_durations" in p.what for p in found)
