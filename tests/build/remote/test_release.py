"""``splice import-release`` on a folder in the release's layout, written with PyAV by
tests/support/release_folder.py: each part a solid colour with its own frame count, so a
test tells which release file ended up as which clip by looking at the clip, not at the
import's records.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import av
import datasets
import numpy as np
import pytest

import splice_dataset as sd
from splice_build.cli import main
from splice_build.output import validate
from splice_build.output.card_reader import read_card
from splice_build.output.release_manifest import MANIFEST
from splice_build.records import SkipVideo
from splice_build.remote.release import convert
from splice_build.remote.release.command import ImportConfig, ImportResult, run_import
from splice_build.remote.release.scan import SEGMENTS_DIR, ReleasePart, chronological_parts
from splice_build.running.report import load_report
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, load_annotations
from splice_eval.predictions import read_predictions
from tests.support.build_helpers import tree_digest
from tests.support.release_folder import (
    BFRAMES,
    EIGHT,
    EMPTY,
    FEWER,
    FPS,
    GARBAGE,
    IMPORTED,
    MISSING,
    NO_VIDEO,
    NOT_ON_KEY,
    OFFSET,
    PALETTE,
    POINTER,
    REENCODED,
    SPREAD,
    UNKNOWN,
    frames_of,
    make_release,
    write_part,
)
from tests.support.terminal import interrupt_when


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_release(tmp_path_factory.mktemp("release") / "splice-benchmark")


@pytest.fixture(scope="module")
def imported(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> ImportResult:
    out = tmp_path_factory.mktemp("imported") / "splice"
    return run_import(ImportConfig(source=str(release_dir), out=out, seed=3))


def steps_of() -> dict:
    return {e.video_id: e for e in load_annotations(BUNDLED_ANNOTATIONS).entries}


def clip_view(data: bytes) -> tuple[int, int, list[str]]:
    """(frames, palette index of the first frame, stream kinds) of a clip's bytes."""
    with av.open(io.BytesIO(data)) as container:
        kinds = [s.type for s in container.streams]
        frames = list(container.decode(video=0))
    mean = frames[0].to_ndarray(format="rgb24").reshape(-1, 3).mean(axis=0)
    colour = int(np.argmin([np.abs(mean - np.array(c)).sum() for c in PALETTE]))
    return len(frames), colour, kinds


def test_the_right_videos_are_imported_and_the_others_named_with_reasons(imported):
    report = load_report(imported.out)
    status = {v["video_id"]: v for v in report["videos"]}
    skipped = {MISSING, FEWER, UNKNOWN, EMPTY, NO_VIDEO, EIGHT, GARBAGE, POINTER}
    assert set(status) == IMPORTED | skipped
    assert {v for v, s in status.items() if s["status"] == "included"} == IMPORTED
    reasons = {v: s["reason"] for v, s in status.items() if s["status"] == "skipped"}
    assert reasons[MISSING] == "missing part 2 of 1..3 (found 1, 3)"
    assert reasons[FEWER] == "step count differs: parts 1..4 but COIN has 5 steps"
    assert reasons[UNKNOWN] == (
        "not in the annotations (COIN_public_10070.json, COIN's public subset: the full "
        "COIN.json has every video)"
    )
    assert reasons[EMPTY] == (
        f"part 3 (splice_video_segments/04/{EMPTY}_part_3.mp4) is empty (0 bytes)"
    )
    assert reasons[NO_VIDEO] == (
        f"part 4 (splice_video_segments/05/{NO_VIDEO}_part_4.mp4) has no video stream"
    )
    assert reasons[EIGHT] == "8 steps, outside 2..7"
    garbage = f"splice_video_segments/08/{GARBAGE}_part_2.mp4"
    assert reasons[GARBAGE].startswith(f"part 2 ({garbage}) does not open: ")
    assert str(imported.out.parents[1]) not in json.dumps(report)  # no local path anywhere
    assert reasons[POINTER] == (
        f"part 1 (splice_video_segments/08/{POINTER}_part_1.mp4) is a Git LFS pointer, not "
        "the video (fetch the LFS objects)"
    )
    assert report["warnings"] == [
        "not a release clip name, ignored: splice_video_segments/07/notes.txt"
    ]
    assert {s["stage"] for s in status.values() if s["status"] == "skipped"} == {"import"}
    # how the clips were made, without naming a part (that would tie a label to a position)
    assert status[SPREAD]["note"] == "5 clips remuxed"
    assert status[REENCODED]["note"].startswith("4 of 5 clips remuxed, 1 re-encoded (mpeg4/")
    assert "part" not in status[REENCODED]["note"]
    assert status[OFFSET]["note"] == "2 clips remuxed"  # shifted to start at 0, not re-encoded
    assert status[NOT_ON_KEY]["note"] == (
        "2 of 3 clips remuxed, 1 re-encoded (does not start on a keyframe)"
    )
    assert (imported.remuxed, imported.re_encoded) == (17, 2)


def test_each_clip_shows_the_part_its_answer_says_with_aligned_captions(imported):
    entries = steps_of()
    ds = datasets.load_dataset(str(imported.out), "video_text", split=sd.SPLIT)
    ds = ds.cast_column(sd.CLIPS, datasets.List(datasets.Video(decode=False)))
    assert sorted(ds[sd.VIDEO_ID]) == sorted(IMPORTED)
    shuffled = 0
    for row in ds:
        vid, order = row[sd.VIDEO_ID], row[sd.ANSWER]["order"]
        steps = entries[vid].steps
        assert row[sd.NUM_CLIPS] == len(steps) == len(order)
        shuffled += order != sorted(order)
        for chrono, label in enumerate(order):  # chronological clip `chrono` has `label`
            clip = row[sd.CLIPS][label - 1]
            frames, colour, kinds = clip_view(clip["bytes"])
            # every part in full, also the one re-encoded from off a keyframe: the cutter
            # fills the time before its first decodable frame from where the part starts
            assert (frames, colour) == (frames_of(chrono + 1), chrono), (vid, label)
            assert kinds == ["video"]  # the release's audio is gone
            assert clip["path"] == sd.clip_file_name(vid, label)
            assert row[sd.CAPTIONS][label - 1] == steps[chrono].label
            assert row[sd.ANSWER]["step_ids"][label - 1] == steps[chrono].step_id
            seconds = frames_of(chrono + 1) / FPS
            assert abs(row[sd.CLIP_DURATIONS][label - 1] - seconds) < 1e-6
    assert shuffled >= 2


def packets_of(source) -> list[bytes]:
    with av.open(source) as container:
        packets = [bytes(p) for p in container.demux(video=0) if p.size]
    assert packets
    return packets


def test_remuxed_clips_hold_the_release_pictures_bit_for_bit(imported, release_dir):
    ds = datasets.load_dataset(str(imported.out), "video", split=sd.SPLIT)
    ds = ds.cast_column(sd.CLIPS, datasets.List(datasets.Video(decode=False)))
    rows = {r[sd.VIDEO_ID]: r for r in ds}
    for vid in (SPREAD, BFRAMES, OFFSET):
        order = rows[vid][sd.ANSWER]["order"]
        for chrono, label in enumerate(order):
            (part,) = release_dir.rglob(f"{vid}_part_{chrono + 1}.mp4")
            with av.open(str(part)) as source:
                assert source.streams.audio and source.metadata.get("title")  # both dropped
            clip = rows[vid][sd.CLIPS][label - 1]["bytes"]
            assert packets_of(io.BytesIO(clip)) == packets_of(str(part)), (vid, label)
    # the part that could not be remuxed was re-encoded: other bytes, same pictures
    (part,) = release_dir.rglob(f"{REENCODED}_part_2.mp4")
    label = rows[REENCODED][sd.ANSWER]["order"][1]
    clip = rows[REENCODED][sd.CLIPS][label - 1]["bytes"]
    assert packets_of(io.BytesIO(clip)) != packets_of(str(part))
    assert validate.probe_clip(clip).codec == "h264"


def test_no_order_in_any_name_and_no_metadata(imported):
    names = [p.relative_to(imported.out).as_posix() for p in imported.out.rglob("*")]
    assert not [n for n in names if "part" in n.lower()], names
    ds = datasets.load_dataset(str(imported.out), "video_text", split=sd.SPLIT)
    ds = ds.cast_column(sd.CLIPS, datasets.List(datasets.Video(decode=False)))
    for row in ds:
        for clip in row[sd.CLIPS]:
            assert "part" not in clip["path"]
            probe = validate.probe_clip(clip["bytes"])
            assert probe.extra_metadata == {} and probe.first_time == 0.0
    text = datasets.load_dataset(str(imported.out), "text", split=sd.SPLIT)
    assert "part_" not in json.dumps(text.to_list())


def test_the_import_validates_against_what_it_recorded(imported, tmp_path):
    assert imported.problems == []
    assert main(["validate", str(imported.out)]) == 0
    assert validate.validate(imported.out, quick=True) == []  # packets, not frames
    # The clips last frames_of(k)/10 s, nothing like COIN's segments: only the manifest
    # makes them valid. Without it the validator says so instead of passing.
    copy = tmp_path / "copy"
    shutil.copytree(imported.out, copy)
    (copy / MANIFEST).unlink()
    problems = [str(p) for p in validate.validate(copy)]
    assert f"README.md: says origin: release, but there is no {MANIFEST}" in problems
    assert any("but its segment lasts" in p for p in problems)
    # A manifest that does not match the clips is caught, and so is one the card disowns.
    shutil.copy(imported.out / MANIFEST, copy / MANIFEST)
    data = json.loads((copy / MANIFEST).read_text("utf-8"))
    data["clips"][SPREAD][0]["frames"] += 1
    (copy / MANIFEST).write_text(json.dumps(data), "utf-8")
    problems = [str(p) for p in validate.validate(copy)]
    assert any("sha256 differs from the card's manifest_sha256" in p for p in problems)
    assert any(f"video {SPREAD}, column clips[0]: " in p and "records" in p for p in problems)
    # A manifest in a folder whose card does not say it was imported is reported too.
    shutil.copy(imported.out / MANIFEST, copy / MANIFEST)
    readme = (copy / "README.md").read_text("utf-8")
    (copy / "README.md").write_text(readme.replace("  origin: release\n", ""), "utf-8")
    problems = [str(p) for p in validate.validate(copy)]
    assert f"{MANIFEST}: present, but the card does not say origin: release" in problems


def test_card_states_source_licence_manifest_and_the_papers_tables(imported, release_dir):
    text = (imported.out / "README.md").read_text("utf-8")
    manifest = json.loads((imported.out / MANIFEST).read_text("utf-8"))
    assert manifest["repo_id"] == "splice-benchmark" and manifest["revision"] == "unknown"
    assert "Clips from the local folder `splice-benchmark` in the layout of the release" in text
    assert manifest["license"] == "cc-by-nc-4.0" and "cc-by-nc-4.0" in text
    digest = hashlib.sha256((imported.out / MANIFEST).read_bytes()).hexdigest()
    assert digest in text
    used = {
        p.relative_to(release_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in release_dir.rglob("*.mp4")
        if p.name.split("_part_")[0] in IMPORTED
    }
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == used
    assert "origin: release" in text
    assert (
        "The release holds **13 videos and 55 clips** (-3368 videos and -11368 clips against "
        "the paper); this build imported **5 videos and 19 clips** (-3376 videos and -11404 "
        "clips against the paper). The paper's curated set (Table 1): 3381 videos, 11423 clips."
    ) in text
    assert "| 4 | 1 (734) | " in text  # Table 1: this build's videos, then the paper's
    assert "| 5 | 2 (333) | 10 (1665) | " in text  # Table 6
    assert "In the release:** 13 videos, 55 clips" in text


def test_baseline_score_and_report_work_unchanged(imported, tmp_path, capsys):
    preds = tmp_path / "random.jsonl"
    data = str(imported.out)
    assert (
        main(["baseline", "random", "--data", data, "--config", "video", "--out", str(preds)]) == 0
    )
    assert sorted(p.video_id for p in read_predictions(preds)) == sorted(IMPORTED)
    assert main(["score", str(preds), "--data", data]) == 0
    assert "binary" in capsys.readouterr().out.lower()
    assert main(["report", str(preds), "--data", data, "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.md").is_file()


def test_hub_path_calls_snapshot_download_with_id_type_revision_patterns(
    release_dir, tmp_path, monkeypatch
):
    import huggingface_hub

    calls = []
    commit = "2c4e6ec3" + "0" * 32
    snapshot = tmp_path / "hub" / "snapshots" / commit

    def fake_snapshot_download(**kwargs):
        """The Hub cache's layout: files are blobs named by hash, the snapshot symlinks."""
        calls.append(kwargs)
        blobs = tmp_path / "hub" / "blobs"
        blobs.mkdir(parents=True)
        for path in sorted((release_dir / SEGMENTS_DIR / "03").iterdir()):
            blob = blobs / hashlib.sha256(path.read_bytes()).hexdigest()
            shutil.copy(path, blob)
            link = snapshot / SEGMENTS_DIR / "03" / path.name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(blob)
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    out = tmp_path / "splice"
    assert main(["import-release", "--out", str(out), "--revision", "v1.0"]) == 0
    assert calls == [
        {
            "repo_id": "prokajevo/splice-benchmark",
            "repo_type": "dataset",
            "revision": "v1.0",
            "allow_patterns": ["splice_video_segments/*/*.mp4"],
        }
    ]
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    assert (manifest["repo_id"], manifest["revision"]) == ("prokajevo/splice-benchmark", commit)
    links = sorted((snapshot / SEGMENTS_DIR / "03").iterdir())
    assert [(f["path"], f["sha256"]) for f in manifest["files"]] == [
        (f"{SEGMENTS_DIR}/03/{link.name}", link.resolve().name) for link in links
    ]
    assert f"at revision `{commit}`" in (out / "README.md").read_text("utf-8")
    assert validate.validate(out) == []


def test_hub_failure_is_one_line_error(tmp_path, monkeypatch, capsys):
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    def offline(**kwargs):
        raise LocalEntryNotFoundError("cannot reach huggingface.co\nmore detail")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    assert main(["import-release", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "splice import-release: cannot fetch dataset prokajevo/splice-benchmark (revision "
        "main) from the Hub: cannot reach huggingface.co\n"
    )
    assert not (tmp_path / "o").exists()


def test_bad_source_is_one_line_error(tmp_path, capsys):
    assert (
        main(
            ["import-release", str(tmp_path / "nowhere" / "x" / "y"), "--out", str(tmp_path / "o")]
        )
        == 2
    )
    assert "no such folder, and not a Hub dataset id" in capsys.readouterr().err
    assert main(["import-release", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no splice_video_segments/ folder" in capsys.readouterr().err
    (tmp_path / SEGMENTS_DIR / "00").mkdir(parents=True)
    (tmp_path / SEGMENTS_DIR / "00" / "x.txt").write_text("", "utf-8")
    assert main(["import-release", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no <youtube_id>_part_<k>.mp4 file" in capsys.readouterr().err
    assert (
        main(
            [
                "import-release",
                str(tmp_path / SEGMENTS_DIR / "00" / "x.txt"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def _parts(*spec: tuple[int, str]) -> tuple[ReleasePart, ...]:
    return tuple(ReleasePart("x", k, Path(rel), rel) for k, rel in spec)


@pytest.mark.parametrize(
    "spec,steps,reason",
    [
        (((1, "a/1"), (2, "a/2"), (2, "b/2")), 2, "extra part: part 2 appears 2 times (a/2, b/2)"),
        (((0, "a/0"), (1, "a/1")), 2, "extra part: a/0 (parts count from 1)"),
        (((1, "a"), (2, "b"), (3, "c")), 2, "step count differs: parts 1..3 but COIN has 2 steps"),
        (((2, "a"), (3, "b")), 3, "missing part 1 of 1..3 (found 2, 3)"),
    ],
)
def test_parts_are_taken_only_when_exactly_one_to_n(spec, steps, reason):
    with pytest.raises(SkipVideo) as err:
        chronological_parts(_parts(*spec), steps)
    assert err.value.reason == reason
    ok = chronological_parts(_parts((2, "b"), (1, "a")), 2)
    assert [p.part for p in ok] == [1, 2]


def test_the_same_release_and_seed_give_the_same_bytes(imported, release_dir, tmp_path):
    """Also with two worker processes instead of one."""
    again = run_import(
        ImportConfig(source=str(release_dir), out=tmp_path / "splice", seed=3, workers=2)
    )
    assert tree_digest(again.out) == tree_digest(imported.out)
    other = run_import(ImportConfig(source=str(release_dir), out=tmp_path / "seed4", seed=4))
    orders = [
        {
            r[sd.VIDEO_ID]: r[sd.ANSWER]["order"]
            for r in datasets.load_dataset(str(o), "text")[sd.SPLIT]
        }
        for o in (imported.out, other.out)
    ]
    assert orders[0] != orders[1] and other.problems == []
    # an import has its build identity too: the same for the same bytes, another seed's other
    ids = [read_card(o).build_id for o in (imported.out, again.out, other.out)]
    assert len(ids[0]) == 64 and ids[0] == ids[1] != ids[2]
    assert not list(tmp_path.glob(".*import*"))  # the import's scratch folder is gone


def test_publish_uploads_the_manifest_the_validator_needs(imported, capsys):
    from splice_build.remote.upload_plan import plan_upload

    uploaded = {f.path_in_repo for f in plan_upload(imported.out)}
    assert MANIFEST in uploaded and "README.md" in uploaded
    assert (
        main(
            [
                "publish",
                str(imported.out),
                "--repo-id",
                "me/splice-release",
                "--dry-run",
                "--code-url",
                "https://github.com/me/splice",
            ]
        )
        == 0
    )
    assert MANIFEST in capsys.readouterr().out


def test_a_clip_failing_validation_costs_its_video_and_leaves_the_manifest_true(
    release_dir, tmp_path, monkeypatch
):
    """The shared tail drops a video whose clips fail `splice validate` and writes the rest
    again; for an import the manifest is rendered again too, without that video."""
    import dataclasses

    original = convert.import_video

    def miscounted(entry, *args, **kwargs):
        video = original(entry, *args, **kwargs)
        if entry.video_id != BFRAMES:
            return video
        first, *rest = video.cut.clips
        clips = (dataclasses.replace(first, num_frames=first.num_frames + 1), *rest)
        return dataclasses.replace(video, cut=dataclasses.replace(video.cut, clips=clips))

    monkeypatch.setattr(convert, "import_video", miscounted)
    out = tmp_path / "o"
    args = ["import-release", str(release_dir), "--out", str(out), "--workers", "1"]
    assert main(args) == 1  # like `splice build`: usable, but a video was dropped
    assert validate.validate(out) == []
    status = {v["video_id"]: v for v in load_report(out)["videos"]}
    assert status[BFRAMES]["status"] == "skipped" and status[BFRAMES]["stage"] == "validate"
    assert "records" in status[BFRAMES]["reason"]
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    assert sorted(manifest["clips"]) == sorted(IMPORTED - {BFRAMES})
    assert not any(BFRAMES in f["path"] for f in manifest["files"])
    assert "13 remuxed, 2 re-encoded" in (out / "README.md").read_text("utf-8")


def test_out_is_guarded_like_a_builds(release_dir, imported, tmp_path, capsys):
    """A previous import is replaced; a folder that is not a build's is refused; an import
    of no video writes nothing."""
    out = Path(shutil.copytree(imported.out, tmp_path / "splice"))  # a previous import: seed 3
    args = [
        "import-release",
        str(release_dir),
        "--out",
        str(out),
        "--workers",
        "1",
        "--no-progress",
    ]
    first = json.loads((out / MANIFEST).read_text("utf-8"))
    assert main([*args, "--seed", "2"]) == 0  # the manifest is the import's own file
    assert json.loads((out / MANIFEST).read_text("utf-8"))["clips"] != first["clips"]
    (out / "predictions.jsonl").write_text("{}\n", "utf-8")
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"splice import-release: --out {out}: ") and "predictions.jsonl" in err
    assert "nothing was changed" in err and err.count("\n") == 1
    assert (out / "predictions.jsonl").exists() and (out / MANIFEST).exists()

    lone = tmp_path / "lone"
    write_part(lone / SEGMENTS_DIR / "00" / f"{UNKNOWN}_part_1.mp4", 1)
    fresh = tmp_path / "fresh"
    assert main(["import-release", str(lone), "--out", str(fresh), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("splice import-release: no video imported: all 1 video of the release")
    assert f"{UNKNOWN}: not in the annotations" in err and err.count("\n") == 1
    assert not fresh.exists() and not list(tmp_path.glob(".fresh*"))


def test_a_linked_sub_folder_is_read_and_a_broken_link_is_said(tmp_path, capsys):
    """A release sub-folder that is a symlink (issue 21, wall 7) was skipped silently: its
    video lost parts, nothing said why, exit 0. It is followed, as ``splice build`` follows
    a linked folder of --videos; a link that leads nowhere is named with why, and a link
    back into the release is read once."""
    release = tmp_path / "release"
    seg = release / SEGMENTS_DIR
    elsewhere = tmp_path / "other-disk" / "01"
    for k in range(1, 6):
        write_part((seg / "00" if k in (1, 2, 4) else elsewhere) / f"{SPREAD}_part_{k}.mp4", k)
    (seg / "01").symlink_to(elsewhere, target_is_directory=True)
    (seg / "09").symlink_to(tmp_path / "unmounted" / "09", target_is_directory=True)
    (seg / "00" / "again").symlink_to(seg / "00", target_is_directory=True)
    out = tmp_path / "splice"
    code = main(["import-release", str(release), "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    report = load_report(out)
    assert [(v["video_id"], v["status"], v["num_clips"]) for v in report["videos"]] == [
        (SPREAD, "included", 5)
    ]
    (broken,) = [w for w in report["warnings"] if "09" in w]
    assert f"{SEGMENTS_DIR}/09" in broken and "does not exist" in broken, broken
    assert "Errno" not in broken and "Error" not in broken
    assert f"{SEGMENTS_DIR}/09" in printed
    assert main(["validate", str(out)]) == 0


def test_the_import_proves_its_clips_by_the_digests_its_workers_checked(
    release_dir, tmp_path, capsys
):
    """Its workers decode every clip in full and hand over the digest of the bytes they
    checked (`ImportedVideo.checked`): the import's own validation decodes none again."""
    out = tmp_path / "o"
    assert main(["import-release", str(release_dir), "--out", str(out), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert f"validated {_clips(out)} clips (0 decoded, the rest by digest)" in err
    assert validate.validate(out) == []


def test_a_digest_its_worker_did_not_check_is_not_trusted(release_dir, tmp_path, monkeypatch):
    """A worker's record whose digest is not the one of the bytes embedded: the clip is
    decoded and held to the manifest, and its video dropped with why."""
    import dataclasses

    original = convert.import_video

    def edited(entry, *args, **kwargs):
        video = original(entry, *args, **kwargs)
        if entry.video_id != BFRAMES:
            return video
        first, *rest = video.checked
        checked = (dataclasses.replace(first, sha256="0" * 64), *rest)
        return dataclasses.replace(video, checked=checked)

    monkeypatch.setattr(convert, "import_video", edited)
    out = tmp_path / "o"
    args = ["import-release", str(release_dir), "--out", str(out), "--workers", "1"]
    assert main(args) == 1
    assert validate.validate(out) == []
    status = {v["video_id"]: v for v in load_report(out)["videos"]}
    assert status[BFRAMES]["status"] == "skipped" and status[BFRAMES]["stage"] == "validate"
    assert "its worker checked" in status[BFRAMES]["reason"]


def _clips(out: Path) -> int:
    return sum(len(c) for c in json.loads((out / MANIFEST).read_text("utf-8"))["clips"].values())


def test_ctrl_c_during_an_import_is_one_line_exit_130(release_dir, tmp_path):
    """Issue 31, wall 2: Ctrl-C during ``splice import-release`` printed a traceback through
    ``executors.py`` (the import had no handler, nor had the dispatcher). The terminal's
    SIGINT to the whole group now ends it with one line and exit 130, as ``splice build``
    does, the output never made and the import's work folder removed."""
    out = tmp_path / "o"
    work = out.with_name(f".{out.name}.import-work")
    cmd = [sys.executable, "-m", "splice_build.cli", "import-release", str(release_dir),
           "--out", str(out), "--workers", "2", "--no-progress"]  # fmt: skip
    done = interrupt_when(cmd, lambda: any(work.rglob("*.mp4")))  # once a clip is written
    stderr = done.stderr
    assert done.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0] == "splice import-release: interrupted", lines[0]
    assert not out.exists() and not work.exists()
