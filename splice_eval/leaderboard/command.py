"""``splice leaderboard {init,add,remove,rescore,show,export,serve,space,push}``.

``serve``, ``space`` and ``push`` belong to the web page (``leaderboard/web/``): their
modules give their options and run them, imported only when asked for.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import splice_dataset as sd
from splice_build.cli import int_at_least
from splice_build.errors import UserError
from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard import store

if TYPE_CHECKING:
    from splice_build.output.card_reader import CardInfo

ACTIONS = ("init", "add", "remove", "rescore", "show", "export", "serve", "space", "push")
WEB = {
    "serve": ("splice_eval.leaderboard.web.serve", "serve the board's web page locally"),
    "space": ("splice_eval.leaderboard.web.space", "write a Hugging Face Space folder for a board"),
    "push": ("splice_eval.leaderboard.web.push", "upload a board to a Hub dataset repository"),
}
BOARD_HELP = f"the board: a folder (default {store.DEFAULT_BOARD}) or a Hub dataset ORG/NAME"


def _board_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--board", default=store.DEFAULT_BOARD, help=BOARD_HELP)


def _view_options(parser: argparse.ArgumentParser) -> None:
    _board_option(parser)
    parser.add_argument("--config", choices=sd.CONFIGS, default=None, help="rank in this config")
    parser.add_argument(
        "--metric",
        choices=col.METRICS,
        default=col.DEFAULT_METRIC,
        help="the ranking metric (default %(default)s, the paper's headline)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = sub.add_parser("init", help="make a board for a build, seeded with reference rows")
    _board_option(init)
    init.add_argument("--data", required=True, help="the build: a folder or a Hub dataset id")
    init.add_argument(
        "--baselines",
        default=None,
        help="comma-separated baselines scored on the build (default: those the build's "
        f"source allows of {','.join(_baseline_names())}; '' none)",
    )
    init.add_argument(
        "--human",
        type=Path,
        nargs="+",
        default=[],
        help="the human protocol's prediction files (default: no human row)",
    )
    init.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    init.add_argument(
        "--resamples",
        type=int_at_least(1000),
        default=1000,
        help="bootstrap resamples, at least 1000 (default %(default)s)",
    )
    add = sub.add_parser("add", help="score prediction files and add them as one entry")
    add.add_argument("predictions", type=Path, nargs="+", metavar="PRED", help="prediction files")
    _board_option(add)
    add.add_argument("--meta", type=Path, default=None, help="the entry's meta.yaml")
    add.add_argument("--name", default=None, help="the entry's name (default: the model)")
    add.add_argument(
        "--allow-partial",
        action="store_true",
        help="add an entry missing videos, shown as partial with its coverage",
    )
    add.add_argument(
        "--allow-invalid",
        action="store_true",
        help="add an entry whose answers are more than "
        f"{_invalid_max() * 100:.0f}%% unparsed or invalid (refused otherwise)",
    )
    add.add_argument(
        "--replace",
        action="store_true",
        help="replace the entries of the same model, settings and submitter (it says what goes)",
    )
    add.add_argument(
        "--remove",
        action="append",
        default=[],
        metavar="ITEM",
        help="with --replace: a config or column (video_text, text.probe_blind) the replaced "
        "entry has and the new files do not, named to let it go (repeat for each)",
    )
    remove = sub.add_parser("remove", help="take an entry off the board (kept in audit.jsonl)")
    remove.add_argument("name", metavar="NAME", help="the entry's name or slug")
    _board_option(remove)
    rescore = sub.add_parser("rescore", help="score every entry again with the installed metric")
    _board_option(rescore)
    rescore.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = sub.add_parser("show", help="the ranked table")
    _view_options(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    export = sub.add_parser("export", help="the table as Markdown, CSV, JSON or HTML")
    _view_options(export)
    export.add_argument(
        "--format",
        choices=("md", "csv", "json", "html"),
        default="md",
        help="md (a README, a paper), csv (every column and interval), json (as show "
        "--json), html (a static page) (default %(default)s)",
    )
    export.add_argument("--out", type=Path, default=None, help="file to write (default stdout)")
    for name, (module, help_text) in WEB.items():
        web = sub.add_parser(name, help=help_text)
        web.__class__ = _lazy_class(type(web))
        web.web_module = module


def _lazy_class(base: type) -> type:
    """A parser that asks the web module for its options only when its action is the one
    given (the page's modules import Gradio and the Hub client: seconds `show` never pays)."""

    class LazyParser(base):
        def parse_known_args(self, args=None, namespace=None):
            module = self.__dict__.pop("web_module", None)
            if module is not None:
                try:
                    importlib.import_module(module).add_arguments(self)
                except ImportError:
                    self.set_defaults(web_missing=module)
            return super().parse_known_args(args, namespace)

    return LazyParser


def _invalid_max() -> float:
    from splice_eval.leaderboard.submission import INVALID_MAX

    return INVALID_MAX


def _baseline_names() -> tuple[str, ...]:
    from splice_eval.leaderboard.references import BASELINES

    return BASELINES


def run(args: argparse.Namespace) -> int:
    if args.action in WEB:
        if getattr(args, "web_missing", None):
            raise UserError(f"splice leaderboard {args.action}: not available in this install")
        return importlib.import_module(WEB[args.action][0]).run(args)
    return {
        "init": run_init,
        "add": run_add,
        "remove": run_remove,
        "rescore": run_rescore,
        "show": run_show,
        "export": run_export,
    }[args.action](args)


def _local(board: str) -> Path:
    if sd.is_hub_id(board):
        raise UserError(f"--board {board}: a Hub board is read-only here; change a local copy")
    return Path(board)


def run_init(args: argparse.Namespace) -> int:
    board = _local(args.board)
    names = None if args.baselines is None else [n for n in args.baselines.split(",") if n]
    which = "those the build's source allows" if names is None else ", ".join(names) or "none"
    print(
        f"splice leaderboard init: seeding {board} from {args.data}: the reference rows, random "
        f"(exact), then scoring the baselines ({which}) on the build",
        flush=True,
    )
    videos, build_id = init_board(
        board,
        args.data,
        baselines=names,
        human=list(args.human),
        seed=args.seed,
        resamples=args.resamples,
    )
    print(
        f"board {board}: build {build_id[:16] or '(none)'}, {videos} videos, reference rows seeded"
    )
    print(open_hint(board))
    return 0


def open_hint(board: Path) -> str:
    """How to look at a board (``init`` and ``splice demo`` end with it)."""
    return (
        f"see it: splice leaderboard show --board {board}  (the page: splice leaderboard "
        f"serve --board {board})"
    )


def init_board(
    board: Path,
    data: str,
    *,
    baselines: Sequence[str] | None,
    human: Sequence[Path] = (),
    seed: int = 0,
    resamples: int = 1000,
) -> tuple[int, str]:
    """A new board of the build ``data`` with its reference rows: made in a hidden folder
    beside it and moved in whole (``baselines`` None: every one the build's source allows;
    the paper's reported rows on a COIN build only). Its video count and build identity."""
    from splice_build.output.card_reader import read_card
    from splice_eval import data_source
    from splice_eval.leaderboard import changes, index, references
    from splice_eval.leaderboard.records import REFERENCE, BoardConfig
    from splice_metric import metric_version

    if board.exists() and (not board.is_dir() or any(board.iterdir())):
        raise UserError(f"--board {board}: already exists and is not an empty folder")
    asked = baselines is not None
    baselines = list(references.BASELINES if baselines is None else baselines)
    unknown = [n for n in baselines if n not in references.BASELINES]
    if unknown:
        raise UserError(
            f"--baselines: unknown {unknown[0]!r} (known: {', '.join(references.BASELINES)})"
        )
    from splice_eval.scoring.baselines import CONFIGS_OF
    from splice_eval.scoring.written_order import unavailable

    # a Hub id: the shards the baselines read, and the text shards' answers
    configs = sorted({"text", *(c for n in baselines for c in CONFIGS_OF[n])})
    local = data_source.local_build(data, configs)
    card = read_card(local)
    for name in list(baselines):
        refused = unavailable(name, card.source)
        if refused is not None and asked:
            raise UserError(f"--baselines: {refused}")
        if refused is not None:
            baselines.remove(name)
    board.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{board.name}.init-", dir=board.parent))
    try:
        found = store.videos_of_build(local, card.build_id)
        cfg = BoardConfig(
            build_id=card.build_id,
            data=str(data),
            metric_version=metric_version(),
            videos=len(found.ids),
            seed=seed,
            resamples=resamples,
            created=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            stand_in=card.stand_in,
            source_title=_source_title(card),
        )
        store.write_config(staged, cfg)
        store.write_videos(staged, found)
        for score in references.paper_scores(card.source):
            slug = "paper-" + store.slug_of(score["provenance"]["model"])
            references.write_reference(staged, slug, score)
        references.write_reference(staged, "random-exact", references.random_exact(found, cfg))
        index.rebuild(staged, cfg)
        with tempfile.TemporaryDirectory() as tmp:
            made = references.baseline_files(local, baselines, Path(tmp), card.build_id)
            for name, files in made:
                changes.add(staged, files, name=f"{name} (baseline)", kind=REFERENCE)
        if human:
            changes.add(staged, list(human), name="human", kind=REFERENCE, allow_partial=True)
        if board.exists():
            board.rmdir()
        os.rename(staged, board)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return len(found.ids), card.build_id


def _source_title(card: CardInfo) -> str:
    """The build's source as its card names it (``splice_build.source.title``); COIN's."""
    title = (card.source_identity or {}).get("title") if card.source != "coin" else None
    return title if isinstance(title, str) and title.strip() else col.COIN


def run_add(args: argparse.Namespace) -> int:
    from splice_eval.leaderboard import changes

    board = _local(args.board)
    store.read_config(board)
    slug, score = changes.add(
        board,
        list(args.predictions),
        meta=args.meta,
        name=args.name,
        allow_partial=args.allow_partial,
        replace=args.replace,
        remove=args.remove,
        allow_invalid=args.allow_invalid,
    )
    for note in score.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    for line in score.get("replaced", []):
        print(line)
    for config, block in score["configs"].items():
        value = block["metrics"][col.DEFAULT_METRIC]
        partial = f", partial: coverage {block['coverage']:.1%}" if block["partial"] else ""
        print(
            f"added {slug} ({config}): {col.DEFAULT_METRIC} {value['value']:.4f} "
            f"[{value['low']:.4f}, {value['high']:.4f}]{partial}"
        )
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from splice_eval.leaderboard import changes

    board = _local(args.board)
    store.read_config(board)
    gone = changes.remove_entry(board, args.name)
    print(f"removed {changes.describe(gone)}")
    print(f"(recorded in {board / store.AUDIT_FILE})")
    return 0


def run_rescore(args: argparse.Namespace) -> int:
    from splice_eval.leaderboard import changes

    board = _local(args.board)
    store.read_config(board)
    changed = changes.rescore(board, progress=not args.no_progress)
    for line in changed:
        print(line)
    failed = sum(changes.NOT_RESCORED in line for line in changed)
    print(
        f"rescored {board}: {len(changed)} change(s)"
        + (f", {failed} entries not" if failed else "")
    )
    return 1 if failed else 0


def _rows(args: argparse.Namespace):
    from splice_eval.leaderboard.table import board_rows, load_board

    board = load_board(args.board)
    return board, board_rows(board, args.config, args.metric)


def run_show(args: argparse.Namespace) -> int:
    from splice_eval.leaderboard import render

    board, rows = _rows(args)
    if args.json:
        print(json.dumps(render.json_document(board, args.config, args.metric), ensure_ascii=False))
    else:
        print(render.terminal(board, rows, args.config, args.metric))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from splice_eval.leaderboard import render

    board, rows = _rows(args)
    text = render.export(board, rows, args.format, args.config, args.metric)
    if args.out is None:
        sys.stdout.write(text)
    else:
        render.write_export(args.out, text)
        print(f"wrote {args.out}")
    return 0
