"""``splice demo``: the whole benchmark on bundled inputs, since no COIN video can be
downloaded here.

Bundled: real COIN annotation entries (``demo/coin_demo.json``, copied verbatim from COIN,
about two per domain). Rendered: a stand-in source video per entry, of the real duration,
visibly different per step and labelled STAND-IN, so the real pipeline cuts real video at
real annotation times. Then the result is loaded the way users load it
(``load_dataset("splice", "video_text")``) and a random baseline is scored with the metric.
"""

from __future__ import annotations

import argparse
import json
import random
from importlib import resources
from pathlib import Path

import splice_dataset as schema

from . import standin
from .pipeline import BuildConfig, run_build

DEMO_ANNOTATIONS = "demo/coin_demo.json"


def demo_annotations_path() -> Path:
    return Path(str(resources.files("splice_build").joinpath(DEMO_ANNOTATIONS)))


def render_sources(annotations: Path, sources: Path) -> Path:
    """Render a stand-in source per entry (kept between runs: rendering is deterministic)."""
    from . import ingest

    sources.mkdir(parents=True, exist_ok=True)
    for entry in ingest.load_annotations(annotations).entries:
        target = sources / f"{entry.video_id}.mp4"
        if not target.exists():
            tmp = sources / f".{entry.video_id}.tmp.mp4"
            standin.render_source(entry, tmp)
            tmp.replace(target)
    return sources


def build_demo(
    out_dir: Path = Path("splice"),
    work_dir: Path | None = None,
    workers: int | None = None,
    progress: bool = False,
    seed: int = 0,
) -> Path:
    """Build the demo dataset folder and return its path."""
    out_dir = Path(out_dir)
    work_dir = Path(work_dir) if work_dir else out_dir.with_name(out_dir.name + "-work")
    annotations = demo_annotations_path()
    sources = render_sources(annotations, work_dir / "stand-in-sources")
    result = run_build(
        BuildConfig(
            annotations=annotations,
            videos=sources,
            out=out_dir,
            work=work_dir,
            seed=seed,
            workers=workers,
            stand_in=True,
            progress=progress,
        )
    )
    if result.problems:
        raise RuntimeError(
            "demo build failed validation:\n" + "\n".join(str(p) for p in result.problems)
        )
    return out_dir


def score_random_baseline(out_dir: Path, seed: int = 0) -> dict:
    """Load the built folder like a user would and score random answers given as text."""
    import evaluate

    import splice_metric

    dataset = schema.load("video_text", source=str(out_dir))
    rng = random.Random(seed)
    predictions, references = [], []
    for row in dataset:
        labels = list(range(1, row[schema.NUM_CLIPS] + 1))
        rng.shuffle(labels)
        predictions.append("<order>" + ", ".join(f"Video {k}" for k in labels) + "</order>")
        references.append(row[schema.ANSWER]["order"])
    metric = evaluate.load(str(Path(splice_metric.__file__).parent), "text")
    return metric.compute(predictions=predictions, references=references, random_baseline=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("splice"), help="output folder")
    parser.add_argument("--work", type=Path, default=None, help="work folder")
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    out = build_demo(args.out, args.work, args.workers, progress=True, seed=args.seed)
    report = json.loads((out / "build_report.json").read_text("utf-8"))
    print(f"\nBuilt {out}/ from {report['counts']['videos']} real COIN annotation entries")
    print("(source videos are rendered STAND-INS: no COIN video can be downloaded here)")
    print((out / "build_report.txt").read_text("utf-8"))
    scores = score_random_baseline(out, args.seed)
    print("Random baseline, answered as text, parsed and scored with splice_metric:")
    print(json.dumps(scores, indent=1, default=str)[:3000])
    return 0
