"""``splice baseline NAME``: reference answers that need no model, in the one prediction format.

- ``random``: a seeded uniform permutation per video (its expected score is known exactly;
  the report shows the metric's exact expectation beside the sampled run).
- ``identity``: the clips in the order they are shown (``Video 1, Video 2, ...``). The
  shuffle is uniform, so this scores like random in expectation; a build whose identity
  score is far from it has a broken shuffle.
- ``taxonomy-prior`` (text only): each caption is a COIN step label; order the clips by the
  position of their step in the task's step list in the COIN taxonomy. COIN lists a task's
  steps roughly in the order they are done, so this measures how much the text config can
  be solved by a language prior with no understanding of the clips (paper Section 7.3).
  Captions naming the same step keep their label order (nothing tells them apart).
- ``visual-similarity`` (video only): the shortcut the paper suspects in Section 7.5.
  Every clip is summarised by colour histograms of its first and last sampled frames; the
  clips are chained so that each clip's last frame leads to the most similar first frame
  of a clip not yet used. The chain starts from the clip whose first frame is least
  similar to the last frame of any other clip (the one that most looks like nothing comes
  before it). Similarity is histogram intersection; ties go to the lower label.
- ``written-order`` (text only; non-COIN sources that write one, with ``--annotations``):
  the order the source writes its task's steps in (`written_order`). On a non-COIN build
  ``taxonomy-prior`` is refused in one line, as is ``written-order`` on a source without one.

Every answer is written as the model-style text ``<order>Video 2, Video 1</order>`` and
parsed back with ``splice_metric.parse_order``, the project's one parser of answers.

``random --format pairwise|choice`` answers the question formats (``splice_formats``): a
seeded uniform option per question, written as a model's ``<answer>...</answer>`` and read
back by the metric's option parsers; its expected accuracy is exactly the mean of
1/num_options, which ``splice score`` shows beside it as ``chance``.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import splice_dataset as schema
import splice_formats
import splice_metric
from splice_build.errors import UserError, as_user_error, output_path, read_bytes
from splice_build.output.card_reader import read_card
from splice_build.output.card_tables import markdown_table
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, parse_annotation_json
from splice_eval import data_source
from splice_eval.builddata import iter_rows
from splice_eval.predictions import Prediction, project_version, write_predictions
from splice_eval.run import prompts, sampling
from splice_eval.scoring import written_order
from splice_metric import parse_order
from splice_metric.questions import answer_text, read_answer

NAMES = ("random", "identity", "taxonomy-prior", "visual-similarity")
# NAMES answer any build of their source on their own; written-order needs the source's files
CHOICES = (*NAMES, written_order.NAME)
# Which configs a baseline can answer: it only reads inputs every one of them has.
CONFIGS_OF: dict[str, tuple[str, ...]] = {
    "random": schema.CONFIGS,
    "identity": schema.CONFIGS,
    "taxonomy-prior": ("text", "video_text"),
    "visual-similarity": ("video", "video_text"),
    written_order.NAME: ("text", "video_text"),
}
HIST_BINS = 8  # per RGB channel: 512-bin colour histograms
FRAMES_PER_CLIP = 8  # sampled uniformly; the first and last samples are used
HIST_LONG_SIDE = 112  # colour histograms need no detail; small frames decode and bin fast


# --- the four answer rules ------------------------------------------------------------


def random_order(seed: int, video_id: str, num_clips: int) -> list[int]:
    """A uniform permutation of the labels, fixed by (seed, video id)."""
    labels = list(range(1, num_clips + 1))
    random.Random(f"splice-random-baseline:{seed}:{video_id}").shuffle(labels)
    return labels


def identity_order(num_clips: int) -> list[int]:
    return list(range(1, num_clips + 1))


def taxonomy_prior_order(task: str, captions: Sequence[str]) -> list[int]:
    """Labels sorted by the taxonomy position of their caption's step within the task.

    A caption that is not a step of the task (not produced by a SPLICE build, whose ingest
    checks every label) goes after the known ones."""
    from splice_build.stages import taxonomy

    try:
        steps = taxonomy.load().task(task).steps
    except KeyError as exc:
        raise ValueError(f"taxonomy-prior: {exc.args[0]}") from None
    position = {s.label: i for i, s in enumerate(steps)}
    unknown = len(steps)
    keyed = [(position.get(c.strip(), unknown), k) for k, c in enumerate(captions, 1)]
    return [k for _, k in sorted(keyed)]


def colour_histogram(frame: np.ndarray, bins: int = HIST_BINS) -> np.ndarray:
    """Normalised joint RGB histogram of an HxWx3 uint8 frame."""
    q = (frame.reshape(-1, 3).astype(np.uint16) * bins) >> 8
    idx = (q[:, 0] * bins + q[:, 1]) * bins + q[:, 2]
    hist = np.bincount(idx, minlength=bins**3).astype(np.float64)
    return hist / max(hist.sum(), 1.0)


def chain_order(first: Sequence[np.ndarray], last: Sequence[np.ndarray]) -> list[int]:
    """Greedy last-frame -> first-frame chain over clips (see the module docstring)."""
    n = len(first)
    if n != len(last):
        raise ValueError("need a first and a last histogram per clip")
    if n == 0:
        return []
    # sim[i, j]: how well clip j's first frame follows clip i's last frame.
    sim = np.array([[np.minimum(last[i], first[j]).sum() for j in range(n)] for i in range(n)])
    np.fill_diagonal(sim, -np.inf)
    best_predecessor = sim.max(axis=0) if n > 1 else np.zeros(1)
    start = int(np.argmin(best_predecessor))  # argmin takes the lowest index on ties
    chain, used = [start], {start}
    while len(chain) < n:
        row = sim[chain[-1]].copy()
        row[list(used)] = -np.inf
        nxt = int(np.argmax(row))
        chain.append(nxt)
        used.add(nxt)
    return [i + 1 for i in chain]


def clip_histograms(clip: bytes, frames: int = FRAMES_PER_CLIP) -> tuple[np.ndarray, np.ndarray]:
    """Histograms of the first and last of ``frames`` uniformly sampled frames of a clip
    (``sample_frames``' bin centres: the first lies 1/16 of the clip in for 8 frames)."""
    sampled = sampling.sample_frames(clip, num_frames=frames, long_side=HIST_LONG_SIDE).frames
    if len(sampled) == 0:
        raise ValueError("clip has no decodable frames")
    return colour_histogram(sampled[0]), colour_histogram(sampled[-1])


# --- running on a build ---------------------------------------------------------------


def _columns(name: str, config: str) -> list[str]:
    cols = [schema.VIDEO_ID, schema.NUM_CLIPS]
    if name in ("taxonomy-prior", written_order.NAME):
        cols += [schema.TASK, schema.CAPTIONS]
    if name == "visual-similarity":
        cols += [schema.CLIPS]
    assert all(c in schema.MODEL_FACING[config] for c in cols)  # never the answer
    return cols


def answer(
    name: str, row: Mapping, seed: int = 0, orders: written_order.Orders | None = None
) -> list[int]:
    """One baseline's order for one dataset row (model-facing columns only; ``orders``:
    written-order's, `written_order.read_orders`)."""
    n = int(row[schema.NUM_CLIPS])
    vid = row[schema.VIDEO_ID]
    if name == "random":
        return random_order(seed, vid, n)
    if name == "identity":
        return identity_order(n)
    if name == "taxonomy-prior":
        return taxonomy_prior_order(row[schema.TASK], row[schema.CAPTIONS])
    if name == written_order.NAME and orders is not None:
        return written_order.written_order(orders, row[schema.TASK], row[schema.CAPTIONS])
    if name == "visual-similarity":
        hists = []
        for k, clip in enumerate(row[schema.CLIPS], 1):
            try:
                hists.append(clip_histograms(clip["bytes"]))
            except Exception as exc:  # noqa: BLE001 - name the video and clip
                raise ValueError(f"video {vid}: Video {k}: {exc}") from exc
        return chain_order([h[0] for h in hists], [h[1] for h in hists])
    raise ValueError(f"unknown baseline {name!r}; expected one of {NAMES}")


def baseline_metadata(name: str, config: str, seed: int, **more: object) -> dict:
    """The prediction file's metadata line: which rule answered, with which seed."""
    metadata = {"producer": "splice baseline", "model": name, "config": config, **more}
    if name == "random" or more:  # --coin runs shuffle with the seed too
        metadata["seed"] = seed
    return {**metadata, "splice_version": project_version()}


def run_baseline(
    name: str,
    build: str | Path,
    config: str,
    seed: int = 0,
    orders: written_order.Orders | None = None,
) -> Iterator[Prediction]:
    """Predictions of a baseline for every video of a build's config (``orders``: the
    written order, for written-order only)."""
    if name not in NAMES and not (name == written_order.NAME and orders is not None):
        raise ValueError(f"unknown baseline {name!r}; expected one of {NAMES}")
    if config not in CONFIGS_OF[name]:
        raise ValueError(f"baseline {name!r} answers configs {CONFIGS_OF[name]}, not {config!r}")
    batch = 2 if name == "visual-similarity" else 256
    for row in iter_rows(build, config, _columns(name, config), batch_size=batch):
        raw = prompts.answer_text(answer(name, row, seed, orders))
        extra = {"seed": seed} if name == "random" else {}
        yield Prediction(
            video_id=row[schema.VIDEO_ID],
            config=config,
            model=name,
            raw_output=raw,
            order=parse_order(raw),
            extra=extra,
        )


def random_option(seed: int, question_id: str, num_options: int) -> int:
    """A uniform option (1-based) of a question, fixed by (seed, question id)."""
    return random.Random(f"splice-random-baseline:{seed}:{question_id}").randint(1, num_options)


def run_question_baseline(
    build: str | Path, config: str, fmt: str, seed: int = 0
) -> Iterator[Prediction]:
    """The random baseline's answers to every ``fmt`` question of a build's config, read
    from the question rows' model-facing columns (the id, the labels shown, the options)."""
    rows = schema.load(config, source=str(build), format=fmt, decode=False)
    for row in rows.select_columns([schema.QUESTION_ID, schema.LABELS, schema.OPTIONS]):
        qid, labels, k = row[schema.QUESTION_ID], row[schema.LABELS], len(row[schema.OPTIONS])
        raw = answer_text(random_option(seed, qid, k), fmt, labels)
        option = read_answer(raw, fmt, k, labels)
        yield Prediction(qid, config, "random", raw, [option], {"seed": seed})


# --- the taxonomy prior on COIN's own annotation file ----------------------------------


@dataclass(frozen=True)
class PriorCase:
    video_id: str
    task: str
    num_clips: int
    reference: list[int]  # chronological labels, as a build would store them
    prediction: list[int]


def taxonomy_prior_on_coin(database: Mapping, seed: int = 0) -> list[PriorCase]:
    """The taxonomy prior on COIN.json entries (``{"database": ...}``'s value), no video.

    Entries go through the build's own ingest (validation, aliases) and its 2..7-step
    rule; each is shuffled with the build's permutation for ``seed``, so the numbers are
    what the text config of a full build would give."""
    from splice_build.stages import ingest, shuffle

    entries, _skips = ingest.parse_database(database)
    cases = []
    for e in entries:
        n = e.num_steps
        if not schema.MIN_CLIPS <= n <= schema.MAX_CLIPS:
            continue
        perm = shuffle.permutation(seed, e.video_id, n)  # label k shows chronological perm[k-1]
        captions = [e.steps[p].label for p in perm]
        reference = list(shuffle.answer_order(perm))
        cases.append(
            PriorCase(e.video_id, e.task, n, reference, taxonomy_prior_order(e.task, captions))
        )
    return cases


def score_cases(cases: Iterable[PriorCase]) -> dict[str, dict[str, float]]:
    """Mean binary/Hamming/LCS/edit overall and by clip count, from the metric."""
    cases = list(cases)
    # the metric module's names load on first use: they import `evaluate` (seconds)
    result = splice_metric.score([c.prediction for c in cases], [c.reference for c in cases])
    cells = {"all": result, **{str(n): cell for n, cell in result["by_num_clips"].items()}}
    return {
        key: {"videos": cell["count"], **{m: cell[m] for m in splice_metric.PAPER_METRICS}}
        for key, cell in cells.items()
    }


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=CHOICES, help="the baseline: %(choices)s")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", help=data_source.DATA_HELP)
    src.add_argument(
        "--coin",
        type=Path,
        nargs="?",
        const=BUNDLED_ANNOTATIONS,
        help="taxonomy-prior only: a COIN.json-format file, scored without any video (a bare "
        f"--coin: the bundled annotation file, {BUNDLED_ANNOTATIONS.name})",
    )
    defaults = "; ".join(f"{name}: {configs[0]}" for name, configs in CONFIGS_OF.items())
    parser.add_argument(
        "--config",
        choices=schema.CONFIGS,
        default=None,
        help=f"config to answer (default, by baseline: {defaults})",
    )
    parser.add_argument(
        "--annotations",
        type=Path,
        default=None,
        help=f"{written_order.NAME} only: the source's files the build read (splice build's "
        "--annotations: CrossTask's release folder, HT-Step's data folder)",
    )
    parser.add_argument("--out", type=Path, required=True, help="predictions JSONL to write")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace --out when it exists (refused otherwise)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed (random; --coin shuffle; default %(default)s)"
    )
    parser.add_argument(
        "--format",
        choices=splice_formats.FORMATS,
        default=splice_formats.ORDER,
        help="random only: answer the order task (default) or the pairwise / choice questions",
    )


def run(args: argparse.Namespace) -> int:
    output_path(args.out, "--out")
    if args.out.exists() and not args.overwrite:  # an earlier run's answers, or a model's
        raise UserError(f"--out {args.out}: exists; pass --overwrite to replace it")
    if args.coin is not None:
        return _run_coin(args)
    config = args.config or CONFIGS_OF[args.name][0]
    asked = args.format != splice_formats.ORDER
    if asked and args.name != "random":
        raise UserError(f"--format {args.format}: only the random baseline answers questions")
    fmt = {"format": args.format, "question_seed": splice_formats.DEFAULT_SEED} if asked else {}
    data = data_source.local_build(args.data, sorted({config, "text"}))
    source = read_card(data).source
    refused = written_order.unavailable(args.name, source)
    if refused is not None:
        raise refused
    orders = None
    if args.annotations is not None and args.name != written_order.NAME:
        raise UserError(f"--annotations: {written_order.NAME} only, not {args.name}")
    if args.name == written_order.NAME:
        orders = written_order.read_orders(source, args.annotations)
    try:
        path = write_predictions(
            args.out,
            run_question_baseline(data, config, args.format, args.seed)
            if asked
            else run_baseline(args.name, data, config, args.seed, orders),
            baseline_metadata(args.name, config, args.seed)
            | {"build_id": read_card(data).build_id or None}  # the build answered
            | fmt,
        )
    except (ValueError, OSError) as exc:  # UserError from the readers, unknown tasks
        raise as_user_error(exc) from exc
    print(f"wrote {path}")
    return 0


def _run_coin(args: argparse.Namespace) -> int:
    if args.name != "taxonomy-prior":
        raise UserError("--coin works with taxonomy-prior only")
    data = parse_annotation_json(read_bytes(args.coin, "annotation file"), args.coin)
    if not isinstance(data, dict):
        raise UserError(f'{args.coin}: no "database" object; expected COIN.json format')
    # said once the file is read (a refusal is then its one line), before the slow part
    print(
        f"splice baseline taxonomy-prior: ordering the videos of {args.coin} by their steps' "
        "positions in COIN's task step lists, then scoring them",
        flush=True,
    )
    cases = taxonomy_prior_on_coin(data.get("database", data), args.seed)
    write_predictions(
        args.out,
        (
            Prediction(
                c.video_id,
                "text",
                "taxonomy-prior",
                prompts.answer_text(c.prediction),
                c.prediction,
                {"reference": c.reference, "task": c.task, "source": args.coin.name},
            )
            for c in cases
        ),
        baseline_metadata("taxonomy-prior", "text", args.seed, source=args.coin.name),
    )
    print(markdown_prior_table(score_cases(cases)))
    return 0


def markdown_prior_table(scores: Mapping[str, Mapping[str, float]]) -> str:
    rows = [
        [key, str(s["videos"]), *(f"{s[m]:.4f}" for m in splice_metric.PAPER_METRICS)]
        for key, s in scores.items()
    ]
    return markdown_table(("clips", "videos", "binary", "Hamming", "LCS", "edit"), rows)
