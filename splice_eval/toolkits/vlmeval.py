"""SPLICE in VLMEvalKit (PyPI's ``ms-vlmeval``): the ``SPLICE`` dataset class and its named
variants. This module alone is what ``splice export-task vlmevalkit`` exports as VLMEvalKit's
``vlmeval/dataset/splice.py``, so it holds the class and nothing of this project's command
line: ``vlmeval_command`` registers it at run time and runs ``splice vlmeval``. vlmeval (and
torch) are imported only when the class is used: importing this module costs nothing.

A SPLICE row holds several clips, and VLMEvalKit's frame saver assumes one
``<root>/<video>.mp4`` per row, so the class writes and samples the clips itself: each clip
once under ``$LMUData/SPLICE/clips``, named by the sha256 of its bytes (a name says nothing
about the order), and, for a model that takes images, its frames sampled by
``splice_eval.run.sampling`` under ``$LMUData/SPLICE/frames``; a model that takes videos gets
each clip at most 448 px on its longer side (``vlmeval_clips``). The prompt is the paper's
(``prompts.build_prompt``): the instruction, then each "Video k[: caption]" label followed by
its clip or its frames, every text piece ending with a newline so that a model class that
glues text pieces together still separates the labels.

``evaluate`` writes the answers as a prediction file of the project's format (with its
metadata line) and scores that file the way ``splice score`` does (``runs.read_runs`` and
``score.result_row``, over ``runs.score_run``), so the numbers VLMEvalKit prints are
``splice score``'s.
"""

from __future__ import annotations

import functools
import hashlib
import json
import numbers
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import splice_dataset as schema
from splice_build.atomic import atomic_path
from splice_build.errors import UserError
from splice_eval import predictions
from splice_eval.run import prompts, sampling
from splice_eval.run.frame_cache import cache_key
from splice_eval.run.sampling import FrameSpec
from splice_eval.scoring.runs import read_runs
from splice_eval.toolkits.vlmeval_clips import scaled_clip

# The data the class reads: a built folder or a Hub id, from --splice-data or this variable
# (the lmms-eval task's too), else the folder `splice demo` writes, else (in an export, which
# `splice export-task --dataset` makes name one) the published dataset.
DATA_ENV = "SPLICE_DATA"
DEFAULT_DATA = "./splice-data"
NAME = "SPLICE"  # VLMEvalKit's class name, and the folder under $LMUData
TYPE = "Video-Order"  # no VLMEvalKit judge or model-side custom prompt matches it


@dataclass(frozen=True)
class Variant:
    """A named dataset of VLMEvalKit: one SPLICE config and the paper's frame setting
    (Appendix A.2; None for the text config, which has no clips)."""

    config: str
    frames: FrameSpec | None

    @property
    def nframe(self) -> int:
        return (self.frames.num_frames or 0) if self.frames else 0

    @property
    def fps(self) -> float:
        return (self.frames.fps or -1) if self.frames and not self.frames.num_frames else -1


# The paper's two settings: 1 fps with the long side at most 448 px, or 16 uniform frames.
PAPER_1FPS = FrameSpec()
PAPER_16FRAME = FrameSpec(fps=None, num_frames=16)
VARIANTS: dict[str, Variant] = {
    "SPLICE_video_16frame": Variant("video", PAPER_16FRAME),
    "SPLICE_video_1fps": Variant("video", PAPER_1FPS),
    "SPLICE_video_text_16frame": Variant("video_text", PAPER_16FRAME),
    "SPLICE_video_text_1fps": Variant("video_text", PAPER_1FPS),
    "SPLICE_text": Variant("text", None),
}


def published_id() -> str | None:
    """The published dataset's Hub id where this module runs as an export (``splice
    export-task --dataset`` writes it into the copy of ``splice_dataset.PUBLISHED_ID``);
    None in the product, whose value is the docs' placeholder ``ORG/...``."""
    return None if schema.PUBLISHED_ID.startswith("ORG/") else schema.PUBLISHED_ID


def data_source() -> str:
    """The build folder (absolute) or Hub id the class reads; a UserError naming what was
    given when it is neither (``splice_dataset.is_hub_id`` is the rule for a Hub id)."""
    given = os.environ.get(DATA_ENV, "").strip()
    if not given and not Path(DEFAULT_DATA).is_dir() and published_id():
        return published_id()
    given = given or DEFAULT_DATA
    path = Path(given).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if not schema.is_hub_id(given):
        raise UserError(
            f"SPLICE data {given!r}: not a built SPLICE folder or a Hub id ORG/NAME "
            f"(give --splice-data or set {DATA_ENV}; `splice demo` builds {DEFAULT_DATA})"
        )
    return given


def source_rows(source: str, config: str) -> Iterator[dict[str, Any]]:
    """A config's rows with clips undecoded: a folder's shards straight, a Hub id through
    ``splice_dataset.load``."""
    if Path(source).is_dir():
        from splice_eval.builddata import iter_rows

        yield from iter_rows(source, config)
    else:
        yield from schema.load(config, source=source, decode=False)


def build_id_of(source: str) -> str | None:
    """The build's identity from its card, when the source is a folder whose card has one."""
    from splice_build.output.card_reader import read_card

    return read_card(source).build_id or None


def media_root() -> Path:
    """``$LMUData/SPLICE`` (VLMEvalKit's data root: ``$LMUData``, else ``~/LMUData``)."""
    from vlmeval.smp import LMUDataRoot

    return Path(LMUDataRoot()) / NAME


def write_once(path: Path, data: bytes) -> Path:
    """``data`` at ``path`` unless it is there with that size; atomic, so parallel workers
    never read half a file."""
    if not path.exists() or path.stat().st_size != len(data):
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    return path


def clip_file(clip: Any) -> str:
    """The clip's bytes written once under ``$LMUData/SPLICE/clips``, named by their sha256."""
    data = sampling.clip_bytes(clip)
    name = hashlib.sha256(data).hexdigest() + ".mp4"
    return str(write_once(media_root() / "clips" / name, data))


def frame_files(clip_path: str, frames: FrameSpec) -> list[str]:
    """The clip's frames as ``sample_frames`` picks them, as JPEG files (written once per clip
    content and setting, under ``$LMUData/SPLICE/frames/<cache key>``)."""
    from PIL import Image

    kwargs = frames.kwargs()
    folder = media_root() / "frames" / cache_key(Path(clip_path).read_bytes(), kwargs)
    done = folder / "frames.json"
    if done.exists():
        return [str(folder / name) for name in json.loads(done.read_text())]
    sampled = sampling.sample_frames(clip_path, **kwargs)
    names = [f"frame-{k + 1}-of-{len(sampled.frames)}.jpg" for k in range(len(sampled.frames))]
    folder.mkdir(parents=True, exist_ok=True)
    for name, image in zip(names, sampled.frames, strict=True):
        with atomic_path(folder / name) as tmp:
            Image.fromarray(image).save(tmp, format="JPEG", quality=95)
    write_once(done, json.dumps(names).encode())
    return [str(folder / name) for name in names]


def message(row: dict[str, Any], config: str, frames: FrameSpec | None, video_llm: bool):
    """The VLMEvalKit message of one row: the paper's prompt, each label followed by its clip
    (``video_llm``) or its sampled frames; every text piece ends with a newline."""
    prompt = prompts.build_prompt(row, config)
    items = [{"type": "text", "value": prompt.text + "\n"}]
    for clip in prompt.clips if config != "text" else ():
        items.append({"type": "text", "value": clip.heading + "\n"})
        if video_llm or frames is None:  # at most the paper's 448 px (vlmeval_clips)
            items.append({"type": "video", "value": scaled_clip(clip.clip, media_root())})
        else:
            items += [{"type": "image", "value": p} for p in frame_files(clip.clip, frames)]
    return items


@functools.cache
def dataset_class() -> type:
    """The ``SPLICE`` class, made on first use (its base class is VLMEvalKit's)."""
    from vlmeval.dataset.video_base import VideoBaseDataset

    return type(NAME, (_SpliceMixin, VideoBaseDataset), {"MODALITY": "VIDEO", "TYPE": TYPE})


def __getattr__(name: str) -> Any:
    if name == NAME:
        return dataset_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _SpliceMixin:
    """The SPLICE dataset class's own methods (``dataset_class`` puts VLMEvalKit's
    ``VideoBaseDataset`` under them)."""

    def __init__(self, dataset: str = "SPLICE_video_text_1fps", **kwargs: Any) -> None:
        # ms-vlmeval 0.0.20 passes every command-line option (data, model, work_dir, ...)
        # to a named variant, so everything but the name is taken and ignored here.
        if dataset not in VARIANTS:
            raise UserError(f"VLMEvalKit dataset {dataset!r}: not one of {', '.join(VARIANTS)}")
        self.variant = VARIANTS[dataset]
        self.source = data_source()
        self.clips_as: set[str] = set()
        super().__init__(dataset=dataset, nframe=self.variant.nframe, fps=self.variant.fps)
        # pandas reads ids that look like numbers as numbers: the rows' own strings back
        self.data["video"] = [self.video_ids[int(i)] for i in self.data["index"]]
        self.videos = sorted(set(self.video_ids))

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return list(VARIANTS)

    def prepare_dataset(self, dataset: str) -> dict[str, str]:
        """The variant's rows as a TSV (``index``, ``video``, ``question`` and the clip files,
        captions and answers build_prompt and evaluate read), clips written as files."""
        import pandas as pd

        config = self.variant.config
        records, self.rows = [], []
        for index, row in enumerate(source_rows(self.source, config)):
            clips = [clip_file(c) for c in row[schema.CLIPS]] if config != "text" else []
            captions = row.get(schema.CAPTIONS)
            shown = {schema.VIDEO_ID: row[schema.VIDEO_ID], schema.CLIPS: clips}
            shown[schema.CAPTIONS] = list(captions) if captions is not None else None
            shown[schema.ANSWER] = list(row[schema.ANSWER]["order"])
            self.rows.append(shown)  # what build_prompt and evaluate read, never the TSV
            records.append(
                {
                    "index": index,
                    "video": row[schema.VIDEO_ID],
                    "question": prompts.build_prompt(shown, config).text,
                    "config": config,
                    "num_clips": row[schema.NUM_CLIPS],
                    "clip_files": json.dumps(clips),
                    "captions": json.dumps(shown[schema.CAPTIONS] or []),
                    "answer": json.dumps(shown[schema.ANSWER]),
                    "task": row[schema.TASK],
                    "domain": row[schema.DOMAIN],
                }
            )
        if not records:
            raise UserError(f"{self.source}: no {config} rows")
        self.video_ids = [row[schema.VIDEO_ID] for row in self.rows]
        key = hashlib.sha256(self.source.encode()).hexdigest()[:16]
        data_file = media_root() / key / f"{dataset}.tsv"
        data_file.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(data_file) as tmp:
            pd.DataFrame.from_records(records).to_csv(tmp, sep="\t", index=False)
        return {"root": str(media_root() / "clips"), "data_file": str(data_file)}

    def build_prompt(self, line: Any, video_llm: bool = False) -> list[dict[str, str]]:
        # the row as prepare_dataset read it (pandas would turn a TSV cell's text into numbers)
        row = self.rows[int(line if isinstance(line, numbers.Integral) else line["index"])]
        config = self.variant.config
        if config != "text":
            self.clips_as.add("video" if video_llm else "images")
        return message(row, config, self.variant.frames, video_llm)

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> Any:
        """The answers in ``eval_file`` as a prediction file of the project's format beside
        it (``<eval stem>_splice.jsonl``), scored by ``splice score``'s functions over every
        video; the scores also go to ``<eval stem>_splice_scores.json``."""
        import pandas as pd
        from vlmeval.smp import load

        # here, not at the top: the metric imports `evaluate`, which VLMEvalKit does not
        # install, and its dataset package imports this module at start
        from splice_eval.scoring import score

        table = pd.DataFrame(load(eval_file))  # a json result loads as a list of records
        stem = Path(eval_file).with_suffix("")
        model = stem.name.removesuffix("_" + self.dataset_name)
        config = self.variant.config
        rows = [
            predictions.Prediction(
                video_id=self.video_ids[int(index)],
                config=config,
                model=model,
                raw_output=None if answer is None else str(answer),
                order=None,
            )
            for index, answer in zip(table["index"], table["prediction"], strict=True)
        ]
        pred_file = predictions.write_predictions(
            f"{stem}_splice.jsonl", rows, self.metadata(model)
        )
        answers = score.Answers(
            references={r[schema.VIDEO_ID]: r[schema.ANSWER] for r in sorted_rows(self.rows)},
            columns={},  # splice score's groups; the metric splits by clip count itself
        )
        (run,) = read_runs([pred_file], per_file=True, orders=answers.references)
        result = score.result_row(run, answers, random_baseline=True)
        Path(f"{stem}_splice_scores.json").write_text(json.dumps(result, indent=2) + "\n")
        return score_table(result)

    @classmethod
    def report_primary_metric(cls, metrics: dict[str, Any] | None) -> dict[str, float]:
        """The headline of VLMEvalKit's run summary and ``status.json``: the binary accuracy
        over every video. ``metrics`` is ``evaluate``'s table as VLMEvalKit flattens it
        (``<label column>=<row>|<column>``); left to itself, VLMEvalKit picks the first key
        by name that mentions "acc", a per-clip-count cell."""
        value = (metrics or {}).get(f"{LABEL_COLUMN}={OVERALL}|{HEADLINE}")
        return {HEADLINE: value} if value is not None else {}

    def metadata(self, model: str) -> dict[str, Any]:
        """The prediction file's metadata line: how these answers were produced."""
        frames = self.variant.frames
        clips_as = sorted(self.clips_as)
        meta = {
            "producer": f"splice vlmeval ({toolkit_version()})",
            "model": model,
            "config": self.variant.config,
            "dataset": self.dataset_name,
            "data": self.source,
            "prompt_version": prompts.PROMPT_VERSION,
            "clips_as": clips_as[0] if len(clips_as) == 1 else None,
            "frames": frames.kwargs() if frames is not None else None,
            "splice_version": predictions.project_version(),
        }
        build_id = build_id_of(self.source)
        if build_id:
            meta["build_id"] = build_id
        return meta


def toolkit_version() -> str:
    """VLMEvalKit's version: PyPI names it ``ms-vlmeval``, a clone installed with
    ``pip install -e .`` ``vlmeval`` (where the exported class runs)."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("ms-vlmeval", "vlmeval"):
        try:
            return f"{dist} {version(dist)}"
        except PackageNotFoundError:
            continue
    return "VLMEvalKit, version unknown"


def sorted_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in video-id order, the order ``splice score`` reads a build's answers in."""
    return sorted(rows, key=lambda row: row[schema.VIDEO_ID])


SHOWN_METRICS = ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance")
HEADLINE = SHOWN_METRICS[0]  # the paper's headline, and VLMEvalKit's primary metric
LABEL_COLUMN, OVERALL = "videos", "all"  # the table's row labels; the row of every video


def score_table(result: dict[str, Any]) -> Any:
    """What VLMEvalKit prints: binary, hamming, LCS and edit distance overall and per clip
    count, each beside the random baseline's expectation."""
    import pandas as pd

    expected = result["random_baseline"]
    cells = [(OVERALL, result, expected)] + [
        (f"{n} clips", cell, expected["by_num_clips"][n])
        for n, cell in result["by_num_clips"].items()
    ]
    return pd.DataFrame(
        [
            {
                LABEL_COLUMN: name,
                "count": cell["count"],
                **{m: cell[m] for m in SHOWN_METRICS},
                **{f"random {m}": rand[m] for m in SHOWN_METRICS},
            }
            for name, cell, rand in cells
        ]
    )
