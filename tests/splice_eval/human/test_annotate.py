"""The human protocol: assignment, export, filled sheets (good, conflicting, malformed),
ingest rules, inter-annotator agreement, and a curation file applied by a rebuild."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_build.stages import select
from splice_eval.builddata import iter_rows, read_meta
from splice_eval.human import annotate, sheets
from splice_eval.human.annotate import Assignment, HumanAnswer
from splice_eval.human.sheets import SheetError
from splice_eval.predictions import read_metadata, read_predictions
from splice_eval.run import sampling
from splice_metric.splice_metric import score

# --- assignment -----------------------------------------------------------------------


def test_assignment_follows_the_team_protocol():
    counts = {f"v{i:02d}": 2 + i % 6 for i in range(24)}
    names = ["A1", "B1", "A2", "B2"]
    assignments = annotate.assign(counts, names, seed=3)
    assert assignments == annotate.assign(counts, names, seed=3)
    assert len({a.folder for a in assignments}) == len(assignments) == 48
    teams = {"A1": 0, "B1": 0, "A2": 1, "B2": 1}
    by_video: dict[str, list[Assignment]] = {}
    for a in assignments:
        by_video.setdefault(a.video_id, []).append(a)
        assert sorted(a.parts) == list(range(1, counts[a.video_id] + 1))
        assert teams[a.annotator] == a.team
    for pair in by_video.values():
        # both annotators of one team, once per modality, flipped between them
        assert len(pair) == 2
        assert {a.annotator for a in pair} in ({"A1", "B1"}, {"A2", "B2"})
        assert sorted(a.config for a in pair) == ["video", "video_text"]
    per = Counter((a.annotator, a.config) for a in assignments)
    # everyone orders both modalities, in equal shares
    assert set(per.values()) == {6}
    # the teams split the videos evenly
    assert Counter(a.team for a in assignments) == {0: 24, 1: 24}


def test_assignment_rejects_bad_annotator_lists():
    with pytest.raises(ValueError, match="even number"):
        annotate.assign({"v": 2}, ["A", "B", "C"])
    with pytest.raises(ValueError, match="distinct"):
        annotate.assign({"v": 2}, ["A", "A"])
    with pytest.raises(ValueError, match="letters"):
        annotate.assign({"v": 2}, ["A", "B/../x"])


# --- sheets ---------------------------------------------------------------------------


def _key() -> dict[int, Assignment]:
    return {
        1: Assignment(1, "A1", 0, "vidA", "video", (3, 1, 2)),
        2: Assignment(2, "A1", 0, "vidB", "video_text", (2, 1)),
        3: Assignment(3, "B1", 0, "vidA", "video_text", (2, 3, 1)),
        4: Assignment(4, "B1", 0, "vidB", "video", (1, 2)),
    }


def _sheet(path: Path, rows: list[tuple[str, str]], header=("folder", "order")) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.mark.parametrize(
    "cell,expected",
    [
        ("[2, 3, 1]", (False, (2, 3, 1))),
        (" [2,3,1] ", (False, (2, 3, 1))),
        ("unk", (True, None)),
        ("UNK", (True, None)),
        ("unk [3, 1, 2]", (True, (3, 1, 2))),
    ],
)
def test_parse_cell(cell, expected):
    assert sheets.parse_cell(cell) == expected


@pytest.mark.parametrize(
    "rows,header,message",
    [
        ([("1", "[1, 2, 3]")], ("video", "order"), r"x\.csv:1: header"),
        ([("1", "[1, 2, 3]"), ("one", "[1, 2]")], None, r"x\.csv:3: folder 'one' is not a number"),
        ([("1", "2 3 1")], None, r"x\.csv:2: folder 1: order '2 3 1' is not like"),
        ([("1", "maybe")], None, r"x\.csv:2: folder 1: order 'maybe'"),
        ([("1", "")], None, r"x\.csv:2: folder 1 has no order"),
        ([("1", "[1, 2, 3]", "extra")], None, r"x\.csv:2: expected 2 fields"),
        (
            [("1", "[1, 2, 3]"), ("2", "[1, 2]"), ("1", "[3, 2, 1]")],
            None,
            r"x\.csv:4: folder 1 already answered at .*x\.csv:2",
        ),
    ],
)
def test_malformed_sheets_name_file_and_line(tmp_path, rows, header, message):
    path = _sheet(tmp_path / "x.csv", rows, header or ("folder", "order"))
    with pytest.raises(SheetError, match=message):
        sheets.read_sheet(path)


def test_answers_are_checked_against_the_key(tmp_path):
    key = _key()
    bad_perm = _sheet(tmp_path / "a.csv", [("1", "[1, 1, 2]")])
    with pytest.raises(SheetError, match=r"a\.csv:2: folder 1 has parts 1\.\.3"):
        annotate.check_answers([bad_perm], key, partial=True)
    short = _sheet(tmp_path / "b.csv", [("2", "[1]")])
    with pytest.raises(SheetError, match=r"b\.csv:2: folder 2 has parts 1\.\.2"):
        annotate.check_answers([short], key, partial=True)
    unknown = _sheet(tmp_path / "c.csv", [("9", "[1, 2]")])
    with pytest.raises(SheetError, match=r"c\.csv:2: folder 9 is not in the export key"):
        annotate.check_answers([unknown], key, partial=True)
    # the same folder answered in two sheets: a conflict, named with both places
    s1 = _sheet(tmp_path / "d.csv", [("1", "[1, 2, 3]")])
    s2 = _sheet(tmp_path / "e.csv", [("1", "[3, 2, 1]")])
    with pytest.raises(SheetError, match=r"e\.csv:2: folder 1 also answered at .*d\.csv:2"):
        annotate.check_answers([s1, s2], key, partial=True)
    # missing folders are an error unless partial
    with pytest.raises(SheetError, match=r"no answer for folder\(s\) 2, 3, 4"):
        annotate.check_answers([s1], key)


def test_answers_map_back_to_dataset_labels(tmp_path):
    key = _key()
    sheet = _sheet(
        tmp_path / "s.csv",
        [("1", "[2, 3, 1]"), ("2", "unk [2, 1]"), ("3", "unk"), ("4", "[1, 2]")],
    )
    answers = {a.assignment.folder: a for a in annotate.check_answers([sheet], key)}
    # folder 1 shows labels (3, 1, 2) as parts 1..3: parts [2, 3, 1] are labels [1, 2, 3]
    assert answers[1].labels == (1, 2, 3) and not answers[1].unk
    assert answers[2].labels == (1, 2) and answers[2].unk  # best guess kept
    assert answers[3].labels is None and answers[3].unk
    assert answers[4].labels == (1, 2)


def _answer(folder, vid, config, annotator, unk, labels):
    a = Assignment(folder, annotator, 0, vid, config, tuple(range(1, 4)))
    return HumanAnswer(a, unk, labels, "x", f"s.csv:{folder}")


def _answered_twice(*videos) -> list[HumanAnswer]:
    """Each video answered by A on ``video`` and by B on ``video_text``, in folders 1, 2, ...
    in turn: ``videos`` are (video id, A's (unk, labels), B's (unk, labels))."""
    answers = []
    for vid, by_a, by_b in videos:
        for config, annotator, (unk, labels) in (("video", "A", by_a), ("video_text", "B", by_b)):
            answers.append(_answer(len(answers) + 1, vid, config, annotator, unk, labels))
    return answers


def test_ingest_rules():
    answers = _answered_twice(
        ("both", (False, (1, 2, 3)), (False, (1, 2, 3))),  # both ordered
        # one unk: the other's order stands, the video stays
        ("one", (True, (2, 1, 3)), (False, (1, 2, 3))),
        # both unk: inconclusive, even with best guesses
        ("none", (True, (3, 2, 1)), (True, None)),
    )
    decisions = {d.video_id: d for d in annotate.decide(answers)}
    assert decisions["both"].keep and decisions["one"].keep
    assert not decisions["none"].keep
    assert "inconclusive" in decisions["none"].reason
    assert "unk by A" in decisions["one"].reason

    preds = annotate.human_predictions(answers)
    video = {p.video_id: p for p in preds["video"]}
    text = {p.video_id: p for p in preds["video_text"]}
    assert video["one"].order == [2, 1, 3]  # best guess kept as the prediction
    assert video["none"].order == [3, 2, 1]
    assert text["none"].order is None  # a bare unk is an invalid prediction
    assert video["both"].model == "human" and video["both"].extra["annotator"] == "A"


def test_agreement_numbers():
    answers = _answered_twice(
        ("v1", (False, (1, 2, 3)), (False, (1, 2, 3))),
        ("v2", (False, (1, 2, 3)), (False, (2, 1, 3))),
        ("v3", (True, (1, 3, 2)), (True, None)),
        ("v4", (True, (3, 2, 1)), (False, (3, 2, 1))),
    )
    agree = annotate.agreement(answers)
    assert agree["videos_with_two_answers"] == 4
    assert (agree["both_unk"], agree["both_ordered"], agree["one_unk"]) == (1, 2, 1)
    assert agree["unk_decision_agreement"] == pytest.approx(0.75)
    # p_o = 0.75; A unk 2/4, B unk 1/4: p_e = 0.5*0.25 + 0.5*0.75 = 0.5; kappa = 0.5
    assert agree["unk_decision_kappa"] == pytest.approx(0.5)
    # orders compared where both exist (best guesses included): v1, v2, v4
    assert agree["orders_compared"] == 3
    assert agree["order_agreement"]["binary_accuracy"] == pytest.approx(2 / 3)
    assert agree["order_agreement"]["hamming_accuracy"] == pytest.approx((1 + 1 / 3 + 1) / 3)


def test_curation_file_is_read_by_the_build(tmp_path):
    decisions = [
        annotate.Decision("vidA", True, "ordered by A1 (video), B1 (video_text)"),
        annotate.Decision("vidB", False, "inconclusive: unk by A1 (video), B1 (video_text)"),
    ]
    path = annotate.write_curation(tmp_path / "curation.csv", decisions)
    loaded = select.load_curation(path)
    assert loaded["vidA"].decision == "include"
    assert loaded["vidB"].decision == "exclude"
    assert "inconclusive" in loaded["vidB"].reason


# --- the whole protocol on the demo build ---------------------------------------------


def _decode(path: Path) -> np.ndarray:
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(video=0)])


def _fill(key: dict[int, Assignment], orders: dict[str, list[int]], rules) -> dict[str, list]:
    """Sheets as annotators would fill them: the true order, or what `rules` says."""
    rows: dict[str, list] = {}
    for a in key.values():
        truth = orders[a.video_id]
        parts = [a.parts.index(label) + 1 for label in truth]  # true order as part numbers
        cell = rules(a, parts) or f"[{', '.join(map(str, parts))}]"
        rows.setdefault(a.annotator, []).append((str(a.folder), cell))
    return rows


def test_export_ingest_and_rebuild_on_demo(demo_build, tmp_path):
    pkg = tmp_path / "packages"
    code = splice_main(["annotate", "export", str(demo_build), "--out", str(pkg), "--seed", "1"])
    assert code == 0
    key = annotate.read_key(pkg / annotate.KEY_NAME)
    meta = read_meta(demo_build)
    assert {a.video_id for a in key.values()} == set(meta)
    assert len(key) == 2 * len(meta)

    _check_sheets(pkg, key)
    _check_parts(pkg, key, demo_build)

    # Fill the sheets: everything right, except
    # - the first video: both annotators write unk (inconclusive -> excluded by the rebuild)
    # - the second video: its video_text annotator writes unk with a reversed best guess
    # - the third video: its video annotator gets it wrong (reversed)
    vids = sorted(meta)
    orders = {v: list(m.order) for v, m in meta.items()}

    def rules(a: Assignment, parts: list[int]) -> str | None:
        if a.video_id == vids[0]:
            return "unk"
        if a.video_id == vids[1] and a.config == "video_text":
            return f"unk {list(reversed(parts))}"
        if a.video_id == vids[2] and a.config == "video":
            return str(list(reversed(parts)))
        return None

    sheets = []
    for name, lines in _fill(key, orders, rules).items():
        sheets.append(_sheet(pkg / name / "sheet.csv", lines))
    out = tmp_path / "human"
    assert splice_main(["annotate", "ingest", *map(str, sheets), "--out", str(out)]) == 0

    curation = select.load_curation(out / "curation.csv")
    assert curation[vids[0]].decision == "exclude"
    assert all(curation[v].decision == "include" for v in vids[1:])
    summary = json.loads((out / "agreement.json").read_text())
    assert summary["inconclusive"] == 1 and summary["kept"] == len(vids) - 1
    assert summary["agreement"]["both_unk"] == 1

    _check_human_baseline(out, vids, orders)

    # a malformed sheet fails the command with file and line
    bad = _sheet(tmp_path / "bad.csv", [("1", "[1, 2")])
    assert (
        splice_main(
            [
                "annotate",
                "ingest",
                str(bad),
                "--key",
                str(pkg / "key.json"),
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )

    # rebuild the demo with the curation file: the inconclusive video is gone
    result = _rebuild_demo(demo_build, tmp_path, out / "curation.csv")
    assert not result.problems
    rebuilt = read_meta(tmp_path / "curated")
    assert set(rebuilt) == set(vids[1:])
    assert rebuilt[vids[1]].order == meta[vids[1]].order  # shuffles depend on (seed, id) only
    report = json.loads((tmp_path / "curated" / "build_report.json").read_text())
    assert vids[0] in json.dumps(report) and "inconclusive" in json.dumps(report)


def _check_sheets(pkg: Path, key: dict[int, Assignment]) -> None:
    """Each annotator's instructions mention unk and the sheet lists exactly their folders."""
    for name in ("A1", "B1", "A2", "B2"):
        assert "unk" in (pkg / name / "INSTRUCTIONS.md").read_text()
        with (pkg / name / "sheet.csv").open() as fh:
            sheet = list(csv.reader(fh))
        assert sheet[0] == ["folder", "order"]
        assert {int(r[0]) for r in sheet[1:]} == {f for f, a in key.items() if a.annotator == name}


def _check_parts(pkg: Path, key: dict[int, Assignment], demo_build: Path) -> None:
    """Each folder holds the video's clips, shuffled: the clip itself (video) or with its
    caption burned into a band below (video_text)."""
    rows = {
        r[schema.VIDEO_ID]: r
        for r in iter_rows(demo_build, "video_text", [schema.VIDEO_ID, schema.CLIPS])
    }
    for a in key.values():
        folder = pkg / a.annotator / annotate.MODALITY_DIRS[a.config] / str(a.folder)
        files = sorted(p.name for p in folder.iterdir())
        assert files == [f"random_part_{k}.mp4" for k in range(1, len(a.parts) + 1)]
        clips = rows[a.video_id][schema.CLIPS]
        for k, label in enumerate(a.parts, 1):
            part = folder / f"random_part_{k}.mp4"
            original = clips[label - 1]["bytes"]
            if a.config == "video":
                assert part.read_bytes() == original
            else:
                burned, plain = (
                    _decode(part),
                    sampling.sample_frames(original, num_frames=1, long_side=None).frames,
                )
                h, w = plain.shape[1:3]
                assert burned.shape[2] >= w and burned.shape[1] > h  # caption band below
                band = burned[0, h + 1 :, :w]
                assert band.std() > 20  # white text on black: not an empty band


def _check_human_baseline(out: Path, vids: list[str], orders: dict[str, list[int]]) -> None:
    """The human baseline, scored with the metric like any model."""
    for config in annotate.MODALITIES:
        preds = {p.video_id: p for p in read_predictions(out / f"human_{config}.jsonl")}
        assert set(preds) == set(vids)
        produced = read_metadata(out / f"human_{config}.jsonl")
        assert produced["producer"] == "splice annotate ingest"
        assert produced["model"] == "human" and produced["config"] == config
        assert produced["annotators"] == sorted({p.extra["annotator"] for p in preds.values()})
        assert len(produced["build_id"]) == 64  # the exported build's, through the key
        kept = vids[1:]
        result = score([preds[v].order for v in kept], [orders[v] for v in kept])
        wrong = 1  # second video's video_text best guess, or third video's video answer
        assert result["binary_accuracy"] == pytest.approx((len(kept) - wrong) / len(kept))


def _rebuild_demo(demo_build: Path, tmp_path: Path, curation: Path):
    """The demo built again from a copy of its work folder, with ``curation`` applied."""
    from splice_build.demo.present import CUTS_DIR, SOURCES_DIR
    from splice_build.demo.run import demo_annotations_path
    from splice_build.running.pipeline import BuildConfig, run_build

    work = tmp_path / "work"
    shutil.copytree(demo_build.parent / "work", work)
    return run_build(
        BuildConfig(
            annotations=demo_annotations_path(),
            videos=work / SOURCES_DIR,
            out=tmp_path / "curated",
            work=work / CUTS_DIR,
            workers=1,
            curation=curation,
            stand_in=True,
            progress=False,
        )
    )
