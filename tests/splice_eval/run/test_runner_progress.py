"""`splice run`'s progress as its user sees it (issue 49 section 4): rows done of the total
with an ETA, on a terminal (a bar) and off one (a log file, nohup, CI: a line at least every
``SPLICE_PROGRESS_SECONDS``, 30 by default), and Ctrl-C's message on a line of its own."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from splice_eval.run.progress import RowProgress
from tests.support.fake_openai_server import FakeOpenAIServer, Reply
from tests.support.scripted_runs import good
from tests.support.terminal import terminal_sigint


def _slow(request) -> Reply:
    return dataclasses.replace(good(request), delay=0.4)


def _argv(server: FakeOpenAIServer, data: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "splice_build.cli", "run", "--endpoint", server.url,
        "--model", "m", "--config", "text", "--data", str(data), "--out", str(out),
        "--concurrency", "1",
    ]  # fmt: skip


def test_off_a_terminal_a_line_of_rows_done_of_total_with_an_eta(demo_build, tmp_path):
    """Piped stderr printed nothing between the header and the summary."""
    env = os.environ | {"SPLICE_PROGRESS_SECONDS": "0.3"}
    with FakeOpenAIServer(_slow) as server:
        argv = [*_argv(server, demo_build, tmp_path / "p.jsonl"), "--limit", "6"]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = re.findall(r"^splice run: (\d+)/6 rows answered.*ETA.*$", done.stderr, re.M)
    assert len(lines) >= 3, done.stderr  # 2.4 s of answers, a line every 0.3 s
    assert [int(n) for n in lines] == sorted(int(n) for n in lines)
    assert "\r" not in done.stderr


def test_the_total_is_the_builds_rows_and_a_resume_counts_what_is_in(demo_build, tmp_path):
    env = os.environ | {"SPLICE_PROGRESS_SECONDS": "0.1"}
    out = tmp_path / "p.jsonl"
    with FakeOpenAIServer(good) as server:
        first = [*_argv(server, demo_build, out), "--limit", "3"]
        assert subprocess.run(first, capture_output=True, env=env, timeout=300).returncode == 0
        done = subprocess.run(
            _argv(server, demo_build, out), capture_output=True, text=True, env=env, timeout=300
        )
    assert done.returncode == 0, done.stderr
    counts = re.findall(r"^splice run: (\d+)/(\d+) rows answered", done.stderr, re.M)
    assert counts and {total for _, total in counts} == {"24"}, done.stderr
    assert int(counts[-1][0]) == 24 and all(int(n) >= 3 for n, _ in counts)


def test_ctrl_c_on_a_terminal_is_a_line_of_its_own(demo_build, tmp_path):
    """The bar on a terminal shows the total and an ETA; the interrupt message was glued
    to the bar's line."""
    primary, secondary = pty.openpty()
    # a terminal of 120 columns (a fresh pty has none, and tqdm draws nothing in 0)
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with FakeOpenAIServer(_slow) as server:
        proc = subprocess.Popen(
            _argv(server, demo_build, tmp_path / "p.jsonl"), stdin=subprocess.DEVNULL,
            stdout=secondary, stderr=secondary, start_new_session=True,
            preexec_fn=terminal_sigint,
        )  # fmt: skip
        os.close(secondary)
        seen, interrupted = b"", False
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if select.select([primary], [], [], 0.2)[0]:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
                if not chunk:
                    break
                seen += chunk
            if not interrupted and re.search(rb"2/24 ", seen):
                os.killpg(proc.pid, signal.SIGINT)
                interrupted = True
        proc.wait(timeout=120)
        os.close(primary)
    text = seen.decode("utf-8", "replace")
    assert proc.returncode == 130, text[-2000:]
    assert re.search(r"rows answered: .*\d+/24 \[[0-9:]+<[0-9:]+", text), text[-2000:]
    assert re.search(r"(^|\n)splice run: interrupted", text), text[-2000:]


def test_a_line_comes_even_while_no_row_ends():
    """A local model on a CPU may take minutes over one row: the line is on a clock, not
    on the rows."""
    import io

    stream = io.StringIO()
    progress = RowProgress(total=4, stream=stream, every=0.05, desc="rows answered")
    time.sleep(0.3)
    progress.close()
    assert stream.getvalue().count("0/4 rows answered") >= 2, stream.getvalue()
