"""``splice annotate serve`` and ``splice annotate space``: their options and runs.

Kept apart from ``annotate.py`` (export and ingest) so that it stays one job; Gradio is
imported only when a page is really served (the ``[annotate]`` extra).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from splice_build.errors import UserError, read_text

SERVE_HELP = "serve an annotation package as a web page (Gradio; extra [annotate])"
SPACE_HELP = "write a folder that runs the annotation page as a Hugging Face Space"
LOCAL_HOST = "127.0.0.1"


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "package", type=Path, help="annotate export's folder, or one annotator's folder in it"
    )
    parser.add_argument(
        "--answers",
        type=Path,
        default=None,
        help="folder for each annotator's answers, <name>.csv, in the sheet format "
        "annotate ingest reads (default: PACKAGE/answers)",
    )
    parser.add_argument(
        "--host",
        default=LOCAL_HOST,
        help="address to listen on (default %(default)s: this machine only; anything else "
        "lets the network in, with a warning)",
    )
    parser.add_argument("--port", type=int, default=7860, help="port (default %(default)s)")
    parser.add_argument(
        "--passwords",
        type=Path,
        default=None,
        help="file of 'name:password' lines, one per annotator: each logs in as themselves",
    )


def add_space_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("package", type=Path, help="annotate export's folder")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the Space into")
    parser.add_argument(
        "--public",
        action="store_true",
        help="copy the clips into the Space (only if the package may be published: COIN "
        "videos are other people's; by default the Space reads them from its storage)",
    )


def read_passwords(path: Path, annotators: list[str]) -> dict[str, str]:
    """``name:password`` lines; every name must be one of the package's annotators."""
    return parse_passwords(read_text(path, "passwords file"), str(path), annotators)


def parse_passwords(text: str, path: str, annotators: list[str]) -> dict[str, str]:
    """The lines of a passwords file (or of a Space's ``SPLICE_PASSWORDS`` secret)."""
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, password = line.partition(":")
        name = name.strip()
        if not sep or not password:
            raise UserError(f"{path}:{lineno}: expected 'name:password'")
        if name not in annotators:
            raise UserError(
                f"{path}:{lineno}: {name!r} is not an annotator of the package ({annotators})"
            )
        out[name] = password
    if not out:
        raise UserError(f"{path}: no 'name:password' lines")
    return out


def host_warning(host: str, passwords: bool) -> str | None:
    """What to tell the organiser who lets the network in; None on this machine only."""
    if host == LOCAL_HOST:
        return None
    words = f"listening on {host}: anyone who can reach this machine can open the page"
    return words + ("" if passwords else " and answer as any annotator (use --passwords)")


def space_warnings(answers: Path, storage: Path, passwords: bool) -> tuple[str, ...]:
    """What a Space's organiser must fix before annotators start, said in the Space's log
    and on its page: answers outside persistent storage are wiped by every restart, and
    without passwords anyone who can open the Space answers as anyone."""
    out = []
    if not (storage.is_dir() and answers.resolve().is_relative_to(storage.resolve())):
        out.append(
            f"answers are saved in {answers}, not in persistent storage ({storage}): the "
            "Hub wipes this disk when the Space restarts, and the answers with it. Turn on "
            "the Space's persistent storage before annotators start."
        )
    if not passwords:
        out.append(
            "no SPLICE_PASSWORDS secret: anyone who can open this Space (everyone, if it is "
            "public) can answer under any annotator's name. Add the secret, one "
            "'name:password' line per annotator."
        )
    return tuple(out)


def run_serve(args: argparse.Namespace) -> int:
    from .app import launch
    from .package import read_package
    from .store import AnswerStore

    package = read_package(args.package)
    passwords = None
    if args.passwords is not None:
        passwords = read_passwords(args.passwords, sorted(package.tasks))
    warning = host_warning(args.host, bool(passwords))
    if warning:
        print(f"splice annotate serve: WARNING: {warning}", file=sys.stderr)
    store = AnswerStore(args.answers or args.package / "answers")
    total = sum(len(t) for t in package.tasks.values())
    demo = None
    try:
        _stop_on(signal.SIGTERM, _raise_stopped)  # while starting: at once, as Ctrl-C does
        print(f"starting the page (Gradio) for {len(package.tasks)} annotators ...", flush=True)
        demo = launch(package, store, args.host, args.port, passwords, block=False)
        url = f"http://{args.host}:{args.port}/"
        wait_until_answers(f"http://{_reachable(args.host)}:{args.port}/")
        print(
            f"serving {total} folders at {url} ; answers in {store.folder}/ (Ctrl-C stops)",
            flush=True,
        )
        signum = wait_for_stop()
    except KeyboardInterrupt as stopped:  # Ctrl-C, or SIGTERM (Stopped), while starting
        signum = getattr(stopped, "signum", signal.SIGINT)
    for each in STOPPED_EXIT:
        _stop_on(each, signal.SIG_IGN)  # a second one while stopping changes nothing
    if demo is not None:
        demo.close(verbose=False)  # no new submit starts; the queue ends
    store.drain()  # a save under way finishes: what was acknowledged is on disk already
    print(
        f"splice annotate serve: stopped by {signal.Signals(signum).name}; every "
        f"acknowledged answer is in {store.folder}/",
        file=sys.stderr,
        flush=True,
    )
    return STOPPED_EXIT[signum]


# What a stopped server exits with: the shell's 128 + the signal (Ctrl-C 130, SIGTERM 143,
# the signal Slurm, Kubernetes and systemd send before a kill).
STOPPED_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Stopped(KeyboardInterrupt):
    """SIGTERM while the page starts, raised as Ctrl-C is."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


def _stop_on(signum: int, handler: object) -> None:
    """``handler`` for ``signum``, unless whoever started us ignores it (``nohup``)."""
    if signal.getsignal(signum) is not signal.SIG_IGN:
        signal.signal(signum, handler)


def wait_for_stop() -> int:
    """Block until Ctrl-C or SIGTERM (each handled the same way); the signal's number.
    Gradio's own wait (``block_thread``) printed its line and returned 0 on Ctrl-C, and
    SIGTERM killed the process in the middle of whatever it was doing (exit -15)."""
    stop = threading.Event()
    caught: list[int] = []

    def note(signum: int, frame: object) -> None:
        caught.append(signum)
        stop.set()

    for signum in STOPPED_EXIT:
        _stop_on(signum, note)
    while not stop.wait(1.0):
        pass
    return caught[0]


def _reachable(host: str) -> str:
    """Where this machine reaches a server listening on ``host``."""
    return LOCAL_HOST if host in ("0.0.0.0", "::", "") else host


def wait_until_answers(url: str, attempts: int = 240) -> None:
    """Return once ``url`` answers an HTTP GET (any status: a login page counts), so the
    address is printed only when opening it shows the page."""
    import time
    import urllib.error
    import urllib.request

    for _ in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=30):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.25)
    raise UserError(f"the annotation page at {url} did not answer")


def run_space(args: argparse.Namespace) -> int:
    from .space import write_space

    out = write_space(args.package, args.out, public=args.public)
    print(f"wrote a Gradio Space to {out}/ (see its README.md)")
    return 0
