"""The ``splice`` command: one entry point, one subcommand per job.

Subcommands are registered by name with the module that implements them and imported
only when used, so ``splice --help`` stays fast and an optional extra (Ray, openai,
matplotlib) is only needed by the subcommand that uses it. Each implementing module
exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "build": ("splice_build.pipeline", "build the dataset from COIN annotations and videos"),
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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    available = _available()
    if not argv or argv[0] not in available:
        _parser(available).parse_args(argv)  # prints usage / error and exits
        return 2
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
