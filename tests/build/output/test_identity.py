"""One identity per build (`splice_build.output.identity`), recorded by everything made on
a build and checked downstream: a perfect model's answers on one build are refused by
``splice run`` (resume), ``splice score`` and ``splice report`` against a rebuild under
another seed, with both builds named; against their own build they still score 1.0."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_build.demo.run import build_demo
from splice_build.output.card_reader import read_card
from splice_eval.predictions import read_metadata, read_predictions
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.lmms_tasks import docs, load_utils
from tests.support.read_only import read_only
from tests.support.scripted_runs import oracle, rows_of

HEX64 = re.compile(r"^[0-9a-f]{64}$")


@pytest.fixture(scope="module")
def reseeded(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo rebuilt with seed 1 from a copy of its work folder (its cuts reused)."""
    root = tmp_path_factory.mktemp("seed1")
    shutil.copytree(demo_build.parent / "work", root / "work")
    return build_demo(out_dir=root / "splice", work_dir=root / "work", workers=1, seed=1)


def short(build: Path) -> str:
    return read_card(build).build_id[:16]


def run_oracle(data: Path, rows: list[dict], out: Path, capsys) -> tuple[int, str]:
    with FakeOpenAIServer(oracle(rows)) as server:
        argv = ["run", "--endpoint", server.url, "--model", "oracle", "--config", "text"]
        code = splice_main([*argv, "--data", str(data), "--out", str(out)])
    return code, capsys.readouterr().err


def score(args: list[str], capsys) -> tuple[int, str, str]:
    code = splice_main(["score", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_card_records_one_identity_per_build(demo_build, reseeded):
    ids = [read_card(b).build_id for b in (demo_build, reseeded)]
    assert all(HEX64.match(i) for i in ids) and ids[0] != ids[1]
    card = read_card(demo_build)
    assert card.seed == 0 and read_card(reseeded).seed == 1
    assert set(card.splice_build["config_digests"]) == set(schema.WRITTEN_CONFIGS)
    assert all(
        name.split("/")[0] in schema.WRITTEN_CONFIGS for name in card.splice_build["shard_digests"]
    )


def test_the_identity_follows_the_rows_not_the_bytes(demo_build, tmp_path):
    """The same rows written again (another compression: other bytes) keep the identity;
    one caption changed changes it."""
    import pyarrow.parquet as pq

    from splice_build.output.writing.shards import WriteResult, shard_info

    out = tmp_path / "copy"
    shutil.copytree(demo_build, out)

    def digests():
        shards = {
            c: tuple(shard_info(p) for p in schema.shard_files(out, c)[schema.SPLIT])
            for c in schema.WRITTEN_CONFIGS
        }
        return WriteResult(out, schema.SPLIT, shards, ()).digests()

    before = digests()
    assert before.build_id == read_card(demo_build).build_id
    text = schema.shard_files(out, "text")[schema.SPLIT][0]
    table = pq.read_table(text)
    old = text.read_bytes()
    pq.write_table(table, text, compression="gzip")
    assert text.read_bytes() != old and digests().build_id == before.build_id
    rows = table.to_pylist()
    rows[0][schema.CAPTIONS] = [*rows[0][schema.CAPTIONS][:-1], "another caption"]
    pq.write_table(table.from_pylist(rows, schema=table.schema), text)
    after = digests()
    assert after.build_id != before.build_id
    assert [n for n in after.shards if after.shards[n] != before.shards[n]] == [f"text/{text.name}"]


def test_a_perfect_models_file_is_refused_on_a_rebuild_under_another_seed(
    demo_build, reseeded, tmp_path, capsys
):
    rows = rows_of(demo_build, "text")
    out = tmp_path / "oracle.jsonl"
    code, _ = run_oracle(demo_build, rows, out, capsys)
    assert code == 0
    assert read_metadata(out)["build_id"] == read_card(demo_build).build_id
    own, other = short(demo_build), short(reseeded)

    # splice run: the same command on the rebuild refuses to resume, naming both builds
    code, err = run_oracle(reseeded, rows, out, capsys)
    assert code == 2 and own in err and other in err and "another --out" in err
    assert len(read_predictions(out)) == len(rows)  # the file is untouched

    # splice score: 1.0 on its own build, refused on the other, scored when overridden
    code, text, _ = score(
        [str(out), "--data", str(demo_build), "--json", str(tmp_path / "s.json")], capsys
    )
    assert code == 0 and "note:" not in text
    result = json.loads((tmp_path / "s.json").read_text())
    assert result["runs"][0]["binary_accuracy"] == 1.0
    assert result["build_id"] == read_card(demo_build).build_id
    code, _, err = score([str(out), "--data", str(reseeded)], capsys)
    assert code == 2 and own in err and other in err and "--allow-other-build" in err
    code, text, _ = score([str(out), "--data", str(reseeded), "--allow-other-build"], capsys)
    assert code == 0 and "SCORED AGAINST ANOTHER BUILD" in text and own in text and other in text

    # splice report: the same
    code = splice_main(
        ["report", str(out), "--data", str(demo_build), "--out", str(tmp_path / "r0")]
    )
    assert code == 0 and "Build check" not in (tmp_path / "r0" / "report.md").read_text()
    code = splice_main(["report", str(out), "--data", str(reseeded), "--out", str(tmp_path / "r1")])
    err = capsys.readouterr().err
    assert code == 2 and own in err and other in err
    assert not (tmp_path / "r1").exists()
    argv = ["report", str(out), "--data", str(reseeded), "--out", str(tmp_path / "r2")]
    assert splice_main([*argv, "--allow-other-build"]) == 0
    printed = capsys.readouterr().out
    report = (tmp_path / "r2" / "report.md").read_text()
    for said in (printed, report):
        assert "SCORED AGAINST ANOTHER BUILD" in said and own in said and other in said


def test_a_file_without_identity_is_scored_with_one_line_saying_so(demo_build, tmp_path, capsys):
    rows = rows_of(demo_build, "text")
    out = tmp_path / "theirs.jsonl"
    lines = [
        json.dumps({"video_id": r[schema.VIDEO_ID], "order": r[schema.ANSWER]["order"]})
        for r in rows
    ]
    out.write_text("\n".join(lines) + "\n")
    code, text, _ = score([str(out), "--data", str(demo_build)], capsys)
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert code == 0 and len(notes) == 1
    assert "records no build identity" in notes[0] and str(out) in notes[0]


def test_a_run_stopped_early_is_not_finished_on_a_rebuild(demo_build, reseeded, tmp_path, capsys):
    """The issue's mixed file: a run stopped by --limit, then finished after a rebuild."""
    rows = rows_of(demo_build, "text")
    out = tmp_path / "half.jsonl"
    with FakeOpenAIServer(oracle(rows)) as server:
        argv = ["run", "--endpoint", server.url, "--model", "oracle", "--config", "text"]
        assert (
            splice_main([*argv, "--data", str(demo_build), "--out", str(out), "--limit", "2"]) == 0
        )
        assert splice_main([*argv, "--data", str(reseeded), "--out", str(out)]) == 2
    assert len(read_predictions(out)) == 2


def test_baselines_and_lmms_samples_carry_the_identity(demo_build, tmp_path, monkeypatch):
    out = tmp_path / "random.jsonl"
    argv = ["baseline", "random", "--data", str(demo_build), "--config", "text"]
    assert splice_main([*argv, "--out", str(out)]) == 0
    assert read_metadata(out)["build_id"] == read_card(demo_build).build_id

    utils = load_utils()
    monkeypatch.setenv(utils.DATA_ENV, str(demo_build))
    row = rows_of(demo_build, "text")[0]
    record = utils.process_results(row, ["<order>Video 1, Video 2</order>"])["binary_accuracy"]
    assert record["build_id"] == read_card(demo_build).build_id
    logged = tmp_path / "samples.jsonl"
    logged.write_text(json.dumps({"doc_id": 0, "binary_accuracy": record}) + "\n")
    from splice_eval.scoring.runs import read_runs

    (run,) = read_runs([logged], per_file=True)
    assert run.sources[0].build_id == read_card(demo_build).build_id


def test_lmms_clip_and_probe_files_follow_the_clips_content(
    demo_build, reseeded, tmp_path, monkeypatch
):
    """One clip cache and one frame cache shared by two builds with the same video ids and
    other clips under each label (a rebuild under another seed): every clip file holds its
    row's bytes, and each probe file was made from one clip's content only."""
    import hashlib

    from splice_eval.run import frame_cache

    utils = load_utils()
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(tmp_path / "clips"))
    monkeypatch.setenv(frame_cache.CACHE_ENV, str(tmp_path / "frames"))
    made_from: dict[str, set[str]] = {}
    by_label: dict[tuple[str, int], set[str]] = {}
    for build in (demo_build, reseeded):
        raw = {r[schema.VIDEO_ID]: r for r in rows_of(build, "video")}
        for doc in docs(build, "video", utils)[:3]:
            clips = [c["bytes"] for c in raw[doc[schema.VIDEO_ID]][schema.CLIPS]]
            assert [Path(p).read_bytes() for p in doc[schema.CLIPS]] == clips
            for label, (clip, path) in enumerate(
                zip(clips, utils.probed_visual(doc, "reversed"), strict=True), 1
            ):
                digest = hashlib.sha256(clip).hexdigest()
                made_from.setdefault(path, set()).add(digest)
                by_label.setdefault((doc[schema.VIDEO_ID], label), set()).add(digest)
    assert any(len(d) > 1 for d in by_label.values())  # names alone would have collided
    assert all(len(d) == 1 for d in made_from.values())


def test_an_unwritable_lmms_clip_cache_fails_no_doc(demo_build, tmp_path, monkeypatch, capsys):
    utils = load_utils()
    cache = tmp_path / "clips"
    cache.mkdir()
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(cache))
    raw = {r[schema.VIDEO_ID]: r for r in rows_of(demo_build, "video")}
    with read_only(cache):
        made = docs(demo_build, "video", utils)[:2]
    for doc in made:
        clips = [c["bytes"] for c in raw[doc[schema.VIDEO_ID]][schema.CLIPS]]
        assert [Path(p).read_bytes() for p in doc[schema.CLIPS]] == clips
        assert not any(Path(p).is_relative_to(cache) for p in doc[schema.CLIPS])
    said = [line for line in capsys.readouterr().err.splitlines() if "cannot be written" in line]
    assert len(said) == 1 and str(cache) in said[0]


def test_a_hub_id_run_records_and_checks_the_cards_identity(
    demo_build, reseeded, tmp_path, capsys, monkeypatch
):
    """``--data ORG/NAME`` (here from the Hub cache, offline): `splice run` reads the card
    of the Hub's build for its identity like a folder's, and `score` checks it the same way."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    commit = "0" * 40
    repo = cache / "datasets--org--splice"
    shutil.copytree(demo_build, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "hub.jsonl"
    rows = rows_of(demo_build, "text")
    with FakeOpenAIServer(oracle(rows)) as server:
        argv = ["run", "--endpoint", server.url, "--model", "oracle", "--config", "text"]
        assert splice_main([*argv, "--data", "org/splice", "--out", str(out)]) == 0
    assert read_metadata(out)["build_id"] == read_card(demo_build).build_id
    code, text, _ = score([str(out), "--data", "org/splice"], capsys)
    assert code == 0 and "note:" not in text
    code, _, err = score([str(out), "--data", str(reseeded)], capsys)
    assert code == 2 and short(demo_build) in err and short(reseeded) in err
