"""Every option of every subcommand says what it does (issue 21, wall 8): `splice <command>
--help` is the reference a user reads, so an option without help text is undocumented.
The parsers are the dispatcher's own (`cli.subcommand_parser`), nested ones included."""

from __future__ import annotations

import argparse
import json

import pytest

from splice_build.cli import SUBCOMMANDS, subcommand_parser
from splice_build.errors import UserError
from tests.support.cli_options import walk
from tests.support.paths import REPO


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_option_has_help(command):
    parser, _ = subcommand_parser(command)
    missing = [
        f"{prog} {'/'.join(a.option_strings) or a.dest}"
        for prog, a in walk(parser, f"splice {command}")
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


# --- issue 30, wall 9: defaults shown, and --groups before the files -----------------------


def _has_default(action: argparse.Action) -> bool:
    flag = isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
    empty = action.default is None or action.default == [] or action.default is argparse.SUPPRESS
    return bool(action.option_strings) and not action.required and not flag and not empty


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_default_is_shown(command):
    """An option that falls back to a value says which (`--seed 0`, `--concurrency 4`, ...)."""
    parser, _ = subcommand_parser(command)
    silent = [
        f"{prog} {'/'.join(a.option_strings)}"
        for prog, a in walk(parser, f"splice {command}")
        if _has_default(a) and "default" not in a.help.lower()
    ]
    assert silent == [], f"options whose default is not said: {silent}"


@pytest.mark.parametrize(
    ("command", "option", "words"),
    [
        ("score", "--confidence-level", "default: none"),
        ("score", "--random-baseline", "default: not shown"),
        ("baseline", "--config", "random: video; identity: video; taxonomy-prior: text"),
        ("baseline", "--coin", "the bundled annotation file, COIN_public_10070.json"),
    ],
)
def test_options_without_a_value_say_what_happens(command, option, words):
    parser, _ = subcommand_parser(command)
    action = next(a for a in parser._actions if option in a.option_strings)
    assert words in " ".join(parser._get_formatter()._expand_help(action).split())


def test_a_bare_coin_is_the_bundled_annotation_file(tmp_path, capsys):
    from splice_build.cli import main
    from splice_build.stages.ingest import BUNDLED_ANNOTATIONS

    out = tmp_path / "prior.jsonl"
    assert main(["baseline", "taxonomy-prior", "--coin", "--out", str(out)]) == 0
    meta = json.loads(out.read_text().splitlines()[0])
    assert meta["splice_metadata"]["source"] == BUNDLED_ANNOTATIONS.name
    assert "| all |" in capsys.readouterr().out


def test_groups_stop_at_the_first_prediction_file(tmp_path):
    parser, _ = subcommand_parser("score")
    run = tmp_path / "qwen.jsonl"
    run.write_text("")
    args = parser.parse_args(["--groups", "domain", str(run), "--data", "d/"])
    assert (args.groups, args.files_after_groups, args.predictions) == (["domain"], [run], [])
    args = parser.parse_args([str(run), "--data", "d/", "--groups", "domain", "task"])
    assert (args.groups, args.predictions) == (["domain", "task"], [run])
    with pytest.raises(UserError, match="'domian' is neither a column"):
        parser.parse_args(["--groups", "domian", str(run), "--data", "d/"])


def test_score_help_and_the_scoring_doc_agree_on_what_is_shown():
    """docs/scoring.md says means only unless --random-baseline / --confidence-level ask."""
    doc = REPO / "docs" / "scoring.md"
    readme = " ".join(doc.read_text().split())
    assert "prints means only unless asked: `--random-baseline` adds" in readme
    assert "`--confidence-level 0.95` adds bootstrap intervals" in readme
    parser, _ = subcommand_parser("score")
    defaults = parser.parse_args(["x.jsonl", "--data", "d/"])
    assert (defaults.random_baseline, defaults.confidence_level) == (False, None)
