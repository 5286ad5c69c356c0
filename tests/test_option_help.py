"""Every option of every subcommand says what it does (issue 21, wall 8): `splice <command>
--help` is the reference a user reads, so an option without help text is undocumented.
The parsers are the dispatcher's own (`cli.subcommand_parser`), nested ones included."""

from __future__ import annotations

import argparse

import pytest

from splice_build.cli import SUBCOMMANDS, subcommand_parser
from splice_build.errors import UserError


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


# --- issue 30, wall 8: one name per cap --------------------------------------------------


@pytest.mark.parametrize("command", ["build", "download"])
def test_the_clips_cap_is_named_for_the_short_side(command):
    parser, _ = subcommand_parser(command)
    text = parser.format_help()
    assert "--short-side" in text and "--max-side" not in text
    assert parser.parse_args(_required(command) + ["--short-side", "360"]).short_side == 360


def test_frames_caps_the_long_side_and_names_the_old_spelling():
    parser, _ = subcommand_parser("run")
    assert "long_side=448" in parser.format_help()
    with pytest.raises(UserError, match="max_side is now long_side"):
        parser.parse_args(_required("run") + ["--frames", "fps=1,max_side=448"])
    spec = parser.parse_args(_required("run") + ["--frames", "num_frames=8,long_side=224"]).frames
    assert spec.kwargs() == {"num_frames": 8, "long_side": 224}


def _required(command: str) -> list[str]:
    """The least a command's arguments need to parse."""
    return {
        "build": ["--videos", "v/"],
        "download": ["--out", "v/"],
        "run": ["--endpoint", "http://127.0.0.1:1/v1", "--model", "m", "--config", "video"]
        + ["--data", "d/", "--out", "o.jsonl"],
    }[command]
