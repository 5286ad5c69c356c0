"""What both demos show once their build is made (`run` for COIN, `source_demo` for another
source): the build loaded as a user loads it, random answers scored through
``evaluate.load``, the first row's prompt and answer, and the score table. Its own module so
that the two demos share it without importing each other."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import splice_dataset as schema
from splice_build.running.ownership import DEMO_CUTS, DEMO_SOURCES

SOURCES_DIR = DEMO_SOURCES
CUTS_DIR = DEMO_CUTS


def build_stand_in(
    annotations: Path,
    videos: Path,
    out_dir: Path,
    work_dir: Path,
    *,
    seed: int,
    workers: int | None,
    progress: bool,
    source: str = "coin",
) -> Path:
    """A demo's build of its rendered stand-ins (the card says so), cut in
    ``work_dir/CUTS_DIR``; one that fails validation is an error of the demo, not the user's."""
    from splice_build.running.pipeline import BuildConfig, run_build

    result = run_build(
        BuildConfig(
            annotations=annotations,
            videos=videos,
            out=out_dir,
            work=work_dir / CUTS_DIR,
            seed=seed,
            workers=workers,
            stand_in=True,
            progress=progress,
            source=source,
        )
    )
    if result.problems:
        raise RuntimeError(
            "demo build failed validation:\n" + "\n".join(str(p) for p in result.problems)
        )
    return out_dir


def score_random_baseline(dataset: Any, seed: int = 0) -> dict:
    """Score random answers, given as model-style text, on a loaded build
    (`load_like_a_user`) through the metric loaded with ``evaluate.load``."""
    import evaluate

    import splice_metric
    from splice_eval.run import prompts

    rng = random.Random(seed)
    predictions, references = [], []
    for row in dataset:
        labels = list(range(1, row[schema.NUM_CLIPS] + 1))
        rng.shuffle(labels)
        predictions.append(prompts.answer_text(labels))
        references.append(row[schema.ANSWER]["order"])
    metric = evaluate.load(splice_metric.path(), "text")
    return metric.compute(
        predictions=predictions,
        references=references,
        random_baseline=True,
        confidence_level=0.95,
        seed=seed,
    )


def load_like_a_user(out_dir: Path) -> Any:
    """The build loaded by its path, as the README loads it (``./splice-data`` by default)."""
    return schema.load("video_text", source=str(out_dir))


METRICS = ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance", "kendall_tau")


def walkthrough(row: dict[str, Any]) -> str:
    """What a user does next, shown on the first video: prompt, answer, parse, score."""
    from splice_eval.run import prompts

    prompt = prompts.build_prompt(row, "video_text")
    lines = [
        f"First row: video {row[schema.VIDEO_ID]} ({row[schema.TASK]}, {row[schema.DOMAIN]}), "
        f"{row[schema.NUM_CLIPS]} clips: " + ", ".join(c["path"] for c in row[schema.CLIPS]),
        "Prompt (video_text config, clips attached as Video 1..n):",
        "  " + prompt.text.replace("\n", "\n  ")[:1200],
        *(f"  [{c.heading}] <clip {c.number}>" for c in prompt.clips),
        f"Answer kept apart from the inputs: answer.order = {row[schema.ANSWER]['order']}",
    ]
    return "\n".join(lines)


def score_table(scores: dict) -> str:
    base = scores["random_baseline"]
    rows = [f"{'metric':18s} {'random answers':>24s} {'exact expectation':>18s}"]
    for m in METRICS:
        ci = scores.get("confidence_intervals", {}).get(m)
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        rows.append(f"{m:18s} {scores[m]:8.4f}{interval:>16s} {base[m]:18.4f}")
    return "\n".join(rows)


def show_build(out: Path, seed: int) -> dict:
    """What both demos print once built: the build report, the build loaded by its path,
    the first row's prompt and answer, and random answers scored; the scores."""
    from splice_build.running.report import REPORT_TXT

    print((out / REPORT_TXT).read_text("utf-8"))
    dataset = load_like_a_user(out)
    # a relative folder as ./NAME: a bare name is a Hub id wherever no such folder is
    shown = out if out.is_absolute() else f"./{out}"
    print(f'Loaded with load_dataset("{shown}", "video_text") (splice_dataset.load).')
    print(walkthrough(dataset[0]))
    scores = score_random_baseline(dataset, seed)
    print(
        f"\nRandom answers for {scores['count']} videos, given as text, parsed and scored "
        "with evaluate.load(splice_metric.path()); 95% bootstrap intervals:"
    )
    print(score_table(scores))
    return scores
