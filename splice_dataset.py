"""SPLICE: the dataset's one definition (schema, configs, layout), plus what a user needs
after ``load_dataset``.

Every writer, loader, card generator and test imports the schema from here, so that the
clip shards, the text shards, the card's YAML and the checks cannot drift apart.

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

After loading (below the schema): ``load()`` (``load_dataset`` with the schema, clips left
undecoded when torchcodec is missing), the ``Splice`` builder, ``sample_frames`` (the
paper's 1 fps / 448 px and 16-frame settings, with PyAV), ``build_prompt`` and
``to_chat_messages`` (the paper's three prompts), and ``parse_order`` (the metric's own
parser, re-exported).

Which ``datasets`` version does what (run here on datasets 5.2, and by the tests on
``DATASETS_MIN_VERSION``, setup.cfg's floor: the schema needs datasets >= 4.0 for
``datasets.List`` and the torchcodec-backed ``datasets.Video``; ``load(...,
streaming=True)`` needs 4.2, whose Parquet reader first takes ``fragment_scan_options``):

* ``load_dataset(folder_or_hub_id, "video_text")`` needs nothing from this file: it reads
  the Parquet shards and the card's YAML ``configs:`` (with per-config ``columns:``), also
  with ``streaming=True``.
* Loading scripts are gone since datasets 4.0: ``load_dataset`` never runs this file and
  ``trust_remote_code=True`` does not change that. On datasets 3.x and older it cannot act
  as a script either (no ``datasets.List`` there).
* ``Splice`` is a ``GeneratorBasedBuilder`` that datasets still runs when it is
  instantiated directly: ``Splice(config_name="text", data_dir=folder, cache_dir=d)``, then
  ``download_and_prepare()`` and ``as_dataset()``, or ``as_streaming_dataset(split=...)``
  (checked on 5.2 and on ``DATASETS_MIN_VERSION``). Its cache path has
  no hash of this code: pass ``hash=`` or a fresh ``cache_dir`` after changing it.
* ``datasets.Video`` decodes with torchcodec only (which needs torch). Without it rows
  fail on access; ``load()`` and ``undecoded()`` return clips as ``{"bytes", "path"}``, and
  ``sample_frames`` takes either form and decodes with PyAV.
"""

from __future__ import annotations

import datasets

# --- configs and layout ---------------------------------------------------------------

CONFIGS: tuple[str, ...] = ("video", "video_text", "text")
DEFAULT_CONFIG = "video_text"
# The paper evaluates every model on all videos, so the build has one split holding
# everything; COIN's own training/testing membership is kept in `coin_subset`.
SPLIT = "test"
# Where each config's shards live: a folder per config, named for it.
DATA_DIRS: dict[str, str] = {c: c for c in CONFIGS}
# Configs whose rows embed the clips (their shards share the clip bytes, see write.py).
CLIP_CONFIGS: tuple[str, ...] = ("video", "video_text")
# The lowest datasets release every public function here works on, streaming included
# (setup.cfg's `datasets>=` floor; tests/test_floor.py runs the loading tests on it).
DATASETS_MIN_VERSION = "4.2.0"
WEBDATASET_DIR = "webdataset"  # optional tar shards (`splice build --format both`)
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
# The config holding every column; the other configs' rows are projections of its rows.
FULL_CONFIG = "video_text"
# Columns a model may see; everything in ANSWER is hidden from it.
MODEL_FACING = {c: tuple(x for x in cols if x != ANSWER) for c, cols in _CONFIG_COLUMNS.items()}


def columns(config: str) -> tuple[str, ...]:
    """Column names of a config, in the order the shards store them."""
    _check_config(config)
    return _CONFIG_COLUMNS[config]


def features(config: str) -> datasets.Features:
    """The `datasets.Features` of a config: exactly the columns its shards hold."""
    return datasets.Features({c: _ALL_FEATURES[c] for c in columns(config)})


def shard_dir(config: str) -> str:
    """Folder (relative to a build) of the shards a config reads, and only it reads."""
    _check_config(config)
    return DATA_DIRS[config]


def shard_name(split: str, index: int, total: int) -> str:
    """`push_to_hub`'s shard naming: `test-00000-of-00003.parquet`."""
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def data_files_pattern(config: str, split: str = SPLIT) -> str:
    """The card's `data_files` glob of a config; the writer's `shard_name`s match it."""
    return f"{shard_dir(config)}/{split}-*.parquet"


def clip_file_name(video_id: str, label: int) -> str:
    """Bare file name of an embedded clip: names the shuffled label, never the position."""
    return f"{video_id}_video{label}.mp4"


def _check_config(config: str) -> None:
    if config not in CONFIGS:
        raise ValueError(f"unknown SPLICE config {config!r}; expected one of {CONFIGS}")


# ========================================================================================
# Below the schema: what a user needs after `load_dataset` (loading, the builder, frames,
# prompts, answers). See "Which datasets version does what" in the module docstring.
# ========================================================================================

import base64  # noqa: E402
import bisect  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
from collections.abc import Iterator, Mapping, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from fractions import Fraction  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, NamedTuple  # noqa: E402

import numpy as np  # noqa: E402

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
    feats = features(config)
    if CLIPS in feats:
        feats[CLIPS] = datasets.List(datasets.Video(decode=decode))
    return feats


def undecoded(ds: Any) -> Any:
    """A Dataset / IterableDataset whose clips come back as `{"bytes", "path"}` dicts.

    Works on anything `load_dataset` or `Splice.as_dataset()` returns; a dataset without
    a clip column is returned unchanged. A map-style `Dataset` is re-wrapped around the
    same memory-mapped table (`cast_column` would rewrite every clip byte: `List(Video())`
    has no decode-only fast path in datasets 5.2).
    """
    feats = getattr(ds, "features", None)
    if feats is None or CLIPS not in feats:
        return ds
    target = datasets.List(datasets.Video(decode=False))
    if isinstance(ds, datasets.Dataset):
        info = ds.info.copy()
        info.features = datasets.Features({**feats, CLIPS: target})
        out = datasets.Dataset(
            ds.data,
            info=info,
            split=ds.split,
            indices_table=getattr(ds, "_indices", None),
            fingerprint=f"{ds._fingerprint}-undecoded",
        )
        fmt = ds.format
        return out.with_format(
            fmt["type"],
            columns=fmt["columns"],
            output_all_columns=fmt["output_all_columns"],
            **fmt["format_kwargs"],
        )
    return ds.cast_column(CLIPS, target)


def load(
    config: str = DEFAULT_CONFIG,
    split: str = SPLIT,
    *,
    source: str | os.PathLike,
    streaming: bool = False,
    decode: bool | None = None,
    **load_dataset_kwargs: Any,
) -> datasets.Dataset | datasets.IterableDataset:
    """`load_dataset(source, config, split=...)` with the schema's features.

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
    if streaming and os.path.isdir(src) and "fragment_scan_options" not in load_dataset_kwargs:
        import pyarrow.dataset as pa_dataset

        load_dataset_kwargs["fragment_scan_options"] = pa_dataset.ParquetFragmentScanOptions(
            pre_buffer=False
        )
    return datasets.load_dataset(
        src,
        config,
        split=split,
        streaming=streaming,
        features=loading_features(config, decode=decode),
        **load_dataset_kwargs,
    )


# --- the builder (datasets 4/5: instantiate directly) ----------------------------------

_BUILDER_VERSION = "1.0.0"
# The inverse of `shard_name`: the builder and `splice validate` both read names with it.
SHARD_NAME_RE = re.compile(r"^(?P<split>[A-Za-z0-9_]+)-(?P<i>\d{5})-of-(?P<n>\d{5})\.parquet$")


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


@dataclass(frozen=True)
class CardInfo:
    """What the builder's `DatasetInfo` takes from a build's card (README.md)."""

    description: str = ""
    citation: str = ""
    license: str = ""


def read_card(folder: str | os.PathLike) -> CardInfo:
    """Description (the card's text before its first section), BibTeX citation and licence
    of a built folder's card, so the builder repeats the card instead of a copy of it."""
    from huggingface_hub import DatasetCard

    path = Path(folder) / "README.md"
    if not path.is_file():
        return CardInfo()
    card = DatasetCard.load(path)
    body = card.text
    first_section = body.find("\n## ")
    intro = body if first_section < 0 else body[:first_section]
    intro_lines = [line for line in intro.strip().splitlines() if not line.startswith("# ")]
    cite = re.search(r"^## Citation\s*```bibtex\n(.*?)```", body, re.S | re.M)
    lic = card.data.get("license") or ""
    return CardInfo(
        description="\n".join(intro_lines).strip(),
        citation=cite.group(1).strip() if cite else "",
        license=", ".join(lic) if isinstance(lic, list) else str(lic),
    )


class Splice(datasets.GeneratorBasedBuilder):
    """SPLICE from a built folder: `Splice(config_name=..., data_dir=folder)`.

    Yields exactly what `load_dataset(folder, config)` gives (same rows, same order, same
    features), reading one Parquet row group at a time and only the config's columns.
    """

    VERSION = datasets.Version(_BUILDER_VERSION)
    BUILDER_CONFIGS = [
        datasets.BuilderConfig(name=c, version=datasets.Version(_BUILDER_VERSION), description=c)
        for c in CONFIGS
    ]
    DEFAULT_CONFIG_NAME = DEFAULT_CONFIG
    # Rows hold a few MB of clips; keep the writer's batches small.
    DEFAULT_WRITER_BATCH_SIZE = 64

    def _info(self) -> datasets.DatasetInfo:
        card = read_card(self.config.data_dir) if self.config.data_dir else CardInfo()
        return datasets.DatasetInfo(
            description=card.description,
            features=features(self.config.name),
            citation=card.citation,
            license=card.license,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        data_dir = self.config.data_dir
        if not data_dir:
            raise ValueError("Splice needs data_dir=<a built SPLICE folder>")
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"files": [str(p) for p in files]})
            for split, files in shard_files(data_dir, self.config.name).items()
        ]

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[Any, dict[str, Any]]]:
        import pyarrow.parquet as pq

        cols = list(columns(self.config.name))
        for file in files:
            # The index in the shard's own name keeps keys stable when datasets splits
            # `files` between processes or streaming workers.
            shard_index = int(SHARD_NAME_RE.match(Path(file).name)["i"])
            pf = pq.ParquetFile(file)
            missing = [c for c in cols if c not in pf.schema_arrow.names]
            if missing:
                raise ValueError(
                    f"{file}: missing column(s) {missing} of config {self.config.name}"
                )
            row = 0
            for group in range(pf.num_row_groups):
                table = pf.read_row_group(group, columns=cols)
                for batch in table.to_batches(max_chunksize=16):
                    for example in batch.to_pylist():
                        yield _example_key(shard_index, row), example
                        row += 1


def _example_key(shard_index: int, row: int) -> Any:
    """(shard, row) keys: stable across runs; `Key` lets datasets 5 count rows per shard."""
    try:
        from datasets.builder import Key
    except ImportError:  # datasets 4.x
        return f"{shard_index}:{row}"
    return Key(shard_index, row)


# --- frames ---------------------------------------------------------------------------


class Frames(NamedTuple):
    """Frames chosen from one clip: ``frames`` uint8 (T, H, W, 3) RGB; ``times`` float64
    (T,), each frame's presentation time in seconds from the clip's first frame."""

    frames: np.ndarray
    times: np.ndarray


def sample_frames(
    clip: Any,
    *,
    fps: float | None = None,
    num_frames: int | None = None,
    max_side: int | None = PAPER_MAX_SIDE,
) -> Frames:
    """Frames of one clip in the paper's two settings (Appendix A.2), decoded with PyAV.

    Which frames: a clip of duration D covers [0, D) (first frame at 0, D = end of the last
    frame). For a target time t the frame chosen is the one on screen at t: the last frame
    whose timestamp is <= t.

    * ``fps=f`` (default 1.0, Qwen2-VL / Gemini): targets t = 0, 1/f, 2/f, ... while t < D,
      so ceil(D * f) frames, at least one.
    * ``num_frames=T`` (16 for InternVL2.5 / LLaVA-OneVision): the centres of T equal bins,
      t_i = (i + 1/2) * D / T; always T frames (short clips repeat frames).

    ``max_side`` caps the LONGER side (the paper: "the highest image resolution was set to
    448 pixels, while the other dimension was automatically adjusted based on the aspect
    ratio"); the other side keeps the aspect ratio (rounded), and frames are never
    upscaled. ``None`` keeps the stored size. (The build caps the SHORT side at 448, so
    stored clips hold enough pixels for either reading.)

    Decodes only what is needed: packets are demuxed (cheap), and decoding starts at the
    keyframe before each wanted frame when that lies ahead of the decoder, and stops after
    the last wanted frame; only chosen frames are converted to RGB.

    ``clip`` may be a torchcodec ``VideoDecoder`` (what ``datasets.Video`` decodes to), a
    ``{"bytes", "path"}`` dict (undecoded ``datasets.Video``), raw bytes or a file path.
    """
    if fps is not None and num_frames is not None:
        raise ValueError("sample_frames: pass fps or num_frames, not both")
    if num_frames is not None:
        if int(num_frames) != num_frames or num_frames < 1:
            raise ValueError(f"sample_frames: num_frames must be a positive int, got {num_frames}")
        rule: tuple[str, Fraction] = ("bins", Fraction(int(num_frames)))
    else:
        fps = 1.0 if fps is None else fps
        if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
            raise ValueError(f"sample_frames: fps must be a positive number, got {fps!r}")
        rule = ("fps", Fraction(fps).limit_denominator(1_000_000))
    if max_side is not None and max_side < 1:
        raise ValueError(f"sample_frames: max_side must be positive or None, got {max_side}")

    source, name = _clip_source(clip)
    if source is None:  # a torchcodec decoder with no PyAV-readable source
        return _sample_with_decoder(clip, rule, max_side)
    return _sample_with_pyav(source, name, rule, max_side)


def _targets(rule: tuple[str, Fraction], duration: Fraction) -> list[Fraction]:
    kind, value = rule
    if kind == "bins":
        n = int(value)
        return [(2 * i + 1) * duration / (2 * n) for i in range(n)]
    count = max(1, math.ceil(duration * value))
    return [k / value for k in range(count)]


def _scaled_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    longest = max(width, height)
    if max_side is None or longest <= max_side:
        return width, height
    scale = max_side / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def _clip_source(clip: Any) -> tuple[Any, str]:
    """(PyAV-openable source, name for errors); source None = use the torchcodec API."""
    if isinstance(clip, str | os.PathLike):
        path = os.fspath(clip)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"clip file not found: {path}")
        return path, path
    if isinstance(clip, bytes | bytearray | memoryview):
        return io.BytesIO(bytes(clip)), "<clip bytes>"
    if isinstance(clip, Mapping):
        data, path = clip.get("bytes"), clip.get("path")
        name = path or "<clip bytes>"
        if data is not None:
            return io.BytesIO(bytes(data)), name
        if path is not None:
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"clip {path}: no bytes embedded and no such local file (load the "
                    "dataset with embedded clips, or from the folder that holds them)"
                )
            return path, path
        raise ValueError(f"clip dict has neither 'bytes' nor 'path': keys {sorted(clip)}")
    if hasattr(clip, "get_frames_played_at") and hasattr(clip, "metadata"):
        encoded = getattr(clip, "_hf_encoded", None)  # set by datasets.Video.decode_example
        if isinstance(encoded, Mapping):
            data, path = encoded.get("bytes"), encoded.get("path")
            if data is not None or (path is not None and os.path.isfile(path)):
                return _clip_source(encoded)
        return None, str(getattr(clip.metadata, "path", None) or "<torchcodec decoder>")
    raise TypeError(
        f"sample_frames: unsupported clip type {type(clip).__name__}; expected a torchcodec "
        "VideoDecoder, a {'bytes', 'path'} dict, bytes or a path"
    )


def _sample_with_pyav(
    source: Any, name: str, rule: tuple[str, Fraction], max_side: int | None
) -> Frames:
    import av

    try:
        container = av.open(source)
    except av.error.FFmpegError as exc:
        raise ValueError(f"clip {name}: cannot open as video ({exc})") from exc
    try:
        if not container.streams.video:
            raise ValueError(f"clip {name}: has no video stream")
        stream = container.streams.video[0]
        tb = stream.time_base
        if tb is None:
            raise ValueError(f"clip {name}: video stream has no time base")
        packets = []
        for packet in container.demux(stream):
            if packet.size == 0:
                continue
            ts = packet.pts if packet.pts is not None else packet.dts
            if ts is None:
                raise ValueError(f"clip {name}: packet without timestamps; cannot place frames")
            packets.append((ts, packet))
        if not packets:
            raise ValueError(f"clip {name}: video stream has no frames")

        # Presentation timeline (sorted pts) and the clip's extent [first, end).
        pts_sorted = sorted({ts for ts, _ in packets})
        first = pts_sorted[0]
        last_packet = max(packets, key=lambda item: item[0])[1]
        if last_packet.duration:
            last_duration = last_packet.duration
        elif len(pts_sorted) > 1:
            last_duration = int(np.median(np.diff(pts_sorted)))
        else:
            rate = stream.average_rate or stream.base_rate or 1
            last_duration = max(1, round(1 / (Fraction(rate) * tb)))
        duration = (pts_sorted[-1] + last_duration - first) * Fraction(tb)
        seconds = [(p - first) * Fraction(tb) for p in pts_sorted]
        chosen = [
            pts_sorted[max(0, bisect.bisect_right(seconds, t) - 1)]
            for t in _targets(rule, duration)
        ]
        wanted = sorted(set(chosen))

        decoded, _ = _decode_wanted(stream, packets, wanted, name)
        width, height = _scaled_size(
            stream.codec_context.width, stream.codec_context.height, max_side
        )
        rgb = _to_rgb(decoded, width, height)
    except av.error.FFmpegError as exc:
        raise ValueError(f"clip {name}: decoding failed ({exc})") from exc
    finally:
        container.close()
    frames = np.stack([rgb[p] for p in chosen])
    times = np.array([float((p - first) * Fraction(tb)) for p in chosen], dtype=np.float64)
    return Frames(frames, times)


def _to_rgb(frames: Mapping[int, Any], width: int, height: int) -> dict[int, np.ndarray]:
    """RGB arrays at (width, height); one reformatter for all frames reuses its scaler."""
    from av.video.reformatter import VideoReformatter

    reformatter = VideoReformatter()
    return {
        key: reformatter.reformat(frame, width, height, "rgb24", interpolation="AREA").to_ndarray()
        for key, frame in frames.items()
    }


def _decode_wanted(
    stream: Any, packets: list, wanted: list[int], name: str
) -> tuple[dict[int, Any], int]:
    """Decode the frames whose pts are in ``wanted`` (sorted), skipping whole GOPs that
    hold none of them: the decoder jumps to the last keyframe at or before the next wanted
    frame whenever that keyframe lies ahead of what was already fed. Returns the frames
    by pts and the number of packets fed to the decoder."""
    codec = stream.codec_context
    keyframes = sorted((ts, i) for i, (ts, p) in enumerate(packets) if p.is_keyframe)
    key_pts = [ts for ts, _ in keyframes]
    out: dict[int, Any] = {}
    pos = 0  # next packet (decode order) to feed
    flushed = False
    pending: list = []  # decoded frames not yet matched, presentation order
    previous = None  # last frame passed over (fallback when a pts never shows up)
    fed = 0
    wanted_set = set(wanted)
    for w in wanted:
        k = bisect.bisect_right(key_pts, w) - 1
        start = max(i for _, i in keyframes[: k + 1]) if k >= 0 else 0
        if start > pos:
            codec.flush_buffers()
            pos, pending, flushed, previous = start, [], False, None
        while w not in out:
            while pending and w not in out:
                frame = pending.pop(0)
                fpts = frame.pts
                if fpts is None or fpts < w:
                    previous = frame
                elif fpts == w:
                    out[w] = frame
                else:  # skipped past w: keep what was on screen at w
                    out[w] = previous if previous is not None else frame
                    pending.insert(0, frame)
            if w in out:
                break
            if pos < len(packets):
                # A frame nobody wants that no other frame refers to need not be decoded.
                codec.skip_frame = "DEFAULT" if packets[pos][0] in wanted_set else "NONREF"
                pending.extend(codec.decode(packets[pos][1]))
                pos += 1
                fed += 1
            elif not flushed:
                codec.skip_frame = "DEFAULT"
                pending.extend(codec.decode(None))
                flushed = True
            elif previous is not None:
                out[w] = previous
            else:
                raise ValueError(f"clip {name}: frame at pts {w} could not be decoded")
    return out, fed


def _sample_with_decoder(decoder: Any, rule: tuple[str, Fraction], max_side: int | None) -> Frames:
    """torchcodec path (no PyAV-readable source): ask the decoder for frames played at the
    same target times; duck-typed so torchcodec is never imported here."""
    import av

    meta = decoder.metadata
    begin = getattr(meta, "begin_stream_seconds", None) or 0.0
    end = getattr(meta, "end_stream_seconds", None)
    duration = (end - begin) if end is not None else meta.duration_seconds
    targets = [begin + float(t) for t in _targets(rule, Fraction(duration).limit_denominator())]
    batch = decoder.get_frames_played_at(seconds=targets)
    data = batch.data
    data = data.cpu().numpy() if hasattr(data, "cpu") else np.asarray(data)
    if data.shape[-1] != 3:  # NCHW (datasets' default) -> NHWC
        data = data.transpose(0, 2, 3, 1)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    height, width = data.shape[1:3]
    w, h = _scaled_size(width, height, max_side)
    if (w, h) != (width, height):
        scaled = _to_rgb(
            {i: av.VideoFrame.from_ndarray(f, format="rgb24") for i, f in enumerate(data)}, w, h
        )
        data = np.stack([scaled[i] for i in range(len(data))])
    pts = batch.pts_seconds
    pts = pts.cpu().numpy() if hasattr(pts, "cpu") else np.asarray(pts)
    return Frames(data, np.asarray(pts, dtype=np.float64) - begin)


# --- prompts --------------------------------------------------------------------------

# The paper's prompts (Appendix A.3), fragment by fragment as printed, joined the way
# Python joins adjacent string literals (no separator), with len(clips) filled in. The
# text prompt's clip descriptions go where the printed prompt breaks, before its last
# sentence.
_VIDEO_PROMPT_HEAD = (
    "A video has been split into {n} clips, shuffled randomly.",
    "Your task is to analyze each clip deeply to reorder them into the correct temporal "
    "sequence. Focus on:",
)
_VIDEO_PROMPT_FOCUS = {
    "video": (
        "1. Visual content: Examine the actions, transitions, scene details, and context "
        "within each clip.",
    ),
    "video_text": (
        "1. *Visual content*: Examine the actions, transitions, scene details, and context "
        "within each clip.",
        "2. *Temporal logic*: Identify the logical progression of events based on what "
        "happens before or after.",
        "3. *Annotations*: Leverage the annotations to infer their proper chronological sequence.",
    ),
}
_VIDEO_PROMPT_TAIL = (
    "Provide the reordered sequence strictly within order tags in this format: ",
    "\u2019<order>Video X, Video Y, Video Z, \u2026</order>\u2019.",
)
_TEXT_PROMPT_HEAD = (
    "Analyze the following video clips descriptions and order them chronologically as they "
    "are part of one continuous video. ",
    "Focus on temporal clues, event progression, scene transitions and other cues ",
    "Each video clip is labeled as \u2018Video X\u2019, where Video X corresponds to one "
    "shuffled clip. ",
    "Maintain these labels in your response. ",
)
_TEXT_PROMPT_TAIL = (
    "Return the ordered video strictly within <order> tags in this format: ",
    "<order>Video X, Video Y \u2026</order> ",
)

# A fingerprint of every prompt's text: prediction files record it (``splice run``), so
# answers to two wordings of a prompt are never mixed in one file or compared unawares.
PROMPT_VERSION = hashlib.sha256(
    "\x1f".join(
        (
            *_VIDEO_PROMPT_HEAD,
            *(
                line
                for config in sorted(_VIDEO_PROMPT_FOCUS)
                for line in _VIDEO_PROMPT_FOCUS[config]
            ),
            *_VIDEO_PROMPT_TAIL,
            *_TEXT_PROMPT_HEAD,
            *_TEXT_PROMPT_TAIL,
        )
    ).encode("utf-8")
).hexdigest()[:12]


def clip_label(number: int) -> str:
    """The name a prompt gives clip ``number`` (1-based; ``clips[number - 1]``)."""
    return f"Video {number}"


def answer_text(order: Sequence[int]) -> str:
    """An order written the way the paper's prompts ask models to answer, e.g.
    ``<order>Video 2, Video 1</order>``: what baselines and demos emit, so that their
    answers go through the same ``parse_order`` as a model's."""
    return "<order>" + ", ".join(clip_label(k) for k in order) + "</order>"


@dataclass(frozen=True)
class PromptClip:
    """One clip as the prompt presents it; ``heading`` is the text shown with it:
    "Video 3" (video), "Video 3: <caption>" (video_text, text)."""

    number: int
    label: str
    heading: str
    caption: str | None
    clip: Any | None  # the row's clip as loaded (decoder or {"bytes","path"}); None for text


@dataclass(frozen=True)
class Prompt:
    """A row turned into model input. ``text`` is the instruction: for video configs the
    clips follow it (each after its heading); for ``text`` it already holds the numbered
    descriptions, so it is the whole prompt."""

    config: str
    video_id: str | None
    text: str
    clips: tuple[PromptClip, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.clips)


def build_prompt(row: Mapping[str, Any], config: str) -> Prompt:
    """The paper's prompt for one row of ``config`` (Appendix A.3)."""
    _check_config(config)
    vid = row.get(VIDEO_ID)
    where = f"video {vid!r}" if vid is not None else "row"
    if config == "text":
        captions = _field(row, CAPTIONS, where)
        clips = [None] * len(captions)
    else:
        clips = list(_field(row, CLIPS, where))
        captions = list(_field(row, CAPTIONS, where)) if config == "video_text" else None
        if captions is not None and len(captions) != len(clips):
            raise ValueError(
                f"{where}: {len(clips)} clips but {len(captions)} captions in config {config}"
            )
    n = len(clips)
    if n == 0:
        raise ValueError(f"{where}: no clips/captions to order")
    items = []
    for k in range(1, n + 1):
        label = clip_label(k)
        caption = None if captions is None else str(captions[k - 1])
        heading = label if caption is None else f"{label}: {caption}"
        items.append(PromptClip(k, label, heading, caption, clips[k - 1]))
    if config == "text":
        descriptions = "\n".join(c.heading for c in items)
        text = "".join(_TEXT_PROMPT_HEAD) + "\n" + descriptions + "\n" + "".join(_TEXT_PROMPT_TAIL)
    else:
        parts = (*_VIDEO_PROMPT_HEAD, *_VIDEO_PROMPT_FOCUS[config], *_VIDEO_PROMPT_TAIL)
        text = "".join(parts).format(n=n)
    return Prompt(config, vid, text, tuple(items))


def _field(row: Mapping[str, Any], column: str, where: str) -> Any:
    if column not in row or row[column] is None:
        raise KeyError(f"{where}: column {column!r} missing (is this the right config?)")
    return row[column]


def clip_bytes(clip: Any) -> bytes:
    """The encoded MP4 bytes of a clip in any form `sample_frames` accepts."""
    source, name = _clip_source(clip)
    if source is None:
        raise ValueError(f"clip {name}: the decoder holds no readable bytes or local file")
    if isinstance(source, io.BytesIO):
        return source.getvalue()
    return Path(source).read_bytes()


def to_chat_messages(
    prompt: Prompt,
    clips_as: str = "video",
    frames: Mapping[str, Any] | Sequence[Frames] | None = None,
    image_format: str = "jpeg",
) -> list[dict[str, Any]]:
    """The prompt as OpenAI-style chat messages (one user message) for multi-video models.

    Content: the instruction text, then per clip a text item with its heading ("Video 2"
    or "Video 2: <caption>") followed by the clip:

    * ``clips_as="video"``: one ``{"type": "video_url", "video_url": {"url":
      "data:video/mp4;base64,..."}}`` item (the content type vLLM's OpenAI-compatible
      server reads), carrying the clip's MP4 bytes unchanged;
    * ``clips_as="images"``: one ``{"type": "image_url", "image_url": {"url":
      "data:image/jpeg;base64,..."}}`` item per sampled frame (``image_format="png"`` for
      lossless), encoded with PyAV. ``frames`` is either `sample_frames` keyword arguments
      (default ``{"fps": 1.0, "max_side": 448}``) or one precomputed `Frames` per clip.

    The text config has no clips: its content is the single text item.
    """
    if clips_as not in ("video", "images"):
        raise ValueError(f"clips_as must be 'video' or 'images', got {clips_as!r}")
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt.text}]
    if prompt.config != "text":
        if clips_as == "images":
            if frames is None or isinstance(frames, Mapping):
                kwargs = dict(frames or {"fps": 1.0, "max_side": PAPER_MAX_SIDE})
                per_clip = [sample_frames(c.clip, **kwargs) for c in prompt.clips]
            else:
                per_clip = list(frames)
                if len(per_clip) != len(prompt.clips):
                    raise ValueError(
                        f"video {prompt.video_id!r}: {len(per_clip)} frame sets for "
                        f"{len(prompt.clips)} clips"
                    )
        for i, item in enumerate(prompt.clips):
            content.append({"type": "text", "text": item.heading})
            if clips_as == "video":
                url = "data:video/mp4;base64," + base64.b64encode(clip_bytes(item.clip)).decode()
                content.append({"type": "video_url", "video_url": {"url": url}})
            else:
                for image in per_clip[i].frames:
                    content.append(
                        {
                            "type": "image_url",
                            "image_url": {"url": image_data_url(image, image_format)},
                        }
                    )
    return [{"role": "user", "content": content}]


def image_data_url(image: np.ndarray, image_format: str = "jpeg") -> str:
    """A uint8 (H, W, 3) RGB frame as a ``data:image/...;base64,`` URL (PyAV encoders)."""
    import av

    fmts = {"jpeg": ("mjpeg", "yuvj420p"), "png": ("png", "rgb24")}
    if image_format not in fmts:
        raise ValueError(f"image_format must be 'jpeg' or 'png', got {image_format!r}")
    codec_name, pix_fmt = fmts[image_format]
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected a uint8 (H, W, 3) RGB frame, got {image.dtype} {image.shape}")
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
    codec = av.CodecContext.create(codec_name, "w")
    codec.width, codec.height = frame.width, frame.height
    codec.pix_fmt = pix_fmt
    codec.time_base = Fraction(1, 25)
    data = b"".join(
        bytes(p) for p in [*codec.encode(frame.reformat(format=pix_fmt)), *codec.encode(None)]
    )
    return f"data:image/{image_format};base64," + base64.b64encode(data).decode()


# --- answers --------------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    """`splice_dataset.parse_order` is the metric's own parser (imported on first use so
    that the schema does not depend on the metric package)."""
    if name == "parse_order":
        from splice_metric import parse_order

        return parse_order
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
