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
import shutil
import subprocess
from pathlib import Path

import pytest

from splice_build.cli import SUBCOMMANDS, main, parse_command, subcommand_parser
from splice_build.errors import UserError
from splice_dataset import DEFAULT_BUILD_DIR
from tests.support.build_helpers import run_splice
from tests.support.fake_openai_server import FakeOpenAIServer, Reply, prompt_text
from tests.support.paths import REPO
from tests.support.scripted_runs import good

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "splice_metric/README.md"]
SHELL_LANGS = {"", "bash", "sh", "shell", "console", "text"}
PLACEHOLDERS = {"N": "2", "F": "1.0"}
FENCE = re.compile(r"^```(?P<lang>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`(splice [^`\n]+)`(?!`)")
ENV_PREFIX = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")


def block_commands(text: str) -> list[list[tuple[int, str]]]:
    """The splice command lines of each shell code block of a page, with their line numbers."""
    blocks = []
    for block in FENCE.finditer(text):
        if block["lang"].strip().lower() not in SHELL_LANGS:
            continue
        lineno = text.count("\n", 0, block.start("body")) + 1
        lines = []
        for offset, line in enumerate(block["body"].replace("\\\n", " ").splitlines()):
            line = ENV_PREFIX.sub("", line.strip())
            if line.startswith("splice "):
                lines.append((lineno + offset, line))
        blocks.append(lines)
    return blocks


def shown_commands() -> list[tuple[str, str, bool]]:
    """(where, command line, complete?) for every splice command in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(REPO).as_posix()
        for lines in block_commands(text):
            found.extend((f"{name}:{lineno}", line, True) for lineno, line in lines)
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


# Blocks a reader runs as they stand after `make demo`, from the repository root: every file
# they read is the demo build (as ./splice-data, or as the import's ./splice-release) or made
# by an earlier line of the same block; each entry names the block by one of its lines and
# what the page says the block's output shows (in a file it writes, or None: the last
# command's stdout).
RUNNABLE_BLOCKS = [
    ("docs/question-formats.md", "--format pairwise", None, "Pairwise consistency"),
    ("docs/running-models.md", "--probe blind", "report/report.md", "## Probes"),
    ("docs/scoring.md", "taxonomy-prior --coin", "prior.jsonl", '"model": "taxonomy-prior"'),
    ("docs/scoring.md", "--out report/", "report/report.md", "identity"),
]
ENDPOINT = "http://localhost:8000/v1"  # the docs' server, replaced by the tests' own


def _scripted_answer(request) -> Reply:
    """A well-formed answer to any SPLICE prompt: the first clip named for a pair, option A
    for a choice, the labels reversed for an order."""
    text = prompt_text(request)
    labels = re.findall(r"Video (\d+)", text.split("Video X", 1)[-1])
    if "<answer>Video X</answer>" in text:
        return Reply(content=f"<answer>Video {labels[0]}</answer>")
    if "<answer>X</answer>" in text:
        return Reply(content="<answer>A</answer>")
    return good(request)


def clone_root(folder):
    """``folder`` as the clone's root is to git: a repository with the clone's .gitignore, so
    `git status` there lists what a docs command run in the clone would leave untracked."""
    shutil.copy(REPO / ".gitignore", folder / ".gitignore")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def untracked(folder) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=folder, capture_output=True, text=True, check=True,
    )  # fmt: skip
    listed = [line[3:] for line in done.stdout.splitlines()]
    # the symbolic links are the test's stand-ins for the demo build's folders
    return [p for p in listed if p != ".gitignore" and not (folder / p).is_symlink()]


WRITES = {"--out", "--board", "--work"}  # options naming what a command writes


def test_what_documented_commands_write_in_the_clone_is_ignored(tmp_path):
    """Every relative path a documented command writes (``--out``, ``--board``, ``--work``),
    run from the clone's root, is ignored by the clone's .gitignore: ``p.jsonl``,
    ``prior.jsonl`` and ``report/`` were left untracked."""
    clone_root(tmp_path)
    written = set()
    for _, line, _ in COMMANDS:
        for argv in variants(line):
            for option, value in zip(argv, argv[1:], strict=False):
                if option in WRITES and not value.startswith(("/", "..", "-", "ORG", "DIR")):
                    written.add(value if "." in Path(value).name else value.rstrip("/") + "/x")
    assert {"report/x", "p.jsonl", "prior.jsonl"} <= written, written
    for path in written:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    assert untracked(tmp_path) == []


@pytest.mark.parametrize(("doc", "marker", "made", "shows"), RUNNABLE_BLOCKS)
def test_documented_block_runs_as_written(doc, marker, made, shows, demo_build, tmp_path):
    """Each line of the block, every alternative, exits 0 in order, and its output holds
    what the page says; a block that reads a file no line of it makes fails here; and run
    from the clone's root, the block leaves `git status` clean."""
    text = (REPO / doc).read_text(encoding="utf-8")
    (block,) = [b for b in block_commands(text) if any(marker in line for _, line in b)]
    clone_root(tmp_path)
    for name in (DEFAULT_BUILD_DIR, "splice-release"):
        (tmp_path / name).symlink_to(demo_build, target_is_directory=True)
    with FakeOpenAIServer(_scripted_answer, max_requests=2000) as server:
        for lineno, line in block:
            for argv in variants(line):
                argv = [server.url if a == ENDPOINT else a for a in argv]
                done = run_splice(*argv, cwd=tmp_path)
                assert done.returncode == 0, f"{doc}:{lineno}: `{line}`: {done.stderr}"
    output = done.stdout if made is None else (tmp_path / made).read_text("utf-8")
    assert shows in output, f"{doc}: the block's output lacks {shows!r}"
    assert untracked(tmp_path) == [], f"{doc}: the block leaves files git does not ignore"
