"""Every option of every ``splice`` subcommand, from the dispatcher's own parsers."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def walk(parser: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, argparse.Action]]:
    """(prog, action) for each option of ``parser`` and of its nested parsers (``annotate
    export``), the help action left out."""
    for action in parser._actions:  # argparse exposes its options only this way
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, f"{prog} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield prog, action
