"""``splice demo --source crosstask``: today's demo on another source than COIN.

Bundled: a synthetic slice in CrossTask's release format (``data/crosstask_demo/``: task
cards, one annotation file per video, ``videos.csv``; made up here, its SOURCES.md says
so), with a video for each of the adapter's rules. Rendered: a stand-in source video per
entry the adapter keeps (`standin.render_source`, as the COIN demo renders its own). Then
the real pipeline builds it (``--source crosstask``), it is loaded as users load it, random
answers are scored with the metric, and a leaderboard is made with the baselines this
source allows (no paper rows: they are COIN's).
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from splice_build.errors import INTERRUPTED_EXIT, ignore_further_interrupts
from splice_build.running.report import load_report

# --source name -> its bundled demo release, inside the splice_build package
DEMOS = {"crosstask": "data/crosstask_demo"}


def demo_release(source: str) -> Path:
    """The bundled release of ``source``, found the same way in a checkout and in a wheel."""
    return Path(str(resources.files("splice_build").joinpath(DEMOS[source])))


def render_sources(source: str, release: Path, folder: Path, progress: bool = False) -> Path:
    """A stand-in video per entry the adapter keeps (kept between runs: rendering is
    deterministic and renames a file into place only once it is complete)."""
    from tqdm.auto import tqdm

    from splice_build.demo import standin
    from splice_build.sources import registry

    folder.mkdir(parents=True, exist_ok=True)
    entries = registry.load(source, release).entries
    for entry in tqdm(entries, unit="video", desc="stand-ins", disable=not progress):
        target = folder / f"{entry.video_id}.mp4"
        if not target.exists():
            standin.render_source(entry, target)
    return folder


def build_source_demo(
    source: str,
    out_dir: Path,
    work_dir: Path,
    workers: int | None = None,
    progress: bool = False,
    seed: int = 0,
) -> Path:
    """Build ``source``'s demo folder (refused if it fails validation) and return it."""
    from splice_build.demo.present import SOURCES_DIR, build_stand_in

    release = demo_release(source)
    videos = render_sources(source, release, work_dir / SOURCES_DIR, progress)
    return build_stand_in(
        release, videos, out_dir, work_dir, seed=seed, workers=workers, progress=progress,
        source=source,
    )  # fmt: skip


def make_board(board: Path, out: Path) -> str:
    """The demo's leaderboard: the baselines this source allows, no paper rows (COIN's); a
    folder already there is left as it is."""
    from splice_eval.leaderboard.command import init_board, open_hint

    if board.exists() and any(board.iterdir()):
        return f"Leaderboard: {board}/ exists, left as it is. {open_hint(board)}"
    videos, _ = init_board(board, str(out), baselines=None)
    return (
        f"Leaderboard {board}/: this build's {videos} videos and the baselines its source "
        f"allows (the paper's rows are COIN's: not shown). {open_hint(board)}"
    )


def run(args: argparse.Namespace) -> int:
    from splice_build.demo.present import show_build
    from splice_build.sources import registry

    title = registry.card(args.source).title
    print(
        f"splice demo: building {args.out}/ from a synthetic {title}-format release "
        f"(bundled: {DEMOS[args.source]}/) on rendered stand-in videos: render, cut, "
        "validate, then load and score",
        flush=True,
    )
    work = args.work or args.out.with_name(args.out.name + "-work")
    try:
        out = build_source_demo(args.source, args.out, work, args.workers, True, args.seed)
    except KeyboardInterrupt:
        ignore_further_interrupts()
        print(
            f"splice demo: interrupted; what is rendered and cut is kept in {work}: run the "
            "same command again to resume",
            file=sys.stderr,
        )
        return INTERRUPTED_EXIT
    report = load_report(out)
    print(f"\nBuilt {out}/ (--source {args.source}) from {report['counts']['videos']} entries.")
    print(f"The annotations are synthetic and the videos rendered STAND-INS, not {title}'s.")
    show_build(out, args.seed)
    print(f"\nsplice demo: scoring the baselines for the leaderboard {args.board}/", flush=True)
    print(make_board(args.board, out))
    return 0
