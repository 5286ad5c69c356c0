"""User mistakes, as a user makes them on the command line: each is one line on stderr
naming the file (and line) or the option, exit status 2, no traceback (unless --debug or
SPLICE_DEBUG=1), nothing on stdout. A UTF-8 byte order mark is accepted everywhere a user
file is read.

``splice build``'s own options (--short-side, --fps, --out, ...) are checked in
tests/build/running/test_ownership.py; here are the files it reads and the other subcommands.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from splice_build.cli import SUBCOMMANDS, main, one_line, parse_command, subcommand_parser
from splice_build.errors import UserError
from splice_build.stages.ingest import load_annotations
from splice_build.stages.select import load_curation
from splice_eval.human.annotate import KEY_NAME
from splice_eval.human.sheets import read_sheet
from splice_eval.predictions import Prediction
from tests.support.build_helpers import subset_annotations
from tests.support.cli_options import walk

BOM = b"\xef\xbb\xbf"
LATIN1_SHEET = 'folder,order\n1,"[2, 1]"\n2,"unk (caf\xe9)"\n'.encode("latin-1")


def refused(capsys, argv: list[str], *words: str) -> str:
    """Run ``splice argv`` in this process; check the one-line refusal; return the line."""
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and out == "", (out, err)
    assert lines[0].startswith(f"splice {argv[0]}: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def splice(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """``splice`` as a separate process, the way a user starts it."""
    return subprocess.run(
        [sys.executable, "-m", "splice_build.cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=600,
    )


@pytest.fixture()
def annotations(tmp_path: Path, demo_ids: list[str]) -> Path:
    """A small real COIN.json (three of the demo's entries) and an empty videos/ folder."""
    (tmp_path / "videos").mkdir()
    return subset_annotations(tmp_path, demo_ids[:3], "COIN.json")


def build_args(tmp_path: Path, annotations: Path | str, *more: str) -> list[str]:
    return [
        "build",
        "--annotations",
        str(annotations),
        "--videos",
        str(tmp_path / "videos"),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
        *more,
    ]


# --- splice build: the files it reads ----------------------------------------------------------


def test_truncated_annotation_file(capsys, tmp_path, annotations):
    data = annotations.read_bytes()
    cut = tmp_path / "truncated.json"
    cut.write_bytes(data[: len(data) // 2])
    line = refused(capsys, build_args(tmp_path, cut), str(cut), " line ", "truncated")
    assert "column" in line
    assert not (tmp_path / "out").exists()  # refused before any work


def test_annotation_path_is_a_folder(capsys, tmp_path, annotations):
    refused(capsys, build_args(tmp_path, tmp_path / "videos"), str(tmp_path / "videos"), "folder")


def test_latin1_annotation_file_names_the_line(capsys, tmp_path, annotations):
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"database": {\n"x": "caf\xe9"}}')
    refused(capsys, build_args(tmp_path, bad), str(bad), "line 2", "not UTF-8")


def test_bom_annotation_file_is_accepted(tmp_path, annotations):
    bom = tmp_path / "bom.json"
    bom.write_bytes(BOM + annotations.read_bytes())
    assert load_annotations(bom).entries == load_annotations(annotations).entries


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"video_id,decision\n", ["line 1", "header must be video_id,decision,reason"]),
        (b"video_id,decision,reason\nabc,drop,blurry\n", ["line 2", "'drop'"]),
        (b"video_id,decision,reason\nabc,exclude,caf\xe9\n", ["line 2", "not UTF-8"]),
        (b"video_id,decision,reason\nabc,exclude," + b"x" * 200_000, ["not a readable CSV"]),
    ],
)
def test_curation_file_error(capsys, tmp_path, annotations, content, words):
    curation = tmp_path / "curation.csv"
    curation.write_bytes(content)
    args = build_args(tmp_path, annotations, "--curation", str(curation))
    refused(capsys, args, str(curation), *words)
    assert not (tmp_path / "out").exists()


def test_curation_file_missing_or_a_folder(capsys, tmp_path, annotations):
    args = build_args(tmp_path, annotations, "--curation", str(tmp_path / "nope.csv"))
    refused(capsys, args, "curation file not found", "nope.csv")
    args = build_args(tmp_path, annotations, "--curation", str(tmp_path / "videos"))
    refused(capsys, args, "is a folder")


def test_bom_curation_file_is_accepted(tmp_path):
    curation = tmp_path / "curation.csv"
    curation.write_bytes(BOM + b"video_id,decision,reason\nabc,exclude,blurry\n")
    assert load_curation(curation)["abc"].decision == "exclude"


def test_missing_annotation_file_goes_to_stderr(capsys, tmp_path, annotations):
    refused(capsys, build_args(tmp_path, tmp_path / "absent.json"), "absent.json", "not found")


# --- options --------------------------------------------------------------------------------


RUN = ["run", "--endpoint", "e", "--model", "m", "--config", "text", "--data", "d", "--out", "o"]
SCORE = ["score", "p.jsonl", "--data", "x"]


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ([*SCORE, "--confidence-level", "1.5"], "--confidence-level"),
        ([*SCORE, "--bootstrap-iterations", "ten"], "--bootstrap-iterations"),
        ([*SCORE, "--bootstrap-iterations", "0"], "--bootstrap-iterations"),
        ([*RUN, "--concurrency", "0"], "--concurrency"),
        ([*RUN, "--timeout", "-1"], "--timeout"),
        (["annotate", "export", "d", "--out", "o", "--limit", "-3"], "--limit"),
        (["validate", "d", "--tolerance-frames", "nan"], "--tolerance-frames"),
        (["demo", "--workers", "0"], "--workers"),
        (["import-release", "rel", "--out", "o", "--workers", "0"], "--workers"),
        (["baseline", "random", "--data", "d", "--out", "o", "--seed", "1.5"], "--seed"),
        (["score", "p.jsonl"], "--data"),  # a required option missing
    ],
)
def test_bad_option(capsys, argv, option):
    refused(capsys, argv, option, f"splice {argv[0]}")


def _typed_options(command: str) -> list[tuple[list[str], str]]:
    """(argv before the option, option) for each option of ``splice command`` whose value
    a type function reads (``int``, ``int_at_least``, ``float_in``, ``--frames``' ...)."""
    parser, _ = subcommand_parser(command)
    return [
        ([command, *prog.split()[2:]], max(action.option_strings, key=len))
        for prog, action in walk(parser, f"splice {command}")
        if action.option_strings and action.nargs != 0 and action.type not in (None, str, Path)
    ]


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_a_bad_option_value_names_the_option_once(command):
    """Issue 31, wall 1: ``--frames bogus`` said ``argument --frames: --frames: bad item``.
    A type function says what the value must be; argparse alone names the option."""
    options = _typed_options(command)
    for head, option in options:
        parser, _ = subcommand_parser(command)
        try:
            parse_command(parser, [*head[1:], option, "bogus"])
        except UserError as exc:
            message = str(exc)
        else:
            continue  # a value its type accepts ("bogus" is a fine --model name)
        line = f"splice {command}: {one_line(message)}"
        assert "\n" not in message and line.count(option) == 1, line
        assert "'bogus'" in line, line
    if command == "run":
        assert ([command], "--frames") in options  # the walk sees the helpers' options


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        ([*RUN, "--frames", "bogus"], "expected fps=F, num_frames=N and/or long_side=S"),
        ([*RUN, "--frames", "fps=abc"], "fps must be > 0, got fps=abc"),
        ([*RUN, "--frames", "fps=0"], "fps must be > 0, got fps=0"),
        ([*RUN, "--frames", "num_frames=1.5"], "num_frames must be >= 1, got num_frames=1.5"),
        ([*RUN, "--frames", "fps=1,num_frames=4"], "give fps= or num_frames=, not both"),
        ([*RUN, "--concurrency", "bogus"], "expected a whole number >= 1, got 'bogus'"),
        ([*RUN, "--concurrency", "0"], "expected a whole number >= 1, got '0'"),
        ([*RUN, "--temperature", "bogus"], "expected a number >= 0, got 'bogus'"),
        ([*RUN, "--timeout", "0"], "expected a number > 0, got '0'"),
        ([*SCORE, "--confidence-level", "1"], "expected a number in (0, 1), got '1'"),
    ],
)
def test_a_bad_option_value_says_what_is_allowed(capsys, argv, allowed):
    option = argv[-2]
    line = refused(capsys, argv, allowed)
    assert line.count(option) == 1, line


def test_unknown_command(capsys):
    code = main(["bulid"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "'bulid'" in err


# --- score, report, baseline: their input files -------------------------------------------------


def test_prediction_file_errors(capsys, tmp_path, demo_build):
    vid = json.loads((demo_build / "build_report.json").read_text())["videos"][0]["video_id"]
    good = Prediction(vid, "text", "m", None, [1, 2]).to_json()
    cases = {
        "truncated.jsonl": ((good + "\n" + good[:20]).encode(), ["truncated.jsonl:2", "JSON"]),
        "latin1.jsonl": (good.encode() + b"\n\xe9\n", ["latin1.jsonl line 2", "not UTF-8"]),
    }
    for name, (content, words) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        for command in (["score"], ["report"]):
            argv = [*command, str(path), "--data", str(demo_build)]
            if command == ["report"]:
                argv += ["--out", str(tmp_path / "report")]
            refused(capsys, argv, *words)
    refused(capsys, ["score", str(tmp_path), "--data", str(demo_build)], "is a folder")
    # a BOM is accepted
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(BOM + good.encode() + b"\n")
    assert main(["score", str(bom), "--data", str(demo_build)]) == 0
    capsys.readouterr()


def test_broken_shard_names_the_file(capsys, tmp_path, demo_build):
    build = tmp_path / "build"
    shutil.copytree(demo_build, build)
    shard = sorted((build / "text").glob("*.parquet"))[0]
    shard.write_bytes(shard.read_bytes()[:100])
    argv = ["baseline", "random", "--data", str(build), "--config", "text"]
    refused(capsys, [*argv, "--out", str(tmp_path / "p.jsonl")], str(shard), "Parquet")


def test_baseline_coin_file(capsys, tmp_path, annotations):
    out = tmp_path / "p.jsonl"
    cut = tmp_path / "cut.json"
    cut.write_bytes(annotations.read_bytes()[:50])
    argv = ["baseline", "taxonomy-prior", "--out", str(out), "--coin"]
    refused(capsys, [*argv, str(cut)], str(cut), "line 1")
    bom = tmp_path / "bom.json"
    bom.write_bytes(BOM + annotations.read_bytes())
    assert main([*argv, str(bom)]) == 0 and out.is_file()
    capsys.readouterr()


# --- annotate ingest: the sheets ------------------------------------------------------------------


@pytest.fixture()
def sheets(tmp_path: Path) -> Path:
    """A key for two folders and a sheet folder beside it, as `annotate export` writes."""
    assignment = {"annotator": "A1", "team": 1, "video_id": "v", "config": "video"}
    key = {
        "build": "b",
        "seed": 0,
        "assignments": [{**assignment, "folder": f, "parts": [1, 2]} for f in (1, 2)],
    }
    (tmp_path / KEY_NAME).write_text(json.dumps(key), encoding="utf-8")
    (tmp_path / "A1").mkdir()
    return tmp_path


def test_latin1_sheet(capsys, sheets):
    sheet = sheets / "A1" / "sheet.csv"
    sheet.write_bytes(LATIN1_SHEET)
    argv = ["annotate", "ingest", str(sheet), "--out", str(sheets / "human")]
    refused(capsys, argv, str(sheet), "line 3", "not UTF-8", "0xe9")


def test_bom_sheet_is_accepted(sheets):
    sheet = sheets / "A1" / "sheet.csv"
    sheet.write_bytes(BOM + b'folder,order\n1,"[2, 1]"\n2,unk\n')
    assert [a.folder for a in read_sheet(sheet)] == [1, 2]


def test_sheet_without_key(capsys, tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(b'folder,order\n1,"[2, 1]"\n')
    argv = ["annotate", "ingest", str(sheet), "--out", str(tmp_path / "human")]
    refused(capsys, argv, KEY_NAME, "--key")


def test_broken_key(capsys, sheets):
    (sheets / KEY_NAME).write_text('{"assignments": [', encoding="utf-8")
    sheet = sheets / "A1" / "sheet.csv"
    sheet.write_bytes(b'folder,order\n1,"[2, 1]"\n')
    argv = ["annotate", "ingest", str(sheet), "--out", str(sheets / "human")]
    refused(capsys, argv, str(sheets / KEY_NAME), "not a SPLICE annotation key")


# --- publish without network -------------------------------------------------------------


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: the Hub out of reach, for real."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", ["publish", "publish-metric"])
def test_publish_without_network(tmp_path, demo_build, command):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    env = {"HF_ENDPOINT": endpoint, "HF_TOKEN": "hf_notARealToken000000", "HF_HUB_OFFLINE": "0"}
    if command == "publish":
        argv = ["publish", str(demo_build), "--allow-stand-in", "--repo-id", "org/splice"]
        argv += ["--code-url", "https://github.com/someone/splice-benchmark"]
    else:
        argv = ["publish-metric", "--repo-id", "org/splice_metric"]
    proc = splice(*argv, env=env, cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"splice {command}: upload to "), lines[0]
    assert endpoint in lines[0] and "org/splice" in lines[0]
    assert "hf_notARealToken" not in proc.stdout + proc.stderr


# --- --debug -----------------------------------------------------------------------------------


def test_debug_shows_the_traceback(tmp_path):
    missing = tmp_path / "absent.jsonl"
    argv = ["score", str(missing), "--data", str(tmp_path)]
    plain = splice(*argv)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    for debug_argv, env in (((("--debug", *argv)), None), (argv, {"SPLICE_DEBUG": "1"})):
        shown = splice(*debug_argv, env=env)
        assert shown.returncode != 0
        assert "Traceback" in shown.stderr and "UserError" in shown.stderr, shown.stderr


# --- a build folder that is not there ------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{missing}"],
        ["annotate", "export", "{missing}", "--out", "{tmp}/packages"],
        ["baseline", "random", "--data", "{missing}", "--out", "{tmp}/b.jsonl"],  # p.jsonl: kept
        ["score", "{tmp}/p.jsonl", "--data", "{missing}"],
        ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text"]
        + ["--data", "{missing}", "--out", "{tmp}/q.jsonl"],
    ],
)
def test_missing_build(capsys, tmp_path, argv):
    (tmp_path / "p.jsonl").write_text(Prediction("v", "text", "m", None, [1]).to_json() + "\n")
    missing = tmp_path / "no-build"
    argv = [a.format(missing=missing, tmp=tmp_path) for a in argv]
    refused(capsys, argv, str(missing))
    assert not (tmp_path / "packages").exists() and not (tmp_path / "q.jsonl").exists()


def _closed_endpoint() -> str:
    """A local address nothing listens on: a Hub endpoint that refuses every connection."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("offline", ["HF_HUB_OFFLINE", "unreachable endpoint"])
def test_every_data_option_takes_a_hub_id_and_offline_fails_at_once(
    tmp_path, offline, demo_build
) -> None:
    """Wall 4 (issue 30): ``splice run --data ORG/splice`` offline spent 40 s in retries and
    ended in a ``ConnectionError`` traceback; ``score``, ``report`` and ``annotate export``
    took folders only. Every ``--data`` takes a Hub id; offline (``HF_HUB_OFFLINE=1``, or an
    endpoint that cannot be reached) and with the dataset not in the cache, each command
    stops before any retry with one line naming the option, the id and why. Issue 41 wall
    6: a local backend's Hub ``--model`` likewise (10 retry lines over 46 s before), refused
    before torch is imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env["HF_HOME"] = str(tmp_path / "hf-home")  # an empty cache
    if offline == "HF_HUB_OFFLINE":
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env["HF_ENDPOINT"] = _closed_endpoint()
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"video_id": "a", "config": "video", "order": [1, 2]}\n')
    hub = "some-org/splice"
    commands = {
        "--data": [
            ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text",
             "--data", hub, "--out", str(tmp_path / "run.jsonl")],
            ["score", str(preds), "--data", hub],
            ["report", str(preds), "--data", hub, "--out", str(tmp_path / "report")],
            ["baseline", "random", "--data", hub, "--out", str(tmp_path / "b.jsonl")],
        ],
        "BUILD": [["annotate", "export", hub, "--out", str(tmp_path / "packages")]],
        "--model": [
            ["run", "--backend", "transformers", "--model", hub, "--config", "text",
             "--data", str(demo_build), "--out", str(tmp_path / "local.jsonl")],
        ],
    }  # fmt: skip
    why = "HF_HUB_OFFLINE" if offline == "HF_HUB_OFFLINE" else "cannot be reached"
    for option, argvs in commands.items():
        for argv in argvs:
            done = subprocess.run(
                [sys.executable, "-m", "splice_build.cli", *argv],
                capture_output=True, text=True, env=env, timeout=120,
            )  # fmt: skip
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 2 and len(lines) == 1, (argv[0], done.stderr[-2000:])
            assert lines[0].startswith(f"splice {argv[0]}: {option} {hub}: "), lines[0]
            assert why in lines[0], lines[0]


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`splice score ... | head`: once the reader has closed its end, what is left to print
    has nowhere to go; the command stops with exit 1 and no traceback (Python's own advice
    for a closed pipe), instead of a BrokenPipeError stack on the terminal."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write
    try:
        done = subprocess.run(
            [sys.executable, "-m", "splice_build.cli", "lmms-tasks"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_an_unwritable_out_is_one_line_naming_the_folder(tmp_path, demo_build, capsys) -> None:
    """Issue 41 wall 4: ``--out`` in a folder that cannot be written gave tracebacks in
    `splice demo`, `run`, `build` and `annotate export`; each now says, in one line, the
    folder it could not write in and why (the dispatcher's one net, `errors.refused_write`).
    A real read-only folder (`read_only`: a read-only mount as root, permissions otherwise)."""
    from tests.support.read_only import read_only

    locked = tmp_path / "locked"
    locked.mkdir()
    (tmp_path / "videos").mkdir()
    commands = [
        ["demo", "--out", str(locked / "demo")],
        ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text",
         "--data", str(demo_build), "--out", str(locked / "answers.jsonl")],
        ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text",
         "--data", str(demo_build), "--out", str(locked / "sub" / "answers.jsonl")],
        ["build", "--videos", str(tmp_path / "videos"), "--out", str(locked / "build"),
         "--limit", "1", "--no-progress"],
        ["annotate", "export", str(demo_build), "--out", str(locked / "packages")],
        ["baseline", "random", "--data", str(demo_build), "--out", str(locked / "b.jsonl")],
    ]  # fmt: skip
    why = ("read-only", "no permission")
    with read_only(locked):
        for argv in commands:
            assert main(argv) == 2, argv
            err = capsys.readouterr().err  # `splice run` says what it runs first
            assert "Traceback" not in err and "Errno" not in err, (argv, err)
            last = err.strip().splitlines()[-1]
            assert last.startswith(f"splice {argv[0]}: "), last
            assert f"{locked}" in last and any(w in last for w in why), last
    assert list(locked.iterdir()) == []


def test_an_out_through_a_file_or_onto_a_folder_is_one_line(tmp_path, demo_build, capsys) -> None:
    """Issue 47 §7: a file where a folder must go (``--out`` through a regular file in
    `splice run`, `build`, `annotate export`, `baseline`; `score --json`), or a folder
    where a file must go (`score --json`; `baseline --out --overwrite`, which named its
    temporary file), gave a traceback or an errno text. Each is one line naming the path
    and what is in the way, before any work (`errors.output_path`)."""
    blocker = tmp_path / "afile"
    blocker.write_text("mine\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "videos").mkdir()
    answers = tmp_path / "b.jsonl"
    assert main(["baseline", "random", "--data", str(demo_build), "--out", str(answers)]) == 0
    capsys.readouterr()
    file_in_the_way = f"{blocker} is a file, where a folder must go"
    folder_in_the_way = f"{folder} is a folder, where a file must go"
    cases = [
        (["score", str(answers), "--data", str(demo_build), "--json", str(folder)],
         folder_in_the_way),
        (["score", str(answers), "--data", str(demo_build), "--json", str(blocker / "s.json")],
         file_in_the_way),
        (["baseline", "random", "--data", str(demo_build), "--out", str(folder), "--overwrite"],
         folder_in_the_way),
        (["baseline", "random", "--data", str(demo_build), "--out", str(blocker / "b.jsonl")],
         file_in_the_way),
        (["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "text",
          "--data", str(demo_build), "--out", str(blocker / "answers.jsonl")], file_in_the_way),
        (["build", "--videos", str(tmp_path / "videos"), "--out", str(blocker / "build"),
          "--limit", "1", "--no-progress"], file_in_the_way),
        (["annotate", "export", str(demo_build), "--out", str(blocker / "packages")],
         file_in_the_way),
    ]  # fmt: skip
    for argv, words in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and "Errno" not in err and ".tmp" not in err, (argv, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"splice {argv[0]}: "), (argv, err)
        assert words in lines[0], (argv, lines[0])
    assert blocker.read_text() == "mine\n" and list(folder.iterdir()) == []
