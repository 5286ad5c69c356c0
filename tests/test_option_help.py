"""Every option of every subcommand says what it does (issue 21, wall 8): `splice <command>
--help` is the reference a user reads, so an option without help text is undocumented.
The parsers are the dispatcher's own (`cli.subcommand_parser`), nested ones included."""

from __future__ import annotations

import argparse

import pytest

from splice_build.cli import SUBCOMMANDS, subcommand_parser


def _walk(parser: argparse.ArgumentParser, prog: str):
    for action in parser._actions:  # argparse exposes its options only this way
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{prog} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield prog, action


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_option_has_help(command):
    parser, _ = subcommand_parser(command)
    missing = [
        f"{prog} {'/'.join(a.option_strings) or a.dest}"
        for prog, a in _walk(parser, f"splice {command}")
        if not (a.help and a.help.strip()) or a.help == argparse.SUPPRESS
    ]
    assert missing == [], f"options without help text: {missing}"


@pytest.mark.parametrize("command", ["build", "demo", "download", "import-release"])
def test_out_states_its_default(command):
    parser, _ = subcommand_parser(command)
    out = next(a for a in parser._actions if "--out" in a.option_strings)
    if out.required:
        return
    text = parser.format_help()
    assert "--out" in text and "default" in out.help, out.help
