"""The annotation page's parts without a browser: the form's refusals, the answers file
under concurrent submits (threads of one server, and two processes), passwords, the host
warning, the Space folder (started and served), and the missing [annotate] extra."""

from __future__ import annotations

import configparser
import csv
import ctypes
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from splice_build.errors import UserError
from splice_eval.human import annotate, sheets
from splice_eval.human.app import cli as app_cli
from splice_eval.human.app.app import GRADIO_VERSION, Session, View
from splice_eval.human.app.form import FormError, cell_from_form, form_from_cell
from splice_eval.human.app.package import read_package
from splice_eval.human.app.space import write_space
from splice_eval.human.app.store import AnswerStore
from tests.support.annotate_serving import (
    free_port,
    get,
    logged_in,
    served,
    status_of,
)
from tests.support.one_line_errors import assert_one_line, splice_without
from tests.support.paths import REPO
from tests.support.terminal import terminal_sigint

# --- the form -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "positions,unk,cell",
    [
        ([2, 3, 1], False, "[3, 1, 2]"),  # part 3 happened first
        ([1.0, 2.0], False, "[1, 2]"),
        ([2, 1], True, "unk [2, 1]"),  # unknown with a best guess
        ([None, None, None], True, "unk"),
    ],
)
def test_form_to_cell_and_back(positions, unk, cell):
    assert cell_from_form(positions, unk) == cell
    assert sheets.parse_cell(cell) == (unk, sheets.parse_cell(cell)[1])
    shown, shown_unk = form_from_cell(cell, len(positions))
    assert shown_unk == unk
    assert shown == ([None] * len(positions) if cell == "unk" else [int(p) for p in positions])


@pytest.mark.parametrize(
    "positions,unk,words",
    [
        ([1, 1, 2], False, "each used once"),
        ([1, 2, 4], False, "must be 1 to 3"),
        ([0, 1, 2], False, "must be 1 to 3"),
        ([1.5, 2, 3], False, "must be 1 to 3"),
        ([1, None, 2], False, "missing: part 2"),
        ([1, None, 2], True, "missing: part 2"),
        ([None, None], False, "missing: part 1, 2"),
    ],
)
def test_bad_forms_are_refused(positions, unk, words):
    with pytest.raises(FormError, match=words):
        cell_from_form(positions, unk)


def test_a_refused_submission_changes_nothing(package, tmp_path):
    root, key = package
    store = AnswerStore(tmp_path / "answers")
    session = Session(read_package(root), store)
    view = session.start("A1")
    task = session.tasks("A1")[view.index]
    n = len(task.clips)
    good = session.submit(view, list(range(1, n + 1)), False)
    assert good.message == f"Saved folder {task.folder}."
    before = store.path("A1").read_bytes()
    back = session.move(good, -1)
    for bad in ([1] * n, [*range(1, n), n + 1], [None] * n):
        refused = session.submit(back, bad, False)
        assert refused.message.startswith("Not saved:")
        assert refused.index == back.index  # the page stays on the folder
        assert store.path("A1").read_bytes() == before
    assert session.start("nobody").annotator is None
    assert session.submit(View(None, 0, ""), [1, 2], False).message == "Choose your name first."


# --- concurrent submits ---------------------------------------------------------------


def _submit_many(folder: str, annotator: str, folders: list[int], tag: int) -> None:
    store = AnswerStore(folder)
    for f in folders:
        store.save(annotator, f, f"[{tag}, {3 - tag}]")


def test_concurrent_submits_lose_nothing(tmp_path):
    """Two annotators at once, each from two tabs (threads of one server), and the same
    annotator from a second server process: every answer ends in its annotator's file."""
    answers = tmp_path / "answers"
    store = AnswerStore(answers)  # one server: handlers run in threads
    folders = {"A1": list(range(1, 121)), "B1": list(range(121, 241))}
    threads = []
    for name, fs in folders.items():
        for tab, half in enumerate((fs[0::2], fs[1::2]), 1):
            threads.append(
                threading.Thread(target=lambda n=name, h=half, t=tab: [
                    store.save(n, f, f"[{t}, {3 - t}]") for f in h
                ])
            )  # fmt: skip
    extra = list(range(241, 301))  # a second server process writing A1's file
    ctx = multiprocessing.get_context("spawn")
    process = ctx.Process(target=_submit_many, args=(str(answers), "A1", extra, 2))
    process.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    process.join(timeout=120)
    assert process.exitcode == 0
    a1 = {a.folder: a.raw for a in sheets.read_sheet(answers / "A1.csv")}
    b1 = {a.folder: a.raw for a in sheets.read_sheet(answers / "B1.csv")}
    assert sorted(a1) == folders["A1"] + extra
    assert sorted(b1) == folders["B1"]
    assert {a1[f] for f in folders["A1"][0::2]} == {"[1, 2]"}
    assert {a1[f] for f in extra} == {"[2, 1]"}
    assert sorted(p.name for p in answers.iterdir()) == [".A1.lock", ".B1.lock", "A1.csv", "B1.csv"]


# --- safe to hand out -------------------------------------------------------------------


def test_passwords_file_and_login(package, tmp_path):
    root, _ = package
    good = tmp_path / "pw.txt"
    good.write_text("# team 0\nA1:kiwi\nB1:apple:pie\n")
    assert app_cli.read_passwords(good, ["A1", "B1"]) == {"A1": "kiwi", "B1": "apple:pie"}
    for text, words in [("C9:x\n", "'C9' is not an annotator"), ("A1\n", ":1: expected"),
                        ("\n", "no 'name:password'")]:  # fmt: skip
        bad = tmp_path / "bad.txt"
        bad.write_text(text)
        with pytest.raises(UserError, match=words):
            app_cli.read_passwords(bad, ["A1", "B1"])
    with served(root, tmp_path / "answers", {"A1": "kiwi", "B1": "pie"}) as url:
        status, page = get(url + "/config")
        assert status == 401 and b"Not authenticated" in page  # nothing before logging in
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        for password, expected in (("wrong", 400), ("pie", 400), ("kiwi", 200)):
            data = urllib.parse.urlencode({"username": "A1", "password": password}).encode()
            try:
                with browser.open(url + "/login", data, timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            assert status == expected, password
        with browser.open(url + "/config", timeout=30) as response:
            assert b"put the parts in order" in response.read()


def test_a_logged_in_annotator_fetches_only_their_own_clips_by_path(package, tmp_path):
    """B1's captioned parts of a video A1 orders as video only would undo the modality
    flip: with passwords a clip path is served only inside the user's own folder."""
    root, key = package
    clip = {name: next((root / name).rglob("random_part_1.mp4")) for name in ("A1", "B1")}
    with served(root, tmp_path / "answers", {"A1": "kiwi", "B1": "pie"}) as url:
        a1 = logged_in(url, "A1", "kiwi")
        b1 = logged_in(url, "B1", "pie")
        for prefix in ("/gradio_api/file=", "/gradio_api/file/"):
            assert status_of(a1, url + prefix + str(clip["A1"])) == 200  # one's own: served
            assert status_of(a1, url + prefix + str(clip["B1"])) == 403
            assert status_of(b1, url + prefix + str(clip["A1"])) == 403
            assert status_of(b1, url + prefix + str(clip["B1"])) == 200
            relative = os.path.relpath(clip["B1"])  # the same file named from the cwd
            assert status_of(a1, url + prefix + relative) == 403
        anonymous = urllib.request.build_opener()
        assert status_of(anonymous, url + "/gradio_api/file=" + str(clip["A1"])) in (401, 403)


def test_a_page_state_belongs_to_the_logged_in_user():
    b1_page = View("B1", 0, "")
    assert Session.belongs(b1_page, "B1")
    assert not Session.belongs(b1_page, "A1")  # A1 sending B1's session hash
    assert Session.belongs(View(None, 0, ""), "A1")  # nothing chosen yet: nothing to take
    assert Session.belongs(b1_page, None)  # no passwords: anyone may be anyone


def test_a_space_warns_without_storage_or_passwords(tmp_path):
    storage = tmp_path / "data"
    missing = app_cli.space_warnings(tmp_path / "answers", storage, passwords=False)
    assert len(missing) == 2
    assert "not in persistent storage" in missing[0] and "SPLICE_PASSWORDS" in missing[1]
    storage.mkdir()
    assert app_cli.space_warnings(storage / "answers", storage, passwords=True) == ()
    outside = app_cli.space_warnings(tmp_path / "answers", storage, passwords=True)
    assert len(outside) == 1 and "persistent storage" in outside[0]


def test_serve_prints_its_address_once_the_page_answers(package, tmp_path):
    """The first line comes at once; the address only when a GET of it is answered, so
    whoever opens it at that moment gets the page."""
    root, _ = package
    port = free_port()
    env = os.environ | {"GRADIO_TEMP_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "splice_build.cli", "annotate", "serve", str(root)]
    server = subprocess.Popen(
        [*argv, "--port", str(port), "--answers", str(tmp_path / "answers")],
        env=env, preexec_fn=_interruptible_child, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines = [server.stdout.readline()]
        assert lines[0].startswith("starting the page"), lines
        while not lines[-1].startswith("serving") and lines[-1]:
            lines.append(server.stdout.readline())
        assert f"http://127.0.0.1:{port}/" in lines[-1], lines
        status, page = get(f"http://127.0.0.1:{port}/config")  # no retry: it answers now
        assert status == 200 and b"put the parts in order" in page
    finally:
        server.send_signal(signal.SIGINT)
        rest, _ = server.communicate(timeout=60)
    # Ctrl-C: one line and the shell's 130 (Gradio's own wait said its line and exited 0)
    assert server.returncode == 130, rest
    assert rest.strip().splitlines() == [
        f"splice annotate serve: stopped by SIGINT; every acknowledged answer is in "
        f"{tmp_path / 'answers'}/"
    ]


def test_other_hosts_are_warned_about():
    assert app_cli.host_warning("127.0.0.1", False) is None
    assert "anyone who can reach" in app_cli.host_warning("0.0.0.0", True)
    assert "--passwords" in app_cli.host_warning("0.0.0.0", False)


def test_without_the_extra_one_line_names_it(package, tmp_path):
    root, _ = package
    done = splice_without("gradio", ["annotate", "serve", str(root)], tmp_path)
    assert_one_line(done, "splice annotate", "gradio", "[annotate]")


def test_the_pin_is_the_spaces_sdk_version():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    extras = cfg["options.extras_require"]
    assert extras["annotate"].split() == [f"gradio=={GRADIO_VERSION}"]
    assert f"gradio=={GRADIO_VERSION}" in extras["test"].split()  # what the tests serve with


# --- the Space ------------------------------------------------------------------------


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _interruptible_child() -> None:
    """Dies with the test, and ends on Ctrl-C as under a terminal."""
    _die_with_parent()
    terminal_sigint()


def test_space_folder_starts_and_serves(package, tmp_path, demo_build):
    root, key = package
    space = write_space(root, tmp_path / "space", public=True)
    header = (space / "README.md").read_text().split("---")[1]
    meta = yaml.safe_load(header)
    assert (meta["sdk"], meta["sdk_version"], meta["app_file"]) == (
        "gradio",
        GRADIO_VERSION,
        "app.py",
    )
    assert (space / "requirements.txt").read_text() == f"gradio=={GRADIO_VERSION}\n"
    files = [p.relative_to(space) for p in space.rglob("*") if p.is_file()]
    assert not any(p.name == annotate.KEY_NAME for p in files)
    assert sum(p.suffix == ".mp4" for p in files) == sum(len(a.parts) for a in key.values())

    env = {k: v for k, v in os.environ.items() if not k.startswith("SPLICE_")}
    env |= {"GRADIO_SERVER_PORT": str(port := free_port()), "GRADIO_ANALYTICS_ENABLED": "False",
            "GRADIO_TEMP_DIR": str(tmp_path / "cache")}  # fmt: skip
    where = subprocess.run(
        [sys.executable, "-c", "import splice_eval.human.app.app as m; print(m.__file__)"],
        cwd=space, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(space)  # its own copy, not this clone's
    server = subprocess.Popen(
        [sys.executable, "app.py"], cwd=space, env=env, preexec_fn=_die_with_parent,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        status, page = 0, b""
        for _ in range(120):
            if server.poll() is not None:
                break
            try:
                status, page = get(f"http://127.0.0.1:{port}/config")
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200, server.stdout.read1().decode() if server.poll() is not None else ""
        assert b"put the parts in order" in page
        # no /data here and no SPLICE_PASSWORDS: both said on the page ...
        assert b"not in persistent storage" in page and b"no SPLICE_PASSWORDS" in page
    finally:
        server.kill()
        server.wait(timeout=30)
    log = server.stdout.read().decode()  # ... and in the Space's log
    assert "WARNING: answers are saved in" in log and "WARNING: no SPLICE_PASSWORDS" in log
    answers_dir = space / "answers"
    assert not answers_dir.exists() or not any(answers_dir.iterdir())


def test_a_private_space_holds_no_clips(package, tmp_path):
    root, _ = package
    space = write_space(root, tmp_path / "space")
    assert not any(p.suffix == ".mp4" for p in space.rglob("*"))
    assert not (space / "package").exists()
    assert "not** in this folder" in (space / "README.md").read_text()
    with pytest.raises(UserError, match="not an empty folder"):
        write_space(root, space)
    with (space / "requirements.txt").open() as fh:
        assert list(csv.reader(fh)) == [[f"gradio=={GRADIO_VERSION}"]]


def test_a_page_the_server_lost_resumes_only_on_a_folder_of_its_annotator(package):
    """After a restart the page's state is gone; the annotator and the folder the page
    shows bring it back, and nothing else does."""
    root, _ = package
    session = Session(read_package(root), AnswerStore("/nonexistent"))
    lost = View(None, 0, "")
    a1 = [t.folder for t in session.tasks("A1")]
    b1 = [t.folder for t in session.tasks("B1")]
    assert session.resume(lost, "A1", a1[1]) == View("A1", 1, "")
    assert session.resume(lost, "A1", float(a1[2])) == View("A1", 2, "")
    for folder in (b1[0], None, a1[0] + 0.5, float("nan"), float("inf"), True, "1"):
        assert session.resume(lost, "A1", folder) == lost, folder
    assert session.resume(lost, "nobody", a1[0]) == lost
    kept = View("A1", 2, "")
    assert session.resume(kept, "A1", a1[0]) == kept  # a live state is the page's own


def test_the_page_hands_out_its_clips_without_probing_them(package, tmp_path, monkeypatch):
    """gr.Video runs ffprobe on every clip of every event (a process each; 30 tabs waited
    minutes); the export's clips are H.264 MP4 and go out as they are, through Gradio's
    cache, and no stub file is written beside the app's module."""
    import asyncio

    from gradio import processing_utils

    from splice_eval.human.app import app as app_module

    root, _ = package
    probed: list[str] = []
    monkeypatch.setattr(processing_utils, "video_is_playable", lambda p: probed.append(p) or True)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    demo = app_module.build_app(read_package(root), AnswerStore(tmp_path / "answers"))
    start = next(d["id"] for d in demo.config["dependencies"] if d["targets"][0][1] == "click")
    out = asyncio.run(demo.process_api(block_fn=start, inputs=["A1"], state=None, request=None))
    values = [v.get("value") for v in out["data"] if isinstance(v, dict)]
    clips = [v for v in values if isinstance(v, dict) and str(v.get("path")).endswith(".mp4")]
    assert clips and all(Path(c["path"]).is_relative_to(tmp_path / "cache") for c in clips)
    assert probed == []
    assert not Path(app_module.__file__).with_suffix(".pyi").exists()
