"""``splice annotate serve --passwords`` under load and faults, as its users meet them: the
real command in its own process on 127.0.0.1, and tabs as HTTP clients in threads, each
with its own session, sending what the page sends and reading its own event stream.

- Integrity: 30 tabs of two annotators submit at once, each answering the same folder as
  its annotator's other tabs several times (an annotator revising from many tabs): every
  submit is acknowledged in its own tab, and the answer acknowledged last for a folder
  is the one its sheet holds.
- Isolation: while those tabs listen on the queue, no stream carries another tab's event.
- Restart: after SIGKILL and a restart, the tabs that reconnect (same login cookie, same
  session, the page they still show) are served: their next submits are acknowledged and
  saved.
- SIGTERM: one line, exit 143, every acknowledged answer on disk and readable.

Bounded for CI: 30 clients, a few events each, one server start per test (two for the
restart); the figures each test measured are printed (``-s``)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from splice_eval.human import sheets
from splice_eval.human.app.form import cell_from_form
from splice_eval.human.app.package import read_package
from tests.support.annotate_serving import (
    Ack,
    Tab,
    die_with_the_test,
    free_port,
    handlers,
    logged_in,
    page_text,
    start_serve,
)

pytest.importorskip("gradio")
PASSWORDS = {"A1": "kiwi", "B1": "pie"}
TABS = 15  # per annotator: 30 at once
SUBMITS = 3  # per tab


@pytest.fixture
def passwords_file(tmp_path) -> Path:
    path = tmp_path / "passwords.txt"
    path.write_text("".join(f"{u}:{p}\n" for u, p in PASSWORDS.items()))
    return path


def _parts(root: Path) -> dict[int, int]:
    """folder -> its number of parts, from the package (what the page shows)."""
    return {t.folder: len(t.clips) for ts in read_package(root).tasks.values() for t in ts}


def _answers(path: Path) -> dict[int, str]:
    return {a.folder: a.raw for a in sheets.read_sheet(path)}


def _stop(server) -> None:
    if server.poll() is None:
        server.kill()
    server.wait(timeout=60)


@dataclass(frozen=True)
class Submitted:
    user: str
    folder: int
    cell: str  # the answer sent, as the sheet writes it
    ack: Ack


def _revise(user: str, tab: Tab, parts: dict[int, int], n_max: int, ready, seed: int) -> list:
    """One tab: open the page, wait for every tab, then answer the folder it opened on
    `SUBMITS` times (going back to it with Previous when a submit moved the page on)."""
    rng = random.Random(seed)
    tab.load()
    first = tab.folder  # every tab of an annotator opens on the same folder
    ready.wait(timeout=300)
    out = []
    for _ in range(SUBMITS):
        if tab.folder != first:
            tab.back()
        assert tab.folder == first
        positions = rng.sample(range(1, parts[first] + 1), parts[first])
        ack = tab.submit(positions, n_max)
        assert ack.message["success"], ack.message
        assert f"Saved folder {first}." in page_text(ack), page_text(ack)
        out.append(Submitted(user, first, cell_from_form(positions, False), ack))
    return out


def test_thirty_tabs_at_once_each_acknowledged_in_its_own_stream_and_the_last_saved(
    package, tmp_path, passwords_file
):
    root, _ = package
    parts = _parts(root)
    answers = tmp_path / "answers"
    port = free_port()
    server = start_serve(root, answers, port, tmp_path / "cache", passwords_file)
    url = f"http://127.0.0.1:{port}"
    try:
        logins = {user: logged_in(url, user, pw) for user, pw in PASSWORDS.items()}
        fn = handlers(logins["A1"], url)
        tabs = [
            (user, Tab(logins[user], url, fn, f"{user}-tab-{k}"))
            for user in PASSWORDS for k in range(TABS)
        ]  # fmt: skip
        ready = threading.Barrier(len(tabs))
        with ThreadPoolExecutor(len(tabs)) as pool:
            runs = [
                pool.submit(_revise, user, tab, parts, max(parts.values()), ready, seed)
                for seed, (user, tab) in enumerate(tabs)
            ]
            submitted = [s for run in runs for s in run.result(timeout=600)]
    finally:
        _stop(server)
    assert len(submitted) == len(tabs) * SUBMITS  # every submit acknowledged

    # Isolation: every tab listened on its stream throughout; each carried its own
    # events, and only them.
    for _, tab in tabs:
        assert set(tab.streamed) <= set(tab.joined), (tab.session, tab.streamed)
    # Integrity: per folder, the answer acknowledged last is the one saved.
    last: dict[tuple[str, int], Submitted] = {}
    for s in sorted(submitted, key=lambda s: s.ack.at):
        last[s.user, s.folder] = s
    for user in PASSWORDS:
        expected = {f: s.cell for (u, f), s in last.items() if u == user}
        assert _answers(answers / f"{user}.csv") == expected, user
    seconds = sorted(s.ack.seconds for s in submitted)
    print(
        f"\n{len(submitted)} submits from {len(tabs)} tabs at once: {len(submitted)} "
        f"acknowledged, each folder's last acknowledged answer saved ({len(last)} folders); "
        f"submit to acknowledgement: median {seconds[len(seconds) // 2]:.2f} s, "
        f"max {seconds[-1]:.2f} s"
    )


def test_a_restarted_server_serves_the_tabs_that_reconnect(package, tmp_path, passwords_file):
    root, _ = package
    parts = _parts(root)
    n_max = max(parts.values())
    answers = tmp_path / "answers"
    port = free_port()
    server = start_serve(root, answers, port, tmp_path / "cache", passwords_file)
    url = f"http://127.0.0.1:{port}"
    try:
        logins = {user: logged_in(url, user, pw) for user, pw in PASSWORDS.items()}
        fn = handlers(logins["A1"], url)
        tabs = {user: Tab(logins[user], url, fn, f"{user}-page") for user in PASSWORDS}
        for tab in tabs.values():
            tab.load()
            first = tab.submit(list(range(1, parts[tab.folder] + 1)), n_max)
            assert "Saved folder" in page_text(first)
        shown = {user: tab.folder for user, tab in tabs.items()}
        server.kill()  # SIGKILL: nothing is said, nothing is cleaned up
        server.wait(timeout=60)
        server = start_serve(root, answers, port, tmp_path / "cache", passwords_file)

        for user, tab in tabs.items():  # the same pages, still open: same cookie and session
            n = parts[shown[user]]
            order = list(range(n, 0, -1))
            ack = tab.submit(order, n_max)
            assert ack.message["success"], ack.message
            assert f"Saved folder {shown[user]}." in page_text(ack), page_text(ack)
            assert _answers(answers / f"{user}.csv")[shown[user]] == cell_from_form(order, False)
            assert set(tab.streamed) <= set(tab.joined)
        # a reconnecting page is still only its annotator's: B1 cannot act on A1's page
        intruder = Tab(logins["B1"], url, fn, "A1-page")
        with pytest.raises(Exception, match="403"):
            intruder.submit([1] * parts[shown["A1"]], n_max)
        print(f"\nafter SIGKILL and a restart: {len(tabs)} of {len(tabs)} submits acknowledged")
    finally:
        _stop(server)


def test_sigterm_stops_serve_with_one_line_keeping_every_acknowledged_answer(
    package, tmp_path, passwords_file
):
    root, _ = package
    parts = _parts(root)
    n_max = max(parts.values())
    answers = tmp_path / "answers"
    port = free_port()
    server = start_serve(root, answers, port, tmp_path / "cache", passwords_file)
    url = f"http://127.0.0.1:{port}"
    try:
        a1 = logged_in(url, "A1", "kiwi")
        tab = Tab(a1, url, handlers(a1, url), "a1-page")
        tab.load()
        acknowledged = {}
        for _ in range(3):
            folder = tab.folder
            positions = list(range(parts[folder], 0, -1))
            ack = tab.submit(positions, n_max)
            assert f"Saved folder {folder}." in page_text(ack)
            acknowledged[folder] = cell_from_form(positions, False)
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    finally:
        _stop(server)
    assert server.returncode == 143, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "stopped by SIGTERM" in lines[0] and str(answers) in lines[0], err
    assert "Closing server" not in out  # Gradio's own line is not said
    assert _answers(answers / "A1.csv") == acknowledged
    assert not list(answers.glob(".*.tmp"))  # no write left half done


def test_sigterm_while_the_page_starts_is_one_line_too(package, tmp_path):
    root, _ = package
    server = subprocess.Popen(
        [sys.executable, "-m", "splice_build.cli", "annotate", "serve", str(root),
         "--port", str(free_port()), "--answers", str(tmp_path / "answers")],
        env=os.environ | {"GRADIO_TEMP_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"},
        preexec_fn=die_with_the_test, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout.readline().startswith("starting the page")
        server.send_signal(signal.SIGTERM)  # Gradio is still being imported and started
        out, err = server.communicate(timeout=120)
    finally:
        _stop(server)
    assert server.returncode == 143, err
    assert err.strip().splitlines() == [
        f"splice annotate serve: stopped by SIGTERM; every acknowledged answer is in "
        f"{tmp_path / 'answers'}/"
    ]
