"""The ``splice`` command: one entry point, one subcommand per job.

Subcommands are registered by name with the module that implements them and imported
only when used, so ``splice --help`` stays fast and an optional extra (Ray, openai,
matplotlib) is only needed by the subcommand that uses it. Each implementing module
exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import math
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from splice_build.errors import (
    USAGE_EXIT,
    UserError,
    ignore_further_interrupts,
    refused_write,
    sigterm_as_interrupt,
    stop_exit,
    stop_words,
)

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "download": (
        "splice_build.remote.download.command",
        "fetch the source videos a build selects (yt-dlp)",
    ),
    "build": (
        "splice_build.running.pipeline",
        "build the dataset from COIN annotations and videos",
    ),
    "import-release": (
        "splice_build.remote.release.command",
        "import the authors' release (prokajevo/splice-benchmark) as a leak-free build",
    ),
    "validate": (
        "splice_build.running.validation",
        "check a built folder: clips, answers, card",
    ),
    "demo": ("splice_build.demo.run", "build, load and score a demo on bundled inputs"),
    "score": ("splice_eval.scoring.score", "score prediction files with the SPLICE metric"),
    "publish": ("splice_build.remote.publish", "upload a built folder to the Hugging Face Hub"),
    "publish-metric": ("splice_build.remote.publish", "upload splice_metric/ as a Hub Space"),
    "annotate": (
        "splice_eval.human.annotate",
        "human protocol: export packages, serve them as a web page, ingest sheets",
    ),
    "baseline": ("splice_eval.scoring.baselines", "run a baseline and write predictions"),
    "report": ("splice_eval.report.report", "score predictions and write a Markdown report"),
    "run": ("splice_eval.run.runner", "run a model behind an OpenAI-compatible endpoint"),
    "lmms-tasks": (
        "splice_eval.toolkits.lmms_folder",
        "print the folder of the lmms-eval task files (for lmms-eval's --include_path)",
    ),
    "leaderboard": (
        "splice_eval.leaderboard.command",
        "a leaderboard of scored submissions: init, add, rescore, show, export, serve",
    ),
    "export-task": (
        "splice_eval.export.command",
        "write the files a pull request to lmms-eval or VLMEvalKit adds (self-contained SPLICE)",
    ),
    "vlmeval": (
        "splice_eval.toolkits.vlmeval_command",
        "run VLMEvalKit on SPLICE (its own options passed on)",
    ),
}


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as UserError: one line (no usage block) on stderr, exit 2,
    the same as every other user mistake. Nested parsers (``annotate export``) inherit it."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see `{self.prog} --help`)")


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an int >= minimum. Its error says what is allowed and leaves
    the option's name to argparse (``argument --workers: expected ...``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(
                f"expected a whole number >= {minimum}, got {text!r}"
            ) from None
        return value

    return parse


def float_in(
    low: float, high: float = math.inf, *, low_open: bool = False
) -> Callable[[str], float]:
    """An argparse ``type``: a finite float in [low, high) (or (low, high) with ``low_open``),
    its error worded as `int_at_least`'s."""
    if math.isinf(high):
        allowed = f"{'>' if low_open else '>='} {low:g}"
    else:
        allowed = f"in {'(' if low_open else '['}{low:g}, {high:g})"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        above_low = low < value if low_open else low <= value
        if not (math.isfinite(value) and above_low and value < high):
            raise argparse.ArgumentTypeError(f"expected a number {allowed}, got {text!r}")
        return value

    return parse


def _parser(available: dict[str, tuple[str, str]]) -> argparse.ArgumentParser:
    parser = _Parser(prog="splice", description="Build, load and score the SPLICE benchmark.")
    parser.add_argument("--version", action="version", version=f"splice {version()}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks (also: SPLICE_DEBUG=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_module, help_text) in available.items():
        sub.add_parser(name, help=help_text, description=help_text)
    return parser


def _available() -> dict[str, tuple[str, str]]:
    """Subcommands whose module is present in this install."""
    found = {}
    for name, (module, help_text) in SUBCOMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, help_text)
    return found


def version() -> str:
    try:
        return importlib.metadata.version("splice-benchmark")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("SPLICE_DEBUG", "") not in ("", "0")
    while argv and argv[0] == "--debug":
        debug, argv = True, argv[1:]
    available = _available()
    command = f"splice {argv[0]}" if argv and argv[0] in available else "splice"
    try:
        if command == "splice":
            _parser(available).parse_args(argv)  # usage error (or --help, --version: exit 0)
            return USAGE_EXIT
        with sigterm_as_interrupt():
            parser, runner = subcommand_parser(argv[0], available)
            return int(runner(parse_command(parser, argv[1:])) or 0)
    except UserError as e:
        if debug:
            raise
        print(f"{command}: {one_line(str(e))}", file=sys.stderr)
        return USAGE_EXIT
    except KeyboardInterrupt as stop:
        # Ctrl-C (or SIGTERM, raised as errors.Terminated) wherever no command said more
        # (`splice build` says what is kept): one line and the shell's 130 (143 for
        # SIGTERM), never a traceback through whatever was running.
        ignore_further_interrupts()
        if debug:
            raise
        print(f"{command}: {stop_words(stop)}", file=sys.stderr)
        return stop_exit(stop)
    except BrokenPipeError:
        # The reader went away (`splice score ... | head`): the rest has nowhere to go.
        # Python's advice: point stdout at devnull so its flush at exit raises no second one.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as e:  # after BrokenPipeError, itself an OSError
        refused = refused_write(e)  # an unwritable --out, a full disk: one line, no traceback
        if refused is None or debug:
            raise
        print(f"{command}: {one_line(str(refused))}", file=sys.stderr)
        return USAGE_EXIT


def one_line(message: str) -> str:
    """The dispatcher's promise: a user error is one line, whatever the message holds."""
    return "; ".join(part.strip() for part in message.splitlines() if part.strip())


def parse_command(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """A subcommand's options. One that wraps another tool (``splice vlmeval``) says so with
    a ``pass_through`` default: the options it does not know are that tool's, handed over in
    ``args.pass_through``; any other subcommand refuses them."""
    if parser.get_default("pass_through") is None:
        return parser.parse_args(argv)
    args, unknown = parser.parse_known_args(argv)
    args.pass_through = unknown
    return args


def subcommand_parser(
    name: str, available: dict[str, tuple[str, str]] | None = None
) -> tuple[argparse.ArgumentParser, Callable[[argparse.Namespace], int]]:
    """The parser of ``splice <name>`` and the function that runs it, as ``main`` uses
    them (the README test parses every command line it shows with these)."""
    module_name, help_text = (available or _available())[name]
    module = importlib.import_module(module_name)
    parser = _Parser(prog=f"splice {name}", description=help_text)
    attr = name.replace("-", "_")  # a module serving two subcommands has a pair for each
    add_arguments = getattr(module, f"add_{attr}_arguments", None)
    if add_arguments is None:
        add_arguments, runner = module.add_arguments, module.run
    else:
        runner = getattr(module, f"run_{attr}")
    add_arguments(parser)
    return parser, runner


if __name__ == "__main__":
    sys.exit(main())
