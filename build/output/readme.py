"""The repository's README.md: the card of the full build, rendered from the same template as
every build's card, with the project's front page as its introduction (``docs/readme_intro.md``:
the summary, the quick start and where the manual in ``docs/`` covers what).

No COIN video can be fetched where this repository is developed, so the full build's
statistics are projected from the annotation file alone (a clip's duration is its segment's
length; probing and cutting may still drop videos). The README says so, and a test checks
that the committed README.md is what this module renders.

    python -m splice_build.output.readme --annotations COIN.json [--out README.md]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from splice_build.output import card
from splice_build.output.stats import VideoStats
from splice_build.output.writing.shards import WriteResult
from splice_build.records import CutSettings
from splice_build.stages import ingest, select
from splice_dataset import SPLIT

DOCS = Path(__file__).resolve().parents[2] / "docs"
INTRO = "readme_intro.md"
TITLE = "SPLICE: put the shuffled event clips of instructional videos back in order"


def projected_stats(annotations: Path) -> tuple[list[VideoStats], ingest.IngestResult]:
    """Per-video statistics of the full build as the annotations alone predict them."""
    result = ingest.load_annotations(annotations)
    chosen = select.select(result.entries).selected
    # A clip's duration is its segment's length (fields in VideoStats's order).
    videos = [
        VideoStats(e.video_id, e.task, e.domain, e.recipe_type, e.subset, e.num_steps, d)
        for e in chosen
        for d in [sum(s.end - s.start for s in e.steps)]
    ]
    return videos, result


def render_readme(annotations: Path, docs: Path = DOCS) -> str:
    """README.md as ``card.render_card`` renders it, so the front page and every build's
    card share one template and cannot disagree on the schema, loading or licence. The
    manual lives in ``docs/``, not here: README.md is the dataset card, and the intro's
    "Using this repository" replaces the card's link to the code (it is that code)."""
    videos, result = projected_stats(annotations)
    in_annotations = len(result.entries) + len(result.skips)
    written = WriteResult(out_dir=Path("."), split=SPLIT, config_shards={}, videos=tuple(videos))
    provenance = card.Provenance(
        annotations_file=Path(annotations).name,
        annotations_sha256=result.sha256,
        seed=0,
        cut_settings=CutSettings().encoding(),
        videos_in_annotations=in_annotations,
        videos_included=len(videos),
        videos_skipped=in_annotations - len(videos),
        software={},
    )
    intro = (docs / INTRO).read_text("utf-8")
    return card.render_card(written, provenance, title=TITLE, intro=intro, built_with="")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the repository README.md.")
    ingest.add_annotations_argument(parser)
    parser.add_argument("--out", type=Path, default=Path("README.md"))
    args = parser.parse_args(argv)
    args.out.write_text(render_readme(args.annotations), "utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
