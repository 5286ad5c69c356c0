"""``splice demo``: the whole benchmark on bundled inputs, since no COIN video can be
downloaded here.

Bundled: real COIN annotation entries (``demo/coin_demo.json``, copied verbatim from COIN,
about two per domain). Rendered: a stand-in source video per entry, of the real duration,
visibly different per step and labelled STAND-IN, so the real pipeline cuts real video at
real annotation times. Then the result is loaded the way users load it
(``load_dataset("./splice-data", "video_text")``, by its path) and a random baseline is
scored with the metric.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

import splice_dataset as schema
from splice_build.demo.present import SOURCES_DIR, build_stand_in, show_build
from splice_build.errors import INTERRUPTED_EXIT, UserError, ignore_further_interrupts
from splice_build.running.executors import add_workers_argument
from splice_build.running.report import load_report
from splice_build.stages import ingest

# The pipeline, the renderer and the prompts (and `datasets`, which `splice_dataset` loads on
# first use) are imported where they are used: they take seconds to import, and `splice demo` says
# what it is doing before that (no phase silent for more than a few seconds).

DEMO_ANNOTATIONS = "demo/coin_demo.json"
# Inside the demo's work folder: the rendered sources, and the build's own work folder
# beside them (a build's work folder may not hold its sources). `ownership` knows the names:
# the README's build after the demo uses this folder as its work folder.


def demo_annotations_path() -> Path:
    """The bundled annotation file, found the same way in a checkout and in a wheel."""
    return Path(str(resources.files("splice_build").joinpath(DEMO_ANNOTATIONS)))


def render_sources(annotations: Path, sources: Path, progress: bool = False) -> Path:
    """Render a stand-in source per entry (kept between runs: rendering is deterministic,
    and `standin.render_source` renames a file into place only once it is complete), with
    a bar of videos when ``progress``."""
    from tqdm.auto import tqdm

    from splice_build.demo import standin

    sources.mkdir(parents=True, exist_ok=True)
    entries = ingest.load_annotations(annotations).entries
    for entry in tqdm(entries, unit="video", desc="stand-ins", disable=not progress):
        target = sources / f"{entry.video_id}.mp4"
        if not target.exists():
            standin.render_source(entry, target)
    return sources


def build_demo(
    out_dir: Path = Path(schema.DEFAULT_BUILD_DIR),
    work_dir: Path | None = None,
    workers: int | None = None,
    progress: bool = False,
    seed: int = 0,
) -> Path:
    """Build the demo dataset folder and return its path."""
    out_dir = Path(out_dir)
    work_dir = Path(work_dir) if work_dir else out_dir.with_name(out_dir.name + "-work")
    annotations = demo_annotations_path()
    sources = render_sources(annotations, work_dir / SOURCES_DIR, progress)
    return build_stand_in(
        annotations, sources, out_dir, work_dir, seed=seed, workers=workers, progress=progress
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(schema.DEFAULT_BUILD_DIR),
        help="output folder (default: %(default)s)",
    )
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: <out>-work)")
    add_workers_argument(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the shuffles and of the random answers scored (default %(default)s)",
    )
    parser.add_argument(
        "--source",
        choices=("coin", "crosstask"),
        default="coin",
        help="coin: real COIN entries (default); crosstask: a synthetic CrossTask-format "
        "release (build/demo/source_demo.py)",
    )
    parser.add_argument(
        "--board",
        type=Path,
        default=None,
        help="leaderboard of the demo build, with its baselines and the paper's rows "
        "(default: <out>-board; a board already there is left as it is)",
    )


def board_of(out: Path) -> Path:
    """The demo's board beside its build, named after it as its work folder is: every
    build gets its own (a board of one build refuses another build's answers)."""
    return out.with_name(out.name + "-board")


def refuse_through_files(option: str, given: Path) -> None:
    """One line when ``given`` (a folder the demo writes) is, or lies under, a regular file:
    before anything is rendered."""
    for path in (given, *given.parents):
        if path.exists() and not path.is_dir():
            raise UserError(f"{option} {given}: {path} is a file, not a folder; choose another")


def check_board(board: Path) -> None:
    """Refuse, before building, a ``--board`` the demo could neither make nor point at: a
    file (or a path through one), or a folder holding something other than a board."""
    from splice_eval.leaderboard import store

    refuse_through_files("--board", board)
    if board.is_dir() and any(board.iterdir()) and not (board / store.BOARD_FILE).is_file():
        raise UserError(
            f"--board {board}: a folder that is not a board (no {store.BOARD_FILE}); "
            "choose another folder"
        )


def make_board(board: Path, out: Path) -> str:
    """The demo's leaderboard (its baselines and the paper's rows) and how to open it; a
    board already there is never replaced (the user may have added to it), and pointed at
    only when it ranks this build."""
    from splice_build.output.card_reader import read_card
    from splice_eval.leaderboard import store
    from splice_eval.leaderboard.command import init_board, open_hint

    if board.exists() and any(board.iterdir()):
        ranked = store.read_config(board).build_id
        built = read_card(out).build_id
        if ranked != built:
            return (
                f"Leaderboard: {board}/ ranks another build ({ranked}, this one is {built}): "
                f"left as it is, and no board made; for this build's: splice demo --out "
                f"{out} --board NEW-FOLDER"
            )
        return f"Leaderboard: {board}/ exists, left as it is. {open_hint(board)}"
    videos, _ = init_board(board, str(out), baselines=("random", "identity", "taxonomy-prior"))
    return (
        f"Leaderboard {board}/: this build's {videos} videos, its baselines and the paper's "
        f"Tables 2 and 5 (as reported). {open_hint(board)}"
    )


def run(args: argparse.Namespace) -> int:
    if args.source != "coin":
        from splice_build.demo import source_demo

        return source_demo.run(args)
    work = args.work or args.out.with_name(args.out.name + "-work")
    board = args.board or board_of(args.out)
    refuse_through_files("--out", args.out)
    refuse_through_files("--work", work)
    check_board(board)
    entries = len(ingest.load_annotations(demo_annotations_path()).entries)
    print(
        f"splice demo: building {args.out}/ from {entries} real COIN annotation entries "
        "on rendered stand-in videos (no COIN video can be downloaded here): render, cut, "
        "validate, then load and score",
        flush=True,
    )
    try:
        out = build_demo(args.out, work, args.workers, progress=True, seed=args.seed)
    except KeyboardInterrupt:
        ignore_further_interrupts()
        print(
            f"splice demo: interrupted; what is rendered and cut is kept in {work}: run the "
            "same command again to resume",
            file=sys.stderr,
        )
        return INTERRUPTED_EXIT
    report = load_report(out)
    where = "" if out.is_absolute() else f" ({out.resolve()})"  # run from docs/: docs/splice-data
    print(f"\nBuilt {out}/{where} from {report['counts']['videos']} real COIN annotation entries.")
    print("The source videos are rendered STAND-INS: no COIN video can be downloaded here.")
    scores = show_build(out, args.seed)
    print(f"invalid_rate: {scores['invalid_rate']:.3f}")
    print(f"\nsplice demo: scoring the baselines for the leaderboard {board}/", flush=True)
    print(make_board(board, out))
    return 0
