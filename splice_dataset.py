"""SPLICE: the dataset's one definition (schema, configs, layout), plus what a user needs
after ``load_dataset``.

Every writer, loader, card generator and test imports the schema from here, so that the
clip shards, the text shards, the card's YAML and the checks cannot drift apart.

Layout of a built folder (the one ``push_to_hub`` uses, so the Hub and ``load_dataset``
read it unchanged)::

    README.md                                  dataset card; its YAML names the configs
    data/test-00000-of-0000N.parquet           one row per video, clips embedded
    text/test-00000-of-0000N.parquet           the text config's own small shards

The ``video`` and ``video_text`` configs share the clip shards through per-config
``columns:`` in the card; ``text`` has its own shards so loading it never downloads
video bytes.
"""

from __future__ import annotations

import datasets

# --- configs and layout ---------------------------------------------------------------

CONFIGS: tuple[str, ...] = ("video", "video_text", "text")
DEFAULT_CONFIG = "video_text"
# The paper evaluates every model on all videos, so the build has one split holding
# everything; COIN's own training/testing membership is kept in `coin_subset`.
SPLIT = "test"
CLIP_DATA_DIR = "data"
TEXT_DATA_DIR = "text"
PAPER_MAX_SIDE = 448  # short side cap of the paper's model settings (Appendix A.2)
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

# The answer is kept apart from every model input: `order` is the chronological sequence
# of clip labels (what the metric takes as reference); `segments` and `step_ids` are
# aligned with the labels and would give the order away.
ANSWER_FEATURE = {
    "order": datasets.List(datasets.Value("int32")),
    "segments": datasets.List(
        {"start": datasets.Value("float64"), "end": datasets.Value("float64")}
    ),
    "step_ids": datasets.List(datasets.Value("int32")),
}

_ALL_FEATURES = {
    VIDEO_ID: datasets.Value("string"),
    TASK: datasets.Value("string"),
    DOMAIN: datasets.Value("string"),
    RECIPE_TYPE: datasets.Value("int32"),
    COIN_SUBSET: datasets.Value("string"),
    NUM_CLIPS: datasets.Value("int32"),
    DURATION: datasets.Value("float64"),
    CLIPS: datasets.List(datasets.Video()),
    CAPTIONS: datasets.List(datasets.Value("string")),
    CLIP_DURATIONS: datasets.List(datasets.Value("float64")),
    ANSWER: ANSWER_FEATURE,
}

_CONFIG_COLUMNS: dict[str, tuple[str, ...]] = {
    "video": tuple(c for c in _ALL_FEATURES if c != CAPTIONS),
    "video_text": tuple(_ALL_FEATURES),
    "text": tuple(c for c in _ALL_FEATURES if c != CLIPS),
}
# Columns a model may see; everything in ANSWER is hidden from it.
MODEL_FACING = {c: tuple(x for x in cols if x != ANSWER) for c, cols in _CONFIG_COLUMNS.items()}


def columns(config: str) -> tuple[str, ...]:
    """Column names of a config, in the order the shards store them."""
    _check_config(config)
    return _CONFIG_COLUMNS[config]


def features(config: str) -> datasets.Features:
    """The `datasets.Features` of a config (clip shards hold the `video_text` superset)."""
    return datasets.Features({c: _ALL_FEATURES[c] for c in columns(config)})


def shard_dir(config: str) -> str:
    """Folder of the shards a config reads: clips for video configs, text shards for text."""
    _check_config(config)
    return TEXT_DATA_DIR if config == "text" else CLIP_DATA_DIR


def shard_name(split: str, index: int, total: int) -> str:
    """`push_to_hub`'s shard naming: `test-00000-of-00003.parquet`."""
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def data_files_pattern(config: str, split: str = SPLIT) -> str:
    return f"{shard_dir(config)}/{split}-*.parquet"


def clip_file_name(video_id: str, label: int) -> str:
    """Bare file name of an embedded clip: names the shuffled label, never the position."""
    return f"{video_id}_video{label}.mp4"


def _check_config(config: str) -> None:
    if config not in CONFIGS:
        raise ValueError(f"unknown SPLICE config {config!r}; expected one of {CONFIGS}")
