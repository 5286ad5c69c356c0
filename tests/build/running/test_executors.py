"""The local executor's pool under Ctrl-C: the terminal sends SIGINT to the whole process
group, workers included, and only the driver may answer it."""

from __future__ import annotations

import sys
import textwrap

from tests.support.paths import REPO
from tests.support.terminal import interrupt_when

# A driver whose spawned workers take a while to start: spawn imports the driver's main
# module again in each worker (as ``__mp_main__``), and this one sleeps there, past the
# driver's stop (SIGTERM), so that whatever a worker prints on Ctrl-C is seen.
DRIVER = textwrap.dedent(
    """
    import pathlib, signal, sys, time

    def task(n, threads):
        return n

    if __name__ == "__mp_main__":  # a pool worker, still starting up
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the driver's stop: print first
        pathlib.Path(sys.argv[1], "starting").touch()
        time.sleep(3)

    if __name__ == "__main__":
        from splice_build.running.executors import LocalExecutor
        try:
            list(LocalExecutor(2).run(task, range(4)))
        except KeyboardInterrupt:
            print("driver: interrupted", file=sys.stderr)
            sys.exit(130)
    """
)


def test_ctrl_c_while_workers_start_is_the_drivers_alone(tmp_path):
    """CI (this stop) saw ``splice import-release``'s one Ctrl-C line preceded by a
    traceback from a pool worker still in ``spawn_main``: the workers ignored SIGINT only
    once their initializer ran. They now start with it blocked."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    done = interrupt_when(
        [sys.executable, str(driver), str(tmp_path)],
        lambda: (tmp_path / "starting").exists(),
        cwd=REPO,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "driver: interrupted\n", done.stderr
