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
import os
import sys

from splice_build.errors import USAGE_EXIT, UserError

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "download": ("splice_build.download", "fetch the source videos a build selects (yt-dlp)"),
    "build": ("splice_build.pipeline", "build the dataset from COIN annotations and videos"),
    "import-release": (
        "splice_build.release",
        "import the authors' release (prokajevo/splice-benchmark) as a leak-free build",
    ),
    "validate": ("splice_build.validate", "check a built folder: clips, answers, card"),
    "demo": ("splice_build.demo", "build, load and score a demo on bundled inputs"),
    "score": ("splice_eval.score", "score prediction files with the SPLICE metric"),
    "publish": ("splice_build.publish", "upload a built folder to the Hugging Face Hub"),
    "publish-metric": ("splice_build.publish", "upload splice_metric/ as a Hub Space"),
    "annotate": ("splice_eval.annotate", "human protocol: export packages, ingest sheets"),
    "baseline": ("splice_eval.baselines", "run a baseline and write predictions"),
    "report": ("splice_eval.report", "score predictions and write a Markdown report"),
    "run": ("splice_eval.runner", "run a model behind an OpenAI-compatible endpoint"),
}


def _parser(available: dict[str, tuple[str, str]]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="splice", description="Build, load and score the SPLICE benchmark."
    )
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
    if not argv or argv[0] not in available:
        _parser(available).parse_args(argv)  # prints usage / error (or --version) and exits
        return USAGE_EXIT
    try:
        return _run(argv, available)
    except UserError as e:
        if debug:
            raise
        print(f"splice {argv[0]}: {e}", file=sys.stderr)
        return USAGE_EXIT


def _run(argv: list[str], available: dict[str, tuple[str, str]]) -> int:
    name, rest = argv[0], argv[1:]
    module_name, help_text = available[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"splice {name}", description=help_text)
    attr = name.replace("-", "_")  # a module serving two subcommands has a pair for each
    add_arguments = getattr(module, f"add_{attr}_arguments", None)
    if add_arguments is None:
        add_arguments, runner = module.add_arguments, module.run
    else:
        runner = getattr(module, f"run_{attr}")
    add_arguments(parser)
    return int(runner(parser.parse_args(rest)) or 0)


if __name__ == "__main__":
    sys.exit(main())
