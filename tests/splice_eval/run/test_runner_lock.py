"""Two ``splice run`` on one ``--out``: the second is refused at once, naming the first."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.support.fake_openai_server import FakeOpenAIServer, Reply
from tests.support.paths import REPO
from tests.support.scripted_runs import SECRET, cli


def _argv(build, url: str, out) -> list[str]:
    return ["--endpoint", url, "--model", "m", "--config", "text", "--data", str(build),
            "--out", str(out)]  # fmt: skip


def test_a_second_run_on_one_out_is_refused_naming_the_first(demo_build, tmp_path, capsys):
    """Issue 40 §4: two runs on one file both ran, and 13 of 24 rows were asked twice."""
    out = tmp_path / "both.jsonl"
    with FakeOpenAIServer(lambda request: Reply(stall=True)) as server:
        first = subprocess.Popen(
            # one request at a time: a stalled one is all the first asks, so any other is the
            # second's
            [
                sys.executable,
                "-m",
                "splice_build.cli",
                "run",
                *_argv(demo_build, server.url, out),
                "--concurrency",
                "1",
            ],  # fmt: skip
            cwd=REPO,
            env={**os.environ, "OPENAI_API_KEY": SECRET},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while not server.requests and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests, first.stderr.read() if first.poll() is not None else ""
            asked = len(server.requests)
            started = time.monotonic()
            assert cli(_argv(demo_build, server.url, out)) == 2
            assert time.monotonic() - started < 10  # at once, not after the first one ends
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1, err
            assert err.startswith("splice run: --out both.jsonl: another splice command"), err
            assert f"splice run (pid {first.pid}, since " in err, err
            assert len(server.requests) == asked  # the second asked nothing
            assert first.poll() is None  # and the first runs on
        finally:
            first.kill()
            first.wait(timeout=30)
