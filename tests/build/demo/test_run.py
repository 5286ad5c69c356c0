"""`splice demo` stopped by Ctrl-C (issue 41 walls 7 and 8): one line saying how to resume,
exit 130, however often Ctrl-C is pressed."""

from __future__ import annotations

import sys

from tests.support.paths import REPO
from tests.support.terminal import interrupt_when


def test_ctrl_c_pressed_again_and_again_is_one_line_that_says_how_to_resume(tmp_path):
    """A second Ctrl-C while the first was handled sometimes printed a traceback (in the
    message, a cleanup or the interpreter's shutdown), and an interrupted demo did not say
    that running it again resumes. Pressed 40 times, 20 ms apart, from the moment the demo
    renders its sources: one line, exit 130."""
    out = tmp_path / "demo"
    sources = tmp_path / "demo-work" / "stand-in-sources"
    done = interrupt_when(
        [sys.executable, "-m", "splice_build.cli", "demo", "--out", str(out), "--workers", "1"],
        lambda: sources.is_dir() and any(sources.iterdir()),
        cwd=REPO,
        presses=40,
    )
    assert done.returncode == 130, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "interrupted" in line]
    assert lines == [
        f"splice demo: interrupted; what is rendered and cut is kept in {tmp_path / 'demo-work'}: "
        "run the same command again to resume"
    ], done.stderr[-3000:]
