"""``splice download --source NAME`` for the YouTube-hosted sources (CrossTask, YouCook2,
HT-Step) against a mirror on 127.0.0.1: the videos fetched are exactly the ones ``splice
build --source NAME`` selects from the same files (the adapter's entries, its rules
applied), and land where the build looks. Goal-Step (Ego4D's licence) and ``steps`` (a
lab's own footage) are local only: refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from splice_build import cli
from splice_build.remote.download_report import REPORT_JSON
from splice_build.stages import select, sources
from tests.build.sources.test_crosstask import write_release as write_crosstask
from tests.build.sources.test_goalstep import write_file as write_goalstep
from tests.build.sources.test_htstep import write_release as write_htstep
from tests.build.sources.test_steps import write_csv as write_steps
from tests.build.sources.test_youcook2 import write_release as write_youcook2
from tests.support.mirror_server import Item, Mirror
from tests.support.source_builds import render_standins

FETCHED = {"crosstask": write_crosstask, "youcook2": write_youcook2, "htstep": write_htstep}
LOCAL = {"goalstep": write_goalstep, "steps": write_steps}


def _download(source: str, annotations: Path, out: Path, template: str, *extra: str) -> int:
    return cli.main(
        [
            "download", "--source", source, "--annotations", str(annotations),
            "--out", str(out), "--url-template", template, "--sleep", "0", "--retries", "0",
            "--timeout", "2", "--no-progress", *extra,
        ]
    )  # fmt: skip


@pytest.mark.parametrize("source", sorted(FETCHED))
def test_download_fetches_what_the_build_selects(source, tmp_path, capsys):
    annotations = FETCHED[source](tmp_path / "release")
    _, selection = select.select_annotations(annotations, source=source)
    wanted = sorted(e.video_id for e in selection.selected)
    assert wanted  # each fixture keeps videos, and skips others by its rules
    served = tmp_path / "served"  # footage as long as each video's steps (the checks probe it)
    render_standins(source, annotations, served)
    out = tmp_path / "videos"
    with Mirror({vid: Item(served / f"{vid}.mp4") for vid in wanted}) as mirror:
        assert _download(source, annotations, out, mirror.url + "/{video_id}") == 0
        asked = sorted(hit.path.rsplit("/", 1)[-1] for hit in mirror.hits if hit.method == "GET")
    assert sorted(set(asked)) == wanted  # nothing a rule skipped was fetched
    report = json.loads((out / REPORT_JSON).read_text("utf-8"))["videos"]
    assert {v["video_id"]: v["status"] for v in report} == dict.fromkeys(wanted, "downloaded")
    index = sources.index_sources(out)
    for vid in wanted:
        assert index.lookup(vid).paths, vid  # where `splice build --videos` looks
    assert f"available {len(wanted)}/{len(wanted)}" in capsys.readouterr().out


@pytest.mark.parametrize("source", sorted(LOCAL))
def test_local_only_sources_refuse_download_in_one_line(source, tmp_path, capsys):
    annotations = LOCAL[source](tmp_path / "release")
    out = tmp_path / "videos"
    assert _download(source, annotations, out, "http://127.0.0.1:9/{video_id}") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"splice download: --source {source}: nothing to download: ")
    assert "\n" not in err and not out.exists()
    assert ("Ego4D licence" in err) == (source == "goalstep")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--layout", "coin"], "--layout coin: COIN's"),
        (["--url-template", "http://127.0.0.1:9/{recipe_type}/{video_id}"], "{recipe_type}"),
    ],
)
def test_coin_only_options_are_refused_for_another_source(tmp_path, capsys, extra, message):
    annotations = write_crosstask(tmp_path / "release")
    template = "http://127.0.0.1:9/{video_id}"
    assert _download("crosstask", annotations, tmp_path / "v", template, *extra) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and not (tmp_path / "v").exists()
