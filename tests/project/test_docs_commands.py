"""Every ``splice ...`` command the documentation shows parses with the real CLI.

The command lines are read from README.md, docs/*.md and the metric's card: lines of shell
code blocks (``\\`` continuations joined, comments and ``VAR=...`` prefixes dropped) must
parse completely; inline code spans such as ``splice build --format both`` are fragments,
so only what they show is checked (options known, values accepted), not what they leave
out. ``[--opt X]`` is an optional part (checked), ``a|b`` alternatives (each checked), and
the placeholders ``N`` and ``F`` stand for an int and a float. Each subcommand's parser is
built by ``splice_build.cli.subcommand_parser``, the function ``splice`` itself uses.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shlex

import pytest

from splice_build.cli import SUBCOMMANDS, main, parse_command, subcommand_parser
from splice_build.errors import UserError
from tests.support.paths import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "splice_metric/README.md"]
SHELL_LANGS = {"", "bash", "sh", "shell", "console", "text"}
PLACEHOLDERS = {"N": "2", "F": "1.0"}
FENCE = re.compile(r"^```(?P<lang>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`(splice [^`\n]+)`(?!`)")
ENV_PREFIX = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")


def shown_commands() -> list[tuple[str, str, bool]]:
    """(where, command line, complete?) for every splice command in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(REPO).as_posix()
        for block in FENCE.finditer(text):
            if block["lang"].strip().lower() not in SHELL_LANGS:
                continue
            lineno = text.count("\n", 0, block.start("body")) + 1
            for offset, line in enumerate(block["body"].replace("\\\n", " ").splitlines()):
                line = ENV_PREFIX.sub("", line.strip())
                if line.startswith("splice "):
                    found.append((f"{name}:{lineno + offset}", line, True))
        outside = FENCE.sub("", text)
        for span in INLINE.finditer(outside):
            found.append((f"{name} (inline)", span[1], False))
    return found


def variants(line: str) -> list[list[str]]:
    """The argument lists a documented line stands for (after ``splice``)."""
    line = re.sub(r"\[(-[^\[\]]*)\]", r"\1", line)  # optional parts are shown, so checked
    tokens = shlex.split(line, comments=True)[1:]
    choices = [t.split("|") if "|" in t else [t] for t in tokens]
    return [[PLACEHOLDERS.get(t, t) for t in combo] for combo in itertools.product(*choices)]


def fragment_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The parser with nothing required: an inline fragment is checked for what it shows."""
    for group in parser._mutually_exclusive_groups:
        group.required = False
    for action in parser._actions:
        action.required = False
        if not action.option_strings:
            if action.nargs is None:
                action.nargs = "?"
            elif action.nargs == "+":
                action.nargs = "*"
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                fragment_parser(sub)
    return parser


COMMANDS = shown_commands()


def test_the_docs_show_every_subcommand():
    shown = {line.split()[1] for _, line, _ in COMMANDS}
    assert shown == set(SUBCOMMANDS), shown ^ set(SUBCOMMANDS)
    assert len([c for c in COMMANDS if c[2]]) >= 10


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert re.search(rf"^    {re.escape(name)}\b", help_text, re.M), name


@pytest.mark.parametrize(("where", "line", "complete"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_documented_command_parses(where, line, complete):
    assert " ... " not in f" {line} ", f"{where}: write the whole command: {line}"
    name = line.split()[1]
    assert name in SUBCOMMANDS, f"{where}: no subcommand {name!r}: {line}"
    for argv in variants(line):
        parser, _ = subcommand_parser(name)
        if not complete:
            parser = fragment_parser(parser)
        try:
            parse_command(parser, argv[1:])  # as `splice` parses it
        except UserError as exc:
            pytest.fail(f"{where}: `splice {' '.join(argv)}` is refused: {exc}")


def test_a_wrong_option_is_caught():
    """The check can fail: the line the docs used to show is refused."""
    parser, _ = subcommand_parser("build")
    argv = variants("splice build --videos v --format webdataset")[0]
    with pytest.raises(UserError, match="invalid choice: 'webdataset'"):
        fragment_parser(parser).parse_args(argv[1:])
