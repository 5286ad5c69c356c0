"""``splice annotate``: the paper's human ordering protocol (Sections 3.3-3.4, Appendix A.5).

``export`` turns a build into annotator packages. Annotators work in teams of two; every
video of a team is ordered by both of its annotators, once per modality, with the
modalities flipped between them (Section 3.3): annotator A orders half of the team's
videos as video only and the other half as video+text, annotator B the reverse. Each
ordering task is a numbered folder of ``random_part_1.mp4`` .. ``random_part_n.mp4``
(shuffled again per annotator, so the two annotators of a video never share a numbering),
with the step caption burned into the frames for video+text (A.5). Folder numbers are
unique across the whole export, so a filled sheet identifies its annotator by itself.
The organiser keeps ``key.json`` (folder -> video, modality, parts); it never goes out.

``ingest`` validates the filled ``folder,order`` sheets line by line and applies the
rules: a video is inconclusive (excluded by the curation file) only if both annotators
marked it ``unk``; if one gave an order the video stays; best guesses (``unk [2, 1, 3]``)
are kept as that annotator's prediction. It writes the curation file ``splice build
--curation`` applies, the human predictions per modality in the one prediction format, and
inter-annotator agreement.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import splice_dataset as schema
from splice_build.cli import int_at_least
from splice_build.errors import UserError, output_path, read_text
from splice_build.output.card_reader import read_card
from splice_eval import data_source
from splice_eval.human.app import cli as app_cli
from splice_eval.human.app.layout import (
    INSTRUCTIONS_NAME,
    KEY_NAME,
    MODALITY_DIRS,
    SHEET_NAME,
    part_name,
)
from splice_eval.human.sheets import SHEET_HEADER, SheetError, read_sheet
from splice_eval.predictions import HUMAN_MODEL, Prediction, project_version, write_predictions
from splice_metric import score

MODALITIES = ("video", "video_text")  # the two modalities humans ordered (Section 3.3)
# Symmetric in the two orders, so neither annotator has to play the reference.
AGREEMENT_METRICS = (
    "binary_accuracy",
    "hamming_accuracy",
    "lcs_ratio",
    "edit_distance",
    "kendall_tau",
)

INSTRUCTIONS = """\
# Ordering instructions

Your job: put the parts of each video back into the order in which they happened.

1. Each numbered folder ({modality_list}) is one video, cut at its steps and shuffled.
   Its parts are `random_part_1.mp4`, `random_part_2.mp4`, ... The numbers say nothing
   about the true order.
2. In `video_text/` folders the step's short description is written into the picture.
   Use it as extra context; in `video_only/` folders you only have the pictures.
3. Watch every part. Decide the order from what you see (and read): what has to happen
   before what, what state things are in, where people and objects are.
4. In `sheet.csv`, write the order on the folder's line as the part numbers from first to
   last, in square brackets: `[2, 3, 1]` means part 2 happened first, then part 3, then
   part 1. Every part number appears exactly once.
5. Write `unk` only when the order cannot be told, and only for one of these reasons:
   - the same instruction is shown twice, separately (e.g. two people each demonstrating it);
   - one continuous action runs over several parts with nothing that tells them apart;
   - the parts show unrelated actions with nothing linking them.
   Still give your best guess after it: `unk [3, 1, 2]`.
6. Do not look anything up (no search, no original video). Work alone; do not discuss
   folders with your team mate. Fill in every line, then send `sheet.csv` back.
"""


# --- assignment -----------------------------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    """One ordering task: a folder given to one annotator, with its private answer key."""

    folder: int
    annotator: str
    team: int
    video_id: str
    config: str  # "video" or "video_text"
    parts: tuple[int, ...]  # parts[k - 1] is the dataset label shown as random_part_k


def assign(num_clips: dict[str, int], annotators: Sequence[str], seed: int = 0) -> list[Assignment]:
    """Spread videos over teams of two and give each video to both team members, once per
    modality, flipped between them (Section 3.3). Deterministic in (videos, annotators, seed)."""
    if len(annotators) < 2 or len(annotators) % 2:
        raise UserError(
            f"--annotators: need an even number (>= 2) of annotators, got {list(annotators)}"
        )
    if len(set(annotators)) != len(annotators):
        raise UserError(f"--annotators: annotator names must be distinct: {list(annotators)}")
    for name in annotators:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise UserError(f"--annotators: name {name!r}: use letters, digits, '-' or '_'")
    teams = [tuple(annotators[i : i + 2]) for i in range(0, len(annotators), 2)]
    rng = random.Random(f"splice-annotate:{seed}")
    videos = sorted(num_clips)
    rng.shuffle(videos)
    per_annotator: dict[str, list[tuple[str, str, int]]] = {a: [] for a in annotators}
    for i, vid in enumerate(videos):
        team = i % len(teams)
        a, b = teams[team]
        # Alternate which half a video falls in, so each annotator gets both modalities.
        first = MODALITIES[(i // len(teams)) % 2]
        second = MODALITIES[1 - MODALITIES.index(first)]
        per_annotator[a].append((vid, first, team))
        per_annotator[b].append((vid, second, team))
    out: list[Assignment] = []
    folder = 0
    for name in annotators:
        # Folders of one modality together, like the paper's sets of 900.
        tasks = sorted(per_annotator[name], key=lambda t: (MODALITIES.index(t[1]), t[0]))
        for vid, config, team in tasks:
            folder += 1
            parts = list(range(1, num_clips[vid] + 1))
            random.Random(f"splice-annotate:{seed}:{name}:{vid}").shuffle(parts)
            out.append(Assignment(folder, name, team, vid, config, tuple(parts)))
    return out


def write_key(path: Path, build: Path, seed: int, assignments: Sequence[Assignment]) -> None:
    data = {
        "build": str(build),
        # the build's identity, which the human predictions then record (`ingest`)
        "build_id": read_card(build).build_id or None,
        "seed": seed,
        "assignments": [asdict(a) for a in assignments],
    }
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def read_key(path: str | Path) -> dict[int, Assignment]:
    path = Path(path)
    text = read_text(path, "annotation key")
    try:
        data = json.loads(text)
        items = [Assignment(**{**a, "parts": tuple(a["parts"])}) for a in data["assignments"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not a SPLICE annotation key ({exc})") from None
    return {a.folder: a for a in items}


def key_build_id(path: str | Path) -> str | None:
    """The identity of the build a key's export was made from (None for a key written
    before keys recorded it)."""
    data = json.loads(read_text(Path(path), "annotation key"))
    return data.get("build_id") if isinstance(data, dict) else None


# --- export ----------------------------------------------------------------------------


def export(
    build: str | Path,
    out: str | Path,
    annotators: Sequence[str] = ("A1", "B1", "A2", "B2"),
    seed: int = 0,
    limit: int | None = None,
    progress: bool = False,
) -> list[Assignment]:
    """Write one package per annotator under ``out/<annotator>/`` and ``out/key.json``;
    with ``progress``, a bar of videos (burning captions takes about a second a video)."""
    from tqdm.auto import tqdm

    from splice_eval.builddata import iter_rows
    from splice_eval.human import burn

    build, out = Path(build), Path(out)
    cols = [schema.VIDEO_ID, schema.NUM_CLIPS]
    counts = {r[schema.VIDEO_ID]: r[schema.NUM_CLIPS] for r in iter_rows(build, "text", cols)}
    if limit is not None:
        counts = dict(sorted(counts.items())[:limit])
    assignments = assign(counts, annotators, seed)
    if progress:  # the build is readable: say what comes, before the slow part
        print(
            f"splice annotate export: {len(assignments)} ordering tasks of {len(counts)} videos "
            f"for {len(annotators)} annotators into {out}/ (captions burned into the picture)",
            file=sys.stderr,
            flush=True,
        )
    by_video: dict[str, list[Assignment]] = {}
    for a in assignments:
        by_video.setdefault(a.video_id, []).append(a)

    _write_sheets(out, annotators, assignments)
    cols = [schema.VIDEO_ID, schema.CLIPS, schema.CAPTIONS]
    bar = tqdm(total=len(by_video), unit="video", desc="packages", disable=not progress)
    for row in iter_rows(build, "video_text", cols, batch_size=4):
        for a in by_video.get(row[schema.VIDEO_ID], []):
            folder = out / a.annotator / MODALITY_DIRS[a.config] / str(a.folder)
            folder.mkdir(parents=True, exist_ok=True)
            for k, label in enumerate(a.parts, 1):
                clip = row[schema.CLIPS][label - 1]["bytes"]
                target = folder / part_name(k)
                if a.config == "video_text":
                    burn.burn_caption(clip, row[schema.CAPTIONS][label - 1], target)
                else:
                    target.write_bytes(clip)
        bar.update(row[schema.VIDEO_ID] in by_video)
    bar.close()
    write_key(out / KEY_NAME, build, seed, assignments)
    return assignments


def _write_sheets(out: Path, annotators: Sequence[str], assignments: list[Assignment]) -> None:
    """Each annotator's folder with its instructions and its empty sheet."""
    out.mkdir(parents=True, exist_ok=True)
    modality_list = ", ".join(f"`{d}/`" for d in MODALITY_DIRS.values())
    for name in annotators:
        pkg = out / name
        pkg.mkdir(exist_ok=True)
        (pkg / INSTRUCTIONS_NAME).write_text(
            INSTRUCTIONS.format(modality_list=modality_list), encoding="utf-8"
        )
        with (pkg / SHEET_NAME).open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(SHEET_HEADER)
            for a in assignments:
                if a.annotator == name:
                    writer.writerow([a.folder, ""])


# --- ingest ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanAnswer:
    """An answer mapped back to dataset labels."""

    assignment: Assignment
    unk: bool
    labels: tuple[int, ...] | None  # chronological dataset labels; None for a bare unk
    raw: str
    where: str


@dataclass(frozen=True)
class Decision:
    video_id: str
    keep: bool
    reason: str


def check_answers(
    sheets: Iterable[Path], key: dict[int, Assignment], partial: bool = False
) -> list[HumanAnswer]:
    """Validate every sheet line against the key and map part numbers to dataset labels."""
    out: list[HumanAnswer] = []
    seen: dict[int, str] = {}
    for sheet in sheets:
        for ans in read_sheet(sheet):
            a = key.get(ans.folder)
            if a is None:
                raise SheetError(f"{ans.where}: folder {ans.folder} is not in the export key")
            if ans.folder in seen:
                raise SheetError(
                    f"{ans.where}: folder {ans.folder} also answered at {seen[ans.folder]}"
                )
            seen[ans.folder] = ans.where
            labels = None
            if ans.order is not None:
                n = len(a.parts)
                if sorted(ans.order) != list(range(1, n + 1)):
                    raise SheetError(
                        f"{ans.where}: folder {ans.folder} has parts 1..{n}; "
                        f"order {list(ans.order)} must use each exactly once"
                    )
                labels = tuple(a.parts[p - 1] for p in ans.order)
            out.append(HumanAnswer(a, ans.unk, labels, ans.raw, ans.where))
    if not partial:
        missing = sorted(set(key) - set(seen))
        if missing:
            shown = ", ".join(str(f) for f in missing[:20])
            more = f" (+{len(missing) - 20} more)" if len(missing) > 20 else ""
            raise SheetError(f"no answer for folder(s) {shown}{more}; pass --partial to allow")
    return out


def decide(answers: Iterable[HumanAnswer]) -> list[Decision]:
    """Section 3.3's rule: inconclusive only if every annotator of the video said unk."""
    by_video: dict[str, list[HumanAnswer]] = {}
    for ans in answers:
        by_video.setdefault(ans.assignment.video_id, []).append(ans)
    out = []
    for vid in sorted(by_video):
        group = by_video[vid]
        who = ", ".join(f"{a.assignment.annotator} ({a.assignment.config})" for a in group)
        if all(a.unk for a in group):
            if len(group) < 2:
                reason = f"inconclusive so far: unk by {who}; other annotator missing"
                out.append(Decision(vid, True, reason))
            else:
                out.append(Decision(vid, False, f"inconclusive: unk by {who}"))
        elif any(a.unk for a in group):
            unk_by = ", ".join(a.assignment.annotator for a in group if a.unk)
            out.append(Decision(vid, True, f"ordered by one annotator; unk by {unk_by}"))
        else:
            out.append(Decision(vid, True, f"ordered by {who}"))
    return out


def human_predictions(answers: Iterable[HumanAnswer]) -> dict[str, list[Prediction]]:
    """One prediction per (video, modality): the annotator's order or best guess."""
    out: dict[str, list[Prediction]] = {m: [] for m in MODALITIES}
    for ans in sorted(answers, key=lambda x: (x.assignment.config, x.assignment.video_id)):
        a = ans.assignment
        out[a.config].append(
            Prediction(
                video_id=a.video_id,
                config=a.config,
                model=HUMAN_MODEL,
                raw_output=ans.raw,
                order=list(ans.labels) if ans.labels is not None else None,
                extra={"annotator": a.annotator, "folder": a.folder, "unk": ans.unk},
            )
        )
    return out


def agreement(answers: Iterable[HumanAnswer]) -> dict:
    """Inter-annotator agreement over videos answered by both annotators of their team.

    The two answers of a video come from different modalities (by design), so agreement on
    orders mixes annotator and modality effects, as in the paper's cross-check."""
    by_video: dict[str, list[HumanAnswer]] = {}
    for ans in answers:
        by_video.setdefault(ans.assignment.video_id, []).append(ans)
    pairs = [g for g in by_video.values() if len(g) == 2]
    n = len(pairs)
    both_unk = sum(1 for a, b in pairs if a.unk and b.unk)
    neither = sum(1 for a, b in pairs if not a.unk and not b.unk)
    # Cohen's kappa on the unk/ordered decision.
    p_o = (both_unk + neither) / n if n else float("nan")
    unk_rate = [sum(1 for g in pairs if g[i].unk) / n if n else 0.0 for i in (0, 1)]
    p_e = unk_rate[0] * unk_rate[1] + (1 - unk_rate[0]) * (1 - unk_rate[1])
    kappa = (p_o - p_e) / (1 - p_e) if n and p_e < 1 else float("nan")
    comparable = [(a, b) for a, b in pairs if a.labels is not None and b.labels is not None]
    scores = None
    if comparable:
        # One annotator's order scored against the other's: every metric used is symmetric.
        result = score(
            [list(a.labels) for a, _ in comparable], [list(b.labels) for _, b in comparable]
        )
        scores = {m: result[m] for m in AGREEMENT_METRICS}
    return {
        "videos_with_two_answers": n,
        "both_unk": both_unk,
        "both_ordered": neither,
        "one_unk": n - both_unk - neither,
        "unk_decision_agreement": p_o,
        "unk_decision_kappa": kappa,
        "orders_compared": len(comparable),
        "order_agreement": scores,
    }


def write_curation(path: Path, decisions: Sequence[Decision]) -> Path:
    """The curation file ``splice build --curation`` reads (``splice_build.stages.select``).

    Every annotated video gets a row: ``include`` for a kept one (harmless for a video the
    build already selects, and it records why), ``exclude`` for an inconclusive one."""
    from splice_build.stages.select import CURATION_HEADER

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(CURATION_HEADER)
        for d in decisions:
            writer.writerow([d.video_id, "include" if d.keep else "exclude", d.reason])
    return path


def ingest(
    sheets: Sequence[str | Path],
    key_path: str | Path,
    out: str | Path,
    partial: bool = False,
) -> dict:
    """Validate sheets, apply the rules and write curation, predictions and agreement."""
    key = read_key(key_path)
    answers = check_answers([Path(s) for s in sheets], key, partial)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    decisions = decide(answers)
    write_curation(out / "curation.csv", decisions)
    preds = human_predictions(answers)
    for config, items in preds.items():
        metadata = {
            "producer": "splice annotate ingest",
            "model": HUMAN_MODEL,
            "config": config,
            "annotators": sorted({p.extra["annotator"] for p in items}),
            "build_id": key_build_id(key_path),
            "splice_version": project_version(),
        }
        write_predictions(out / f"human_{config}.jsonl", items, metadata)
    agree = agreement(answers)
    summary = {
        "answers": len(answers),
        "videos": len(decisions),
        "kept": sum(d.keep for d in decisions),
        "inconclusive": sum(not d.keep for d in decisions),
        "agreement": agree,
    }
    (out / "agreement.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


# --- command line -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ex = sub.add_parser("export", help="write annotator packages from a build")
    ex.add_argument("build", help=data_source.DATA_HELP)
    ex.add_argument("--out", type=Path, required=True, help="folder for the packages")
    ex.add_argument(
        "--annotators",
        default="A1,B1,A2,B2",
        help="comma-separated names; consecutive pairs form teams (default A1,B1,A2,B2)",
    )
    ex.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the annotator assignment and the clips' order in each package "
        "(default %(default)s)",
    )
    ex.add_argument(
        "--limit", type=int_at_least(1), default=None, help="only the first N videos by id"
    )
    ing = sub.add_parser("ingest", help="validate filled sheets; write curation and predictions")
    ing.add_argument("sheets", type=Path, nargs="+", help="filled sheet.csv files")
    ing.add_argument(
        "--key", type=Path, default=None, help="export's key.json (default: beside the sheets)"
    )
    ing.add_argument(
        "--out",
        type=Path,
        required=True,
        help="folder for curation.csv, human_<config>.jsonl predictions and the agreement",
    )
    ing.add_argument("--partial", action="store_true", help="allow folders without an answer")
    app_cli.add_serve_arguments(sub.add_parser("serve", help=app_cli.SERVE_HELP))
    app_cli.add_space_arguments(sub.add_parser("space", help=app_cli.SPACE_HELP))


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        return app_cli.run_serve(args)
    if args.action == "space":
        return app_cli.run_space(args)
    if args.action == "export":
        names = [n.strip() for n in args.annotators.split(",") if n.strip()]
        output_path(args.out, "--out", folder=True)
        build = data_source.local_build(args.build, option="BUILD")
        assignments = export(build, args.out, names, args.seed, args.limit, progress=True)
        print(
            f"wrote {len(assignments)} ordering tasks for {len(names)} annotators to {args.out}/"
            f" (keep {args.out / KEY_NAME} private)"
        )
        return 0
    key = args.key or _find_key(args.sheets)
    if key is None:
        raise UserError(f"no {KEY_NAME} found beside the sheets; pass --key")
    summary = ingest(args.sheets, key, args.out, args.partial)
    print(json.dumps(summary, indent=1))
    return 0


def _find_key(sheets: Sequence[Path]) -> Path | None:
    for sheet in sheets:
        for folder in (sheet.parent, sheet.parent.parent):
            if (folder / KEY_NAME).is_file():
                return folder / KEY_NAME
    return None
