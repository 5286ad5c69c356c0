"""SPLICE: the dataset's one definition (schema, configs, layout) and its loader.

Every writer, loader, card generator and test imports the schema from here, so that the
clip shards, the text shards, the card's YAML and the checks cannot drift apart.
``datasets`` is imported on first use (``features``, ``load``), not with the
module: its names and layout are all the validator's and the cutter's workers need, and
importing ``datasets`` costs each of them over a second and about 100 MB.

Layout of a built folder (``push_to_hub``'s shard naming, one folder per config, so the
Hub, its dataset viewer and ``load_dataset`` read it unchanged)::

    README.md                                  dataset card; its YAML names the configs
    video_text/test-00000-of-0000N.parquet     one row per video, clips and captions
    video/test-00000-of-0000N.parquet          the same rows without captions
    text/test-00000-of-0000N.parquet           the same rows without clips (no video bytes)

Every file holds exactly its config's columns: the Hub's dataset viewer reads every column
of a file and casts it to the config's features, so shards shared through per-config
``columns:`` would not page for the smaller config. The ``video`` and ``video_text``
shards hold the same clip bytes in the same row groups, written with Parquet
content-defined chunking, so the Hub's chunk-deduplicating storage keeps them once.

After the schema: ``load()`` (``load_dataset`` with the schema, clips left undecoded when
torchcodec is missing), ``undecoded()`` and ``is_hub_id``, the Hub-id rule of every
source. The one other reader of a build's rows is ``splice_eval.builddata.iter_rows``
(pyarrow, for the organiser's tools); of its card, ``splice_build.output.card_reader``.
Model-side needs (sampling, prompts) live in ``splice_eval.run``, which imports this module.

Which ``datasets`` version does what (run here on datasets 5.2, and by the tests on
``DATASETS_MIN_VERSION``, setup.cfg's floor: the schema needs datasets >= 4.0 for
``datasets.List`` and the torchcodec-backed ``datasets.Video``; ``load(...,
streaming=True)`` needs 4.2, whose Parquet reader first takes ``fragment_scan_options``):

* ``load_dataset(folder_or_hub_id, "video_text")`` needs nothing from this file (no
  script, no builder: datasets 4.0 dropped loading scripts): it reads the Parquet shards
  and the card's YAML ``configs:``, also with ``streaming=True``.
* ``datasets.Video`` decodes with torchcodec only (which needs torch). Without it rows
  fail on access; ``load()`` and ``undecoded()`` return clips as ``{"bytes", "path"}``, and
  ``splice_eval.run.sampling.sample_frames`` takes either form and decodes with PyAV.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import splice_formats

if TYPE_CHECKING:
    import datasets

# --- configs and layout ---------------------------------------------------------------

CONFIGS: tuple[str, ...] = ("video", "video_text", "text")
DEFAULT_CONFIG = "video_text"
# The paper evaluates every model on all videos, so the build has one split holding
# everything; COIN's own training/testing membership is kept in `coin_subset`.
SPLIT = "test"
# Configs whose rows embed the clips (their shards share the clip bytes, see write.py).
CLIP_CONFIGS: tuple[str, ...] = ("video", "video_text")
# Question configs: the `text` rows asked as each question format (`question_rows`, seed
# `splice_formats.DEFAULT_SEED`), written by the build as Parquet of their own, because the
# Hub's dataset viewer pages only configs with data files (`load(format=)` maps questions on
# loading instead). Named `<config>_<format>`: config -> (the config asked, the format).
# Kept out of CONFIGS, whose rows are one video each with its order answer (what runs,
# baselines and the metric take); `columns`, `features` and `shard_dir` cover both.
TEXT_QUESTION_CONFIGS: dict[str, tuple[str, str]] = {
    f"text_{fmt}": ("text", fmt) for fmt in splice_formats.QUESTION_FORMATS
}
WRITTEN_CONFIGS: tuple[str, ...] = (*CONFIGS, *TEXT_QUESTION_CONFIGS)  # every config with shards
# The lowest datasets release every public function here works on, streaming included
# (setup.cfg's `datasets>=` floor; tests/project/test_floor.py runs the loading tests on it).
DATASETS_MIN_VERSION = "4.2.0"
WEBDATASET_DIR = "webdataset"  # optional tar shards (`splice build --format both`)
# The folder `splice build` and `splice demo` write when no --out is given (the lmms-eval
# task's default data too). Not `splice`: lmms-eval reads a folder named like the task it is
# asked for (`--tasks splice`) as a folder of task files, so a build at ./splice hid the task.
DEFAULT_BUILD_DIR = "splice-data"
# The paper's 448 px is a cap on the LONGER side of the frames its models saw (Appendix A.2:
# "the highest image resolution was set to 448 pixels, while the other dimension was
# automatically adjusted"): `sample_frames(..., long_side=...)`'s default.
PAPER_LONG_SIDE = 448
# The build's cap on its clips' SHORTER side (`--short-side`): the same number, so a clip's
# long side is at least the paper's 448 and sampling it as the paper did never upscales.
CLIP_SHORT_SIDE = PAPER_LONG_SIDE
MIN_CLIPS, MAX_CLIPS = 2, 7  # the paper keeps videos with 2 to 7 steps (Section 3.2)

# --- columns ----------------------------------------------------------------------------

VIDEO_ID = "video_id"
TASK = "task"
DOMAIN = "domain"
RECIPE_TYPE = "recipe_type"
COIN_SUBSET = "coin_subset"
NUM_CLIPS = "num_clips"
DURATION = "duration"
CLIPS = "clips"
CAPTIONS = "captions"
CLIP_DURATIONS = "clip_durations"
ANSWER = "answer"

# Every column, in the order the shards store them. The answer is kept apart from every
# model input: `order` is the chronological sequence of clip labels (what the metric takes
# as reference); `segments` and `step_ids` are aligned with the labels and would give the
# order away.
_ALL_COLUMNS = (
    VIDEO_ID,
    TASK,
    DOMAIN,
    RECIPE_TYPE,
    COIN_SUBSET,
    NUM_CLIPS,
    DURATION,
    CLIPS,
    CAPTIONS,
    CLIP_DURATIONS,
    ANSWER,
)


@cache
def _all_features() -> dict[str, Any]:
    """Each column's `datasets` feature. Built on first use: importing ``datasets`` costs
    over a second, and the names above are all that validation workers, the cutter and
    the metric need from this module."""
    import datasets

    value = datasets.Value
    return {
        VIDEO_ID: value("string"),
        TASK: value("string"),
        DOMAIN: value("string"),
        RECIPE_TYPE: value("int32"),
        COIN_SUBSET: value("string"),
        NUM_CLIPS: value("int32"),
        DURATION: value("float64"),
        CLIPS: datasets.List(datasets.Video()),
        CAPTIONS: datasets.List(value("string")),
        CLIP_DURATIONS: datasets.List(value("float64")),
        ANSWER: {
            "order": datasets.List(value("int32")),
            "segments": datasets.List({"start": value("float64"), "end": value("float64")}),
            "step_ids": datasets.List(value("int32")),
        },
    }


_CONFIG_COLUMNS: dict[str, tuple[str, ...]] = {
    "video": tuple(c for c in _ALL_COLUMNS if c != CAPTIONS),
    "video_text": _ALL_COLUMNS,
    "text": tuple(c for c in _ALL_COLUMNS if c != CLIPS),
}
# The config holding every column; the other configs' rows are projections of its rows.
FULL_CONFIG = "video_text"
# Columns a model may see; everything in ANSWER is hidden from it.
MODEL_FACING = {c: tuple(x for x in cols if x != ANSWER) for c, cols in _CONFIG_COLUMNS.items()}


def columns(config: str) -> tuple[str, ...]:
    """Column names of a config (a question config too), in the order the shards store them."""
    if config in TEXT_QUESTION_CONFIGS:
        return question_columns(TEXT_QUESTION_CONFIGS[config][0])
    _check_config(config)
    return _CONFIG_COLUMNS[config]


def features(config: str) -> datasets.Features:
    """The `datasets.Features` of a config (a question config too): its shards' columns."""
    if config in TEXT_QUESTION_CONFIGS:
        return question_features(*TEXT_QUESTION_CONFIGS[config])
    import datasets

    return datasets.Features({c: _all_features()[c] for c in columns(config)})


def shard_dir(config: str) -> str:
    """A config's shard folder in a build: its own name (the Hub fetches only its files)."""
    if config not in TEXT_QUESTION_CONFIGS:
        _check_config(config)
    return config


def shard_name(split: str, index: int, total: int) -> str:
    """`push_to_hub`'s shard naming: `test-00000-of-00003.parquet`."""
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def data_files_pattern(config: str, split: str = SPLIT) -> str:
    """The card's `data_files` glob of a config; the writer's `shard_name`s match it."""
    return f"{shard_dir(config)}/{split}-*.parquet"


def clip_file_name(video_id: str, label: int) -> str:
    """Bare file name of an embedded clip: names the shuffled label, never the position."""
    return f"{video_id}_video{label}.mp4"


def _check_written_questions(config: str, fmt: str, seed: int) -> None:
    """A question config holds one format's questions with the default seed: asking it for
    others would return rows that are not what was asked."""
    asked, written = TEXT_QUESTION_CONFIGS[config]
    if fmt not in (splice_formats.ORDER, written) or seed != splice_formats.DEFAULT_SEED:
        raise ValueError(
            f"config {config!r} holds the {asked!r} rows as {written} questions with "
            f"question_seed={splice_formats.DEFAULT_SEED}; for format={fmt!r}, "
            f"question_seed={seed} use load({asked!r}, format=..., question_seed=...)"
        )


def _check_config(config: str) -> None:
    """Refuse a name that is no config, naming every one accepted (`WRITTEN_CONFIGS`)."""
    if config not in CONFIGS:
        accepted = ", ".join(WRITTEN_CONFIGS)
        raise ValueError(f"unknown SPLICE config {config!r}; expected one of {accepted}")


# --- loading --------------------------------------------------------------------------


def torchcodec_available() -> bool:
    """Whether `datasets.Video` can decode here (it uses torchcodec and nothing else)."""
    try:
        import torchcodec  # noqa: F401
    except Exception:  # ImportError, or torch's own load errors inside torchcodec
        return False
    return True


def loading_features(config: str, decode: bool = True) -> datasets.Features:
    """`features(config)` with the clips' `Video(decode=...)` set as asked."""
    import datasets

    feats = features(config)
    if CLIPS in feats:
        feats[CLIPS] = datasets.List(datasets.Video(decode=decode))
    return feats


def undecoded(ds: Any) -> Any:
    """A Dataset / IterableDataset whose clips come back as `{"bytes", "path"}` dicts.

    Works on anything `load_dataset` returns; a dataset without a clip column is returned
    unchanged. A map-style `Dataset` keeps its memory-mapped table, selection and format
    (`cast_column` would rewrite every clip byte: `List(Video())` has no decode-only fast
    path in datasets 5.2): `select_columns` of every column copies nothing, and only the
    copy's features change. The copy gets a fresh random fingerprint, since datasets has no
    public way to derive one from `ds`'s and a shared one would let a later `map` reuse a
    cache computed from the decoded clips.
    """
    feats = getattr(ds, "features", None)
    if feats is None or CLIPS not in feats:
        return ds
    import datasets

    target = datasets.List(datasets.Video(decode=False))
    if isinstance(ds, datasets.Dataset):
        from datasets.fingerprint import generate_random_fingerprint

        out = ds.select_columns(ds.column_names, new_fingerprint=generate_random_fingerprint())
        out.info.features = datasets.Features({**feats, CLIPS: target})
        return out
    return ds.cast_column(CLIPS, target)


def load(
    config: str = DEFAULT_CONFIG,
    split: str = SPLIT,
    *,
    source: str | os.PathLike,
    streaming: bool = False,
    decode: bool | None = None,
    format: str = splice_formats.ORDER,
    question_seed: int = splice_formats.DEFAULT_SEED,
    **load_dataset_kwargs: Any,
) -> datasets.Dataset | datasets.IterableDataset:
    """`load_dataset(source, config, split=...)` with the schema's features; with
    ``format="pairwise"`` or ``"choice"``, its rows as questions (`question_rows`, seeded by
    ``question_seed``), mapped on loading, so any config and seed can be asked (the build
    writes only the `text` rows' seed-0 questions, the `TEXT_QUESTION_CONFIGS`, which this
    also reads). Streamed, nothing is copied; otherwise ``datasets`` caches the mapped rows
    like any ``map``, clip bytes included for a clip config (a pair shows each clip in up to
    n - 1 questions).

    ``source`` is a built folder or a Hub dataset id. ``decode=None`` decodes clips with
    torchcodec when it is installed and otherwise returns them undecoded instead of
    failing on the first row; ``decode=True`` insists on torchcodec.

    Streaming a local folder reads Parquet without pre-buffering (``pre_buffer=False``,
    unless ``fragment_scan_options`` is passed). datasets hands pyarrow a Python file
    object; pre-buffering reads it from pyarrow's I/O threads (which need the GIL) while
    the row loop runs, and on clip shards that measured up to 2x slower than reading in the
    calling thread, more so the busier the machine (bench/load.py). Over HTTP (a Hub id)
    pre-buffering coalesces range requests, so the datasets default stays. ``features=``
    costs nothing per batch: the shards' metadata holds the same types, so datasets'
    ``table_cast`` only swaps the schema metadata (no data is cast).
    """
    import datasets

    splice_formats.check_format(format)
    if config in TEXT_QUESTION_CONFIGS:
        _check_written_questions(config, format, question_seed)
    else:
        _check_config(config)
    if decode is None:
        decode = torchcodec_available()
    elif decode and not torchcodec_available():
        raise ImportError(
            "load(..., decode=True): datasets decodes Video with torchcodec, which is not "
            "installed; pass decode=None/False to get {'bytes', 'path'} clips"
        )
    src = os.fspath(source)
    if os.path.exists(src) and not os.path.isdir(src):
        raise ValueError(f"SPLICE source {src!r} is a file; expected a built folder or a Hub id")
    if not os.path.isdir(src) and not is_hub_id(src):
        # datasets would read it as a Hub id, retry the Hub, and then quietly return any
        # cached dataset of that name: a local build must never be swapped for another.
        raise FileNotFoundError(
            f"SPLICE source {src!r}: no such folder in {os.getcwd()}; give a built folder's "
            "path (e.g. absolute) or a Hub dataset id ORG/NAME"
        )
    if streaming and os.path.isdir(src) and "fragment_scan_options" not in load_dataset_kwargs:
        import pyarrow.dataset as pa_dataset

        load_dataset_kwargs["fragment_scan_options"] = pa_dataset.ParquetFragmentScanOptions(
            pre_buffer=False
        )
    rows = datasets.load_dataset(
        src,
        config,
        split=split,
        streaming=streaming,
        features=loading_features(config, decode=decode and format == splice_formats.ORDER),
        **load_dataset_kwargs,
    )
    if format == splice_formats.ORDER or config in TEXT_QUESTION_CONFIGS:
        return rows
    asked = rows.map(
        lambda batch: question_batch(batch, config, format, question_seed),
        batched=True,
        batch_size=16,
        remove_columns=list(columns(config)),
        features=question_features(config, format, decode=False),
    )
    return (
        asked.cast_column(CLIPS, datasets.List(datasets.Video(decode=True)))
        if (decode and CLIPS in columns(config))
        else asked
    )


# --- question formats (splice_formats) --------------------------------------------------

QUESTION_ID = "question_id"
LABELS = "labels"  # the row labels of the clips a question shows, in the order shown
OPTIONS = "options"  # candidate answers, each a sequence of labels
_PER_CLIP = (CLIPS, CAPTIONS, CLIP_DURATIONS)  # list columns with one entry per clip


def question_columns(config: str) -> tuple[str, ...]:
    """A config's columns as question rows: the row's, plus the question's id, the labels
    of the clips it shows and its options, with the question's answer as ``answer``."""
    return (VIDEO_ID, QUESTION_ID, *MODEL_FACING[config][1:], LABELS, OPTIONS, ANSWER)


def question_features(config: str, format: str, decode: bool = True) -> datasets.Features:
    """The features of a config's rows asked as ``format`` questions."""
    import datasets

    splice_formats.check_format(format)
    base = loading_features(config, decode=decode)
    extra = {
        QUESTION_ID: datasets.Value("string"),
        LABELS: datasets.List(datasets.Value("int32")),
        OPTIONS: datasets.List(datasets.List(datasets.Value("int32"))),
        # The question's answer: the 1-based number of the right option, and how many.
        ANSWER: {"option": datasets.Value("int32"), "num_options": datasets.Value("int32")},
    }
    return datasets.Features({c: extra.get(c) or base[c] for c in question_columns(config)})


def question_rows(
    row: dict[str, Any], config: str, format: str, seed: int = splice_formats.DEFAULT_SEED
) -> list[dict[str, Any]]:
    """One row of ``config`` as its ``format`` questions: each shows the clips (captions,
    durations) it asks about, in the order shown, labelled as in the row."""
    vid = str(row[VIDEO_ID])
    order = (row.get(ANSWER) or {}).get("order")
    if order is None:
        raise KeyError(f"video {vid!r}: no answer order to derive {format} questions from")
    out = []
    for q in splice_formats.questions(format, seed, vid, order):
        shown = q.shown
        asked = {c: row[c] for c in MODEL_FACING[config] if c not in _PER_CLIP}
        asked.update({c: [row[c][k - 1] for k in shown] for c in _PER_CLIP if c in row})
        asked[NUM_CLIPS] = len(shown)
        asked.update({QUESTION_ID: q.question_id, LABELS: list(shown)})
        asked[OPTIONS] = [list(o) for o in q.options]
        asked[ANSWER] = {"option": q.answer, "num_options": len(q.options)}
        out.append({c: asked[c] for c in question_columns(config)})
    return out


def question_batch(
    batch: dict[str, list[Any]], config: str, format: str, seed: int = splice_formats.DEFAULT_SEED
) -> dict[str, list[Any]]:
    """A batch of rows (``Dataset.map(batched=True)``) as their questions: how ``load`` and
    the lmms-eval task variants turn rows into question rows."""
    rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]
    asked = [q for row in rows for q in question_rows(row, config, format, seed)]
    return {c: [q[c] for q in asked] for c in question_columns(config)}


# --- sources and shards -----------------------------------------------------------------

# A Hub dataset id as `load` accepts one: ORG/NAME (a bare name is read as a missing folder).
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
# The published dataset's Hub id, as the docs load it: what the lmms-eval task loads outside a
# checkout when neither $SPLICE_DATA nor ./splice-data names a build (the exported task:
# `splice export-task`). The docs' placeholder until the dataset is published under its name.
PUBLISHED_ID = "ORG/splice"
# The inverse of `shard_name`: the build readers and `splice validate` read names with it.
SHARD_NAME_RE = re.compile(r"^(?P<split>[A-Za-z0-9_]+)-(?P<i>\d{5})-of-(?P<n>\d{5})\.parquet$")
CARD = "README.md"  # a build's dataset card: YAML header (configs, splice_build) + text


def is_hub_id(source: str | os.PathLike) -> bool:
    """THE Hub-id rule of every ``--data``/source: ``ORG/NAME`` (`HUB_ID_RE`) naming no
    path here (a folder of that name is the folder)."""
    text = os.fspath(source)
    return not os.path.exists(text) and bool(HUB_ID_RE.match(text))


def shard_files(folder: str | os.PathLike, config: str) -> dict[str, list[Path]]:
    """The Parquet shards a config reads in a built folder, per split, in shard order."""
    base = Path(folder) / shard_dir(config)
    if not base.is_dir():
        raise FileNotFoundError(f"{base}: no {shard_dir(config)}/ folder (is {folder} a build?)")
    found: dict[str, list[Path]] = {}
    for path in sorted(base.iterdir()):
        m = SHARD_NAME_RE.match(path.name)
        if m:
            found.setdefault(m["split"], []).append(path)
    if not found:
        raise FileNotFoundError(f"{base}: no shards named like {shard_name(SPLIT, 0, 1)}")
    return found
