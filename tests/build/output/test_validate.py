"""Stage 8: `splice validate` passes a good build and reports every corruption we can make."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from splice_build.cli import main
from splice_build.output.card import Provenance, write_card
from splice_build.output.validate import Problem, validate, validate_report
from splice_build.output.writing.write import write_dataset
from splice_dataset import (
    TEXT_QUESTION_CONFIGS,
    WRITTEN_CONFIGS,
    features,
    question_rows,
    shard_dir,
    shard_name,
)

CLIP_DIR, VIDEO_DIR, TEXT_DIR = shard_dir("video_text"), shard_dir("video"), shard_dir("text")


@pytest.fixture(scope="module")
def good(tmp_path_factory, tiny_videos) -> Path:
    out = tmp_path_factory.mktemp("validate") / "splice"
    written = write_dataset(tiny_videos, out, rows_per_row_group=2)
    provenance = Provenance(
        annotations_file="COIN.json",
        annotations_sha256="0" * 64,
        seed=0,
        cut_settings={},
        videos_included=len(tiny_videos),
    )
    write_card(out, written, provenance)
    return out


@pytest.fixture
def build(good, tmp_path) -> Path:
    """A fresh copy of the good build to tamper with."""
    return Path(shutil.copytree(good, tmp_path / "splice"))


def _shard(build: Path, folder: str = CLIP_DIR) -> Path:
    return build / folder / shard_name("test", 0, 1)


def _rewrite(path: Path, change: Callable[[list[dict]], None], schema: pa.Schema | None = None):
    """Rewrite a shard with `change` applied to its rows (in place)."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema or table.schema), path)


def _row(rows: list[dict], video_id: str) -> dict:
    return next(r for r in rows if r["video_id"] == video_id)


def _encode(num_frames: int, *, offset: int = 0, metadata: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        out.metadata.update(metadata or {})
        stream = out.add_stream("libx264", rate=Fraction(10))
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(num_frames):
            frame = av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), np.uint8), format="rgb24")
            frame.pts, frame.time_base = i + offset, Fraction(1, 10)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buf.getvalue()


def _assert_reported(problems: list[Problem], pattern: str, **where) -> Problem:
    for p in problems:
        if re.search(pattern, str(p)) and all(getattr(p, k) == v for k, v in where.items()):
            return p
    listing = "\n".join(map(str, problems))
    raise AssertionError(f"no problem matching {pattern!r} {where} in:\n{listing}")


def test_good_build_passes(good, capsys):
    report = validate_report(good)
    assert report.problems == []
    assert (report.videos, report.clips) == (6, 27)
    assert report.shards == dict.fromkeys(WRITTEN_CONFIGS, 1)
    assert validate(good, quick=True) == []
    assert main(["validate", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 6 videos, 27 clips") and out.count("\n") == 1


def test_cli_lists_problems_and_exits_1(build, capsys):
    (build / "README.md").unlink()
    assert main(["validate", str(build)]) == 1
    out = capsys.readouterr().out
    assert "README.md: missing" in out


# --- clips --------------------------------------------------------------------------------


def test_clip_that_does_not_decode(build):
    def garble(rows):
        clip = _row(rows, "c2vid")["clips"][1]
        clip["bytes"] = clip["bytes"][: len(clip["bytes"]) // 3]

    _rewrite(_shard(build), garble)
    _assert_reported(validate(build), "does not decode", video_id="c2vid", column="clips[1]")


def test_clip_whose_duration_does_not_match_its_segment(build):
    def swap(rows):  # the longest and shortest clips of the 7-clip video trade places
        row = _row(rows, "f5vid")
        lengths = [s["end"] - s["start"] for s in row["answer"]["segments"]]
        a, b = lengths.index(min(lengths)), lengths.index(max(lengths))
        clips = row["clips"]
        clips[a]["bytes"], clips[b]["bytes"] = clips[b]["bytes"], clips[a]["bytes"]

    _rewrite(_shard(build), swap)
    problems = validate(build)
    _assert_reported(problems, r"lasts 1\.000 s but its segment lasts 0\.400 s", video_id="f5vid")
    _assert_reported(problems, "but clip_durations says", video_id="f5vid")


def test_clip_name_revealing_its_position(build):
    def rename(rows):
        row = _row(rows, "b1vid")
        row["clips"][0]["path"] = "b1vid_step2.mp4"

    _rewrite(_shard(build), rename)
    _assert_reported(validate(build), "file name 'b1vid_step2.mp4'", column="clips[0]")


def test_clip_carrying_source_time_or_metadata(build):
    def leak(rows):
        row = _row(rows, "a0vid")
        frames = round(row["clip_durations"][0] * 10)
        row["clips"][0]["bytes"] = _encode(frames, offset=30)  # starts at 3.0 s
        frames = round(row["clip_durations"][1] * 10)
        row["clips"][1]["bytes"] = _encode(frames, metadata={"comment": "segment 7.5-8.0"})

    _rewrite(_shard(build), leak)
    problems = validate(build)
    _assert_reported(problems, "first frame at 3.000 s", video_id="a0vid", column="clips[0]")
    _assert_reported(problems, "metadata.*segment 7.5-8.0", video_id="a0vid", column="clips[1]")


# --- rows and answers ---------------------------------------------------------------------


def test_order_that_is_not_a_permutation(build):
    _rewrite(_shard(build), lambda rows: _row(rows, "c2vid")["answer"].update(order=[1, 1, 2, 3]))
    _assert_reported(validate(build), r"\[1, 1, 2, 3\] is not a permutation of 1..4")


def test_order_that_disagrees_with_the_segments(build):
    def flip(rows):
        order = _row(rows, "d3vid")["answer"]["order"]
        order[0], order[1] = order[1], order[0]

    _rewrite(_shard(build), flip)
    _assert_reported(validate(build), "disagrees with the segments", video_id="d3vid")


def test_lengths_and_duration_that_disagree(build):
    def cut(rows):
        _row(rows, "e4vid")["captions"].pop()
        _row(rows, "b1vid")["duration"] += 1.0

    _rewrite(_shard(build), cut)
    problems = validate(build)
    _assert_reported(problems, "5 entries for num_clips=6", video_id="e4vid", column="captions")
    _assert_reported(problems, "not the sum of clip_durations", video_id="b1vid")


def test_unshuffled_build(build):
    """Labels in chronological order everywhere: the clip labels give the answer away."""

    def unshuffle(rows):
        for row in rows:
            order = row["answer"]["order"]
            for col in ("clips", "captions", "clip_durations"):
                if col in row:
                    row[col] = [row[col][label - 1] for label in order]
            for key in ("segments", "step_ids"):
                row["answer"][key] = [row["answer"][key][label - 1] for label in order]
            row["answer"]["order"] = list(range(1, len(order) + 1))
            for k, clip in enumerate(row.get("clips", []), start=1):
                clip["path"] = f"{row['video_id']}_video{k}.mp4"

    for folder in (CLIP_DIR, VIDEO_DIR, TEXT_DIR):
        _rewrite(_shard(build, folder), unshuffle)
    text_rows = pq.read_table(_shard(build, TEXT_DIR)).to_pylist()
    for config, (asked, fmt) in TEXT_QUESTION_CONFIGS.items():  # asked of the rewritten rows
        questions = [q for row in text_rows for q in question_rows(row, asked, fmt)]
        schema = features(config).arrow_schema
        pq.write_table(pa.Table.from_pylist(questions, schema=schema), _shard(build, config))
    problems = validate(build)
    _assert_reported(problems, "chronological order .* give the order away")
    # nothing else is wrong but the byte sizes, the sha256 and the rows' digests of the
    # rewritten shards (and so the build's identity), and orders no seed shuffled so
    others = [p for p in problems if "give the order away" not in p.what]
    words = ("num_bytes", "_size", "sha256", "digest", "build_id", "splice_build.seed")
    assert others and all(any(w in p.what for w in words) for p in others), [
        str(p) for p in others if not any(w in p.what for w in words)
    ]


# --- shards ---------------------------------------------------------------------------------


def test_extra_model_facing_column(build):
    path = _shard(build)
    table = pq.read_table(path)
    order = pa.array([r["order"] for r in table.column("answer").to_pylist()])
    pq.write_table(table.append_column("order", order), path)
    _assert_reported(validate(build), r"extra \['order'\]", file=f"{CLIP_DIR}/{path.name}")


def test_missing_features_metadata(build):
    path = _shard(build, TEXT_DIR)
    table = pq.read_table(path)
    _rewrite(path, lambda rows: None, schema=table.schema.with_metadata({}))
    _assert_reported(
        validate(build), "no 'huggingface' schema metadata", file=f"{TEXT_DIR}/{path.name}"
    )


def test_text_shard_that_disagrees_with_the_full_shard(build):
    def change(rows):
        _row(rows, "d3vid")["captions"][0] = "a different caption"
        rows.remove(_row(rows, "e4vid"))

    _rewrite(_shard(build, TEXT_DIR), change)
    problems = validate(build)
    _assert_reported(
        problems, "differs from the video_text shards", video_id="d3vid", column="captions"
    )
    _assert_reported(problems, "missing from the text shards", video_id="e4vid")


def test_video_shard_that_disagrees_with_the_full_shard(build):
    def change(rows):
        clip = _row(rows, "b1vid")["clips"][0]
        clip["bytes"] = clip["bytes"][:-1] + b"x"
        _row(rows, "c2vid")["answer"]["order"].reverse()

    _rewrite(_shard(build, VIDEO_DIR), change)
    problems = validate(build)
    file = f"{VIDEO_DIR}/{_shard(build).name}"
    _assert_reported(problems, "differs from the video_text", video_id="b1vid", column="clips")
    _assert_reported(problems, "differs from the video_text", video_id="c2vid", column="answer")
    assert all(p.file == file for p in problems if "differs" in p.what)


def test_question_shard_that_disagrees_with_the_text_rows(build):
    """A question row is checked against the one `question_rows` regenerates from the text
    rows: a flipped answer, swapped labels or a dropped question each fail validation."""
    choice, pairs = _shard(build, "text_choice"), _shard(build, "text_pairwise")
    (vid,) = {r["video_id"] for r in pq.read_table(choice).to_pylist()[:1]}

    def flip_answer(rows):
        q = rows[0]
        q["answer"]["option"] = q["answer"]["option"] % q["answer"]["num_options"] + 1

    assert validate(build, quick=True) == []
    _rewrite(choice, flip_answer)
    problems = validate(build, quick=True)
    _assert_reported(
        problems,
        "differs from the question the text row gives",
        file=f"text_choice/{choice.name}",
        row=0,
        video_id=vid,
        column="answer",
    )

    def swap_and_drop(rows):
        rows[0]["labels"].reverse()
        rows.pop()

    _rewrite(pairs, swap_and_drop)
    problems = validate(build, quick=True)
    _assert_reported(problems, "differs from the question", row=0, column="labels")
    _assert_reported(problems, r"1 question\(s\) of the text rows missing", file="text_pairwise")
    _assert_reported(problems, "num_examples", file="README.md")
    # one per change (the flipped choice answer still there), no cascade
    assert sum("question" in p.what for p in problems) == 3


def test_question_shard_out_of_order_or_duplicated(build):
    pairs = _shard(build, "text_pairwise")

    def reorder_and_duplicate(rows):
        rows[0], rows[1] = rows[1], rows[0]
        rows.append(dict(rows[2]))

    _rewrite(pairs, reorder_and_duplicate)
    problems = validate(build, quick=True)
    _assert_reported(problems, "out of the regenerated order", row=1)
    _assert_reported(problems, "seen twice", column="question_id")
    assert not [p for p in problems if "differs" in p.what or "missing" in p.what]


def test_missing_question_config(build):
    shutil.rmtree(build / "text_pairwise")
    _assert_reported(validate(build, quick=True), "folder missing", file="text_pairwise")


def test_video_shard_with_the_full_columns(build):
    """The old shared layout: a video file holding captions (the viewer's cast fails)."""
    shutil.copy(_shard(build), _shard(build, VIDEO_DIR))
    _assert_reported(validate(build), r"not the video config's .*extra \['captions'\]", column=None)


def test_bad_shard_names_and_leftovers(build):
    _shard(build).rename(build / CLIP_DIR / shard_name("test", 0, 2))
    (build / TEXT_DIR / ".tmp-test-00001.parquet").write_bytes(b"partial")
    problems = validate(build)
    _assert_reported(problems, r"do not cover 0..1", file=CLIP_DIR)
    _assert_reported(problems, "leftover temporary shard")


def test_shard_that_is_not_parquet(build):
    _shard(build, TEXT_DIR).write_bytes(b"PAR1 but not really")
    problems = validate(build)
    _assert_reported(
        problems, "not a readable Parquet file", file=f"{TEXT_DIR}/test-00000-of-00001.parquet"
    )
    _assert_reported(problems, "missing from the text shards", video_id="a0vid")


# --- the card -------------------------------------------------------------------------------


def test_card_counts_that_disagree_with_the_shards(build):
    readme = build / "README.md"
    text = readme.read_text()
    text = text.replace("num_examples: 6", "num_examples: 7", 1)
    text = text.replace("| 3 | 1 | 1.50 |", "| 3 | 2 | 1.50 |")
    readme.write_text(text)
    problems = validate(build)
    _assert_reported(problems, "num_examples 7 but the shards hold 6 rows", file="README.md")
    _assert_reported(problems, r"Table 1 row for 3 clips is \('3', '2', '1.50'\)")


def test_card_with_a_columns_projection_or_without_table(build):
    """A `columns:` list other than the config's own would make load_dataset and the
    viewer (which ignores it) disagree."""
    readme = build / "README.md"
    text = readme.read_text()
    assert "columns:" not in text
    text = text.replace(
        "- config_name: video\n", "- config_name: video\n  columns:\n  - video_id\n"
    )
    text = text.replace("| # of Clips |", "| Clips |")
    readme.write_text(text)
    problems = validate(build)
    _assert_reported(problems, r"config video: columns \['video_id'\]")
    _assert_reported(problems, "no Table 1")


def test_card_that_does_not_parse(build):
    (build / "README.md").write_text("---\nlicense: [unclosed\n---\n# x\n")
    _assert_reported(validate(build), "does not parse", file="README.md")


# --- byte-level integrity: page checksums and the card's fingerprint ------------------------


def _flip_inside_clip(build: Path, video_id: str, index: int) -> None:
    """Flip one bit in the middle of a clip's bytes inside the shard file itself."""
    path = _shard(build)
    clip = _row(pq.read_table(path).to_pylist(), video_id)["clips"][index]["bytes"]
    data = bytearray(path.read_bytes())
    at = data.find(clip)
    assert at > 0
    data[at + len(clip) // 2] ^= 0x04
    path.write_bytes(bytes(data))


def test_flipped_byte_inside_a_clip_fails_validate_and_publish(build, capsys):
    from splice_build.remote.publish import publish_dataset

    _flip_inside_clip(build, "d3vid", 2)
    problems = validate(build)
    _assert_reported(problems, "checksum", file=f"{CLIP_DIR}/{_shard(build).name}")
    _assert_reported(problems, "sha256 .* but the shards' is", file="README.md")
    assert validate(build, quick=True) != []
    assert publish_dataset(build, "org/splice", dry_run=True, allow_stand_in=True) == 1
    assert "fails splice validate" in capsys.readouterr().err


def test_card_fingerprint_that_disagrees_with_the_shards(build):
    readme = build / "README.md"
    text = readme.read_text()
    recorded = re.search(r"shards_sha256: ([0-9a-f]{64})", text)[1]
    wrong = recorded[:-1] + ("0" if recorded[-1] != "0" else "1")
    readme.write_text(text.replace(recorded, wrong))
    problems = validate(build)
    _assert_reported(problems, f"shards_sha256 {wrong[:16]}.* but the shards' is", file="README.md")
    assert all(p.file == "README.md" for p in problems)


def test_clip_duration_recorded_other_than_as_cut(build):
    """The cutter records a clip's duration as cut; half a frame off is a problem."""

    def shift(rows):
        row = _row(rows, "b1vid")
        row["clip_durations"][0] += 0.05
        row["duration"] += 0.05

    _rewrite(_shard(build), shift)
    problems = validate(build)
    _assert_reported(problems, "but clip_durations says", video_id="b1vid", column="clips[0]")


def test_clip_with_a_display_matrix(build, tmp_path):
    """Clips are turned in their pixels; a display matrix would make players turn them
    again (and models would see what players do not)."""
    from tests.support.videos import set_display_rotation

    def rotate(rows):
        clip = _row(rows, "c2vid")["clips"][0]
        path = tmp_path / "clip.mp4"
        path.write_bytes(clip["bytes"])
        clip["bytes"] = set_display_rotation(path, -90).read_bytes()

    _rewrite(_shard(build), rotate)
    problems = validate(build)
    _assert_reported(problems, r"display matrix \(rotation -90\)", video_id="c2vid")


# --- issue 31, defect 6: the real sparse-VFR source builds and validates --------------------


def test_real_sparse_vfr_tree_avi_builds_and_validates(tree_avi, tmp_path):
    """Debian's tree.avi (Cinepak, nominal 15 fps, 68 frames over 29.6 s) under a real COIN
    entry whose step 4 is [22.0, 28.5): the video was dropped ("more than 1 frame of
    0.0667 s") and `splice build` exited 1. It builds with every step, and `splice
    validate` passes it, both as a user types them."""
    from tests.support.build_helpers import (
        cli_build,
        ids_with_steps,
        retimed_annotations,
        run_splice,
    )

    (video_id,) = ids_with_steps(1, 4)
    segments = [(2.0, 6.0), (8.0, 12.0), (14.0, 20.0), (22.0, 28.5)]
    annotations = retimed_annotations(tmp_path, {video_id: segments}, duration=29.6)
    videos = tmp_path / "videos"
    videos.mkdir()
    shutil.copy(tree_avi, videos / f"{video_id}.avi")
    out = tmp_path / "out"
    cli_build(annotations, videos, out)  # exit 0
    rows = pq.read_table(out / "text").to_pylist()
    assert [(r["video_id"], r["num_clips"]) for r in rows] == [(video_id, 4)]
    checked = run_splice("validate", out)
    assert checked.returncode == 0, (checked.stdout, checked.stderr)
