"""SPLICE for lmms-eval: the functions the task YAMLs name with ``!function utils.<name>``.

Register the folder with ``lmms-eval --include_path lmms_eval_tasks/splice`` and run
``--tasks splice`` (all three configs) or one of ``splice_video``, ``splice_video_text``,
``splice_text``. The project must be importable (``pip install -e .`` in lmms-eval's
environment, or ``PYTHONPATH=<repo>``): everything SPLICE-specific comes from
``splice_dataset`` (schema), ``splice_eval`` (prompts, scoring) and ``splice_metric``
(parser and scores), so an
lmms-eval run and ``splice run`` ask the same question and score the same way.

This module imports nothing from lmms-eval, so its functions also run (and are tested)
without it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import datasets

import splice_dataset as schema
import splice_formats
import splice_metric
from splice_build.atomic import atomic_path
from splice_build.output.card_reader import read_card
from splice_eval.run import frame_cache, probes, prompts, sampling
from splice_metric.questions import answer_text, read_answer, score_questions

# The YAML's ``generation_kwargs.max_new_tokens`` (``!function utils.MAX_NEW_TOKENS``):
# the limit of every path, so lmms-eval and ``splice run`` cut a long answer alike.
MAX_NEW_TOKENS = prompts.MAX_NEW_TOKENS

# Where process_docs writes the clips lmms-eval's video models read by path.
CLIP_CACHE_ENV = "SPLICE_CLIP_CACHE"
DEFAULT_CLIP_CACHE = Path("~/.cache/splice/clips")

# The data the tasks load (the YAML's ``dataset_path: !function utils.DATASET_PATH``): a
# built folder or a Hub id in $SPLICE_DATA, else the build `make demo`, `splice demo` and
# `splice build` write by default (./splice-data): in the folder lmms-eval starts in, else,
# for this folder in a checkout, at the root of the repository. Resolved here, to an
# absolute path, because lmms-eval hands dataset_path to load_dataset as it is: a relative
# name resolved against the working directory, and where no such folder existed,
# `datasets` fell back to whatever build it had cached under that name.
DATA_ENV = "SPLICE_DATA"
_CHECKOUT = Path(__file__).resolve().parents[2]
# None where this folder is installed (inside splice_eval) rather than in a checkout.
REPO_BUILD = _CHECKOUT / schema.DEFAULT_BUILD_DIR if (_CHECKOUT / "setup.cfg").is_file() else None


def default_build() -> Path | None:
    """./splice-data where lmms-eval runs, else the checkout's (if this is one), else None."""
    here = Path.cwd() / schema.DEFAULT_BUILD_DIR
    if here.is_dir():
        return here.resolve()
    return REPO_BUILD if REPO_BUILD is not None and REPO_BUILD.is_dir() else None


def dataset_path() -> str:
    """The absolute build folder (or the Hub id) the tasks load: $SPLICE_DATA, else
    ./splice-data where lmms-eval runs, else the checkout's build; outside a checkout the
    published dataset (``splice_dataset.PUBLISHED_ID``). In a checkout with no build,
    FileNotFoundError naming what was looked for (never a cached build under that name)."""
    given = os.environ.get(DATA_ENV, "").strip()
    if not given:
        found = default_build()
        if found is None and REPO_BUILD is None:
            # outside a checkout (installed, or exported into lmms-eval): the published data
            return schema.PUBLISHED_ID
        if found is None:
            looked = [Path.cwd() / schema.DEFAULT_BUILD_DIR, REPO_BUILD]
            raise FileNotFoundError(
                f"no SPLICE build at {' or '.join(str(p) for p in looked if p)}: run "
                f"`make demo` or `splice demo` there, or set {DATA_ENV} to a built folder "
                "or the dataset's Hub id"
            )
        return str(found)
    path = Path(given).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if not schema.is_hub_id(given):
        raise FileNotFoundError(f"{DATA_ENV}={given}: not a built SPLICE folder or a Hub id")
    return given


def __getattr__(name: str) -> Any:
    # Resolved when lmms-eval reads the YAML (``!function`` takes a module attribute), not
    # at import: the functions below also run without a build.
    if name == "DATASET_PATH":
        return dataset_path()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def process_docs(dataset: Any) -> Any:
    """Clips as paths of files in the clip cache, written once at load: lmms-eval's video
    models read files, and lmms-eval logs every doc with ``--log_samples``, so a doc that
    carried the clip bytes pasted them into the samples file (as base64 "image/png")."""
    dataset = schema.undecoded(dataset)
    if schema.CLIPS not in (dataset.features or {}):
        return dataset
    features = datasets.Features(
        {**dataset.features, schema.CLIPS: datasets.List(datasets.Value("string"))}
    )
    if isinstance(dataset, datasets.Dataset):
        # In memory and never from the cache: cached paths could name deleted files.
        return dataset.map(
            _clips_to_files, features=features, keep_in_memory=True, load_from_cache_file=False
        )
    return dataset.map(_clips_to_files, features=features)


def _clips_to_files(doc: dict[str, Any]) -> dict[str, Any]:
    return {schema.CLIPS: doc_to_visual(doc)}


def config_of(doc: dict[str, Any]) -> str:
    """The SPLICE config a doc comes from, read off its columns (each config has its own)."""
    has_clips, has_captions = schema.CLIPS in doc, schema.CAPTIONS in doc
    if has_clips and has_captions:
        return "video_text"
    if has_clips:
        return "video"
    if has_captions:
        return "text"
    raise KeyError(f"video {doc.get(schema.VIDEO_ID)!r}: neither clips nor captions in the doc")


def clip_cache_dir() -> Path:
    return Path(os.environ.get(CLIP_CACHE_ENV) or DEFAULT_CLIP_CACHE).expanduser()


def doc_to_visual(doc: dict[str, Any]) -> list[str]:
    """Paths of the row's clips, "Video 1" first, each written once to the clip cache.

    Files are named by ``splice_dataset.clip_file_name`` (video id + shuffled label), so
    the name tells the model nothing about the order, in a folder named by the clip's
    sha256 (`_cached`): a rebuild, or another build sharing video ids, never reads another
    build's clip. Docs from process_docs already hold the paths.
    """
    if config_of(doc) == "text":
        return []
    video_id = str(doc[schema.VIDEO_ID])
    paths = []
    labels = doc.get(schema.LABELS) or range(1, len(doc[schema.CLIPS]) + 1)  # a question's
    for label, clip in zip(labels, doc[schema.CLIPS], strict=True):
        if isinstance(clip, str):
            paths.append(clip)
            continue
        data = sampling.clip_bytes(clip)
        name = Path(video_id, _digest(data), schema.clip_file_name(video_id, label))
        paths.append(str(_cached(name, lambda target, data=data: target.write_bytes(data))))
    return paths


def _digest(data: bytes) -> str:
    """The folder name keying a cached file by the content it was made from."""
    return hashlib.sha256(data).hexdigest()[:32]


def _cached(name: Path, write: Any) -> Path:
    """``clip_cache_dir() / name``, made by ``write(tmp_path)`` once (atomically: parallel
    ranks never read half a file). A cache that cannot be written is said once and a
    private temporary folder serves instead: the row still gets its file."""
    for root in (clip_cache_dir(), _fallback_dir()):
        path = root / name
        if path.is_file():
            return path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                write(tmp)
            return path
        except OSError as exc:
            if root != clip_cache_dir():
                raise
            _say_unwritable(root, exc.strerror or str(exc))
    raise AssertionError("unreachable: the fallback folder raises")


@functools.cache
def _fallback_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="splice-clips-"))


@functools.cache
def _say_unwritable(root: Path, why: str) -> None:
    print(
        f"splice: clip cache {root} cannot be written ({why}); clips are "
        f"written under {_fallback_dir()} instead",
        file=sys.stderr,
    )


@functools.cache
def _build_of(path: str) -> str:
    return read_card(path).build_id


def build_id() -> str:
    """The identity of the build the tasks load (its card's ``splice_build.build_id``),
    logged with every sample so ``splice score`` can tell which build it was; "" for a
    Hub id or a card without one."""
    try:
        return _build_of(dataset_path())
    except FileNotFoundError:
        return ""


# --- probes (``splice_eval.run.probes``): the task variants splice_video_<probe> -------------

# The frames a probe variant samples: the paper's 1 fps / 448 px (``splice run``'s default),
# written back as a video at that rate, so a model reading the file sees those frames.
PROBE_FRAMES = sampling.FrameSpec()
PROBE_VIDEO_FPS = 1


def probed_visual(doc: dict[str, Any], probe: str) -> list[str]:
    """Paths of the row's clips as ``probe`` shows them: each clip's frames sampled with
    ``PROBE_FRAMES`` (through the frame cache, ``$SPLICE_FRAME_CACHE``), passed through
    ``probes.apply_probe`` (seed ``probes.DEFAULT_SEED``) and written once as an MP4 under
    the clip cache's ``probe-<name>`` folder (same file names as the clips, so a name tells
    nothing about the order)."""
    paths = doc_to_visual(doc)
    if probe == probes.NONE or not paths:
        return paths
    video_id = str(doc[schema.VIDEO_ID])
    cache = frame_cache.FrameCache(frame_cache.default_dir())
    out = []
    for index, path in enumerate(paths):
        # keyed by the clip's content: a rebuild's clip never finds the old one's frames
        name = Path(f"probe-{probe}", video_id, _digest(Path(path).read_bytes()), Path(path).name)

        def write(target: Path, path: str = path, index: int = index) -> None:
            frames = cache.sample(path, PROBE_FRAMES.kwargs())
            shown = probes.apply_probe(probe, frames, probes.DEFAULT_SEED, video_id, index)
            write_frames_video(shown.frames, target)

        out.append(str(_cached(name, write)))
    return out


def write_frames_video(frames: Any, path: Path) -> Path:
    """uint8 (T, H, W, 3) frames as an H.264 MP4 at ``PROBE_VIDEO_FPS``, written atomically
    (parallel ranks never read half a file). yuv420p needs even sides: an odd last row or
    column is dropped."""
    import av

    height, width = (frames.shape[1] // 2) * 2, (frames.shape[2] // 2) * 2
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        with av.open(str(tmp), "w", format="mp4") as container:
            stream = container.add_stream("libx264", rate=PROBE_VIDEO_FPS)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            for image in frames:
                frame = av.VideoFrame.from_ndarray(image[:height, :width].copy(), format="rgb24")
                container.mux(stream.encode(frame))
            container.mux(stream.encode(None))
    return path


def doc_to_visual_single_frame(doc: dict[str, Any]) -> list[str]:
    return probed_visual(doc, "single-frame")


def doc_to_visual_frame_shuffle(doc: dict[str, Any]) -> list[str]:
    return probed_visual(doc, "frame-shuffle")


def doc_to_visual_reversed(doc: dict[str, Any]) -> list[str]:
    return probed_visual(doc, "reversed")


def doc_to_visual_blind(doc: dict[str, Any]) -> list[str]:
    return probed_visual(doc, "blind")


def doc_to_messages_single_frame(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
) -> list[dict]:
    return doc_to_messages(doc, lmms_eval_specific_kwargs, "single-frame")


def doc_to_messages_frame_shuffle(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
) -> list[dict]:
    return doc_to_messages(doc, lmms_eval_specific_kwargs, "frame-shuffle")


def doc_to_messages_reversed(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
) -> list[dict]:
    return doc_to_messages(doc, lmms_eval_specific_kwargs, "reversed")


def doc_to_messages_blind(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
) -> list[dict]:
    return doc_to_messages(doc, lmms_eval_specific_kwargs, "blind")


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    """The paper's prompt. For video configs the clips' headings ("Video 1" ..., with their
    captions for video_text) follow the instruction, in the order doc_to_visual gives the
    clips, since a plain lmms-eval model gets the visuals apart from the text."""
    kwargs = lmms_eval_specific_kwargs or {}
    prompt = prompts.build_question_prompt(doc, config_of(doc), format_of(doc))
    text = prompt.text
    if prompt.config != "text":
        text += "\n" + "\n".join(c.heading for c in prompt.clips)
    return f"{kwargs.get('pre_prompt', '')}{text}{kwargs.get('post_prompt', '')}"


def doc_to_messages(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None, probe: str = probes.NONE
) -> list[dict[str, Any]]:
    """Chat models: the instruction, then each clip after its heading, interleaved (the
    layout of ``splice_eval.run.prompts.to_chat_messages``, in lmms-eval's content format)."""
    prompt = prompts.build_question_prompt(doc, config_of(doc), format_of(doc))
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt.text}]
    if prompt.config != "text":
        for item, path in zip(prompt.clips, probed_visual(doc, probe), strict=True):
            content.append({"type": "text", "text": heading_text(item.heading)})
            content.append({"type": "video", "url": path})
    return [{"role": "user", "content": content}]


def heading_text(heading: str) -> str:
    """A clip's heading as its own line: the model classes' chat templates join content
    items with nothing between them, which ran the instruction, the heading and the clip's
    tokens together ("...'.Video 1: spray towards the fire<|vision_start|>")."""
    return f"\n{heading}\n"


def doc_to_target(doc: dict[str, Any]) -> str:
    """The ideal answer in the prompt's format (for logs; scoring uses the label order)."""
    if format_of(doc) != splice_formats.ORDER:
        return answer_text(doc[schema.ANSWER]["option"], format_of(doc), doc[schema.LABELS])
    order = doc[schema.ANSWER]["order"]
    return prompts.answer_text(order)


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict[str, Any]]:
    """One record per doc, under every metric's name: the metric needs all examples at
    once (for per-n breakdowns), so per-doc work is only parsing the answer."""
    raw = results[0] if results else None
    record = {  # also a row of a prediction file: `splice score` reads --log_samples files
        "video_id": str(doc[schema.VIDEO_ID]),
        "config": config_of(doc),
        "raw_output": raw,
        "order": splice_metric.parse_order(raw) if isinstance(raw, str) else None,
        "reference": list(doc[schema.ANSWER]["order"]),
        "build_id": build_id() or None,  # checked by `splice score` against its --data
    }
    return {name: record for name in splice_metric.RATES}


def score_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The SPLICE metric over process_results' records, scored as ``splice score`` scores
    an order run (``splice_eval.scoring.runs.score_run``: the metric's ``score`` of every
    video's parsed order; unparsed answers count as invalid, and apart as unparsed). The
    metric itself, not the runs module: the exported task (``splice export-task``) carries
    the metric and nothing of the prediction-file side."""
    return splice_metric.score([r["order"] for r in records], [r["reference"] for r in records])


def _aggregator(name: str):
    def aggregate(records: list[dict[str, Any]]) -> float:
        return float(score_records(records)[name])

    aggregate.__name__ = f"aggregate_{name}"
    aggregate.__doc__ = f"lmms-eval aggregation: the SPLICE metric's {name} over all docs."
    return aggregate


# --- question formats (``splice_formats``): the task variants splice_<format> ------------

QUESTION_METRICS = ("accuracy", "chance", "unparsed_rate", "invalid_rate")


def format_of(doc: dict[str, Any]) -> str:
    """The format a doc asks in: a question row has a question id, and a pair's options are
    single clips."""
    if schema.QUESTION_ID not in doc:
        return splice_formats.ORDER
    options = doc[schema.OPTIONS]
    return splice_formats.PAIRWISE if all(len(o) == 1 for o in options) else splice_formats.CHOICE


def _questions(dataset: Any, fmt: str) -> Any:
    """A config's rows as ``fmt`` questions (``splice_dataset.question_batch``), after the
    clips became cached files (``process_docs``): the questions copy paths, never bytes."""
    docs = process_docs(dataset)
    config = config_of(docs.features)
    features = schema.question_features(config, fmt, decode=False)
    if schema.CLIPS in features:
        features[schema.CLIPS] = datasets.List(datasets.Value("string"))
    return docs.map(
        lambda batch: schema.question_batch(batch, config, fmt),
        batched=True,
        remove_columns=list(schema.columns(config)),
        features=features,
        **({"keep_in_memory": True} if isinstance(docs, datasets.Dataset) else {}),
    )


def process_docs_pairwise(dataset: Any) -> Any:
    return _questions(dataset, splice_formats.PAIRWISE)


def process_docs_choice(dataset: Any) -> Any:
    return _questions(dataset, splice_formats.CHOICE)


def process_results_question(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """One record per question under every question metric's name: the option read from
    the answer by the metric's parser, and the question's reference."""
    raw = results[0] if results else None
    fmt, answer, labels = format_of(doc), doc[schema.ANSWER], list(doc[schema.LABELS])
    option = read_answer(raw, fmt, int(answer["num_options"]), labels)
    record = {  # also a row of a prediction file of that format
        "video_id": str(doc[schema.QUESTION_ID]),
        "config": config_of(doc),
        "format": fmt,
        "raw_output": raw,
        "order": None if option is None else [option],
        "reference": {**answer, "labels": labels},
        "build_id": build_id() or None,
    }
    return {name: record for name in QUESTION_METRICS}


def _question_aggregator(name: str):
    def aggregate(records: list[dict[str, Any]]) -> float:
        answers = [r["order"][0] if r["order"] else None for r in records]
        result = score_questions(answers, [r["reference"] for r in records], records[0]["format"])
        return float(result[name])

    aggregate.__name__ = f"aggregate_question_{name}"
    aggregate.__doc__ = f"lmms-eval aggregation: the SPLICE question {name} over all docs."
    return aggregate


aggregate_question_accuracy = _question_aggregator("accuracy")
aggregate_question_chance = _question_aggregator("chance")
aggregate_question_unparsed_rate = _question_aggregator("unparsed_rate")
aggregate_question_invalid_rate = _question_aggregator("invalid_rate")

aggregate_binary_accuracy = _aggregator("binary_accuracy")
aggregate_hamming_accuracy = _aggregator("hamming_accuracy")
aggregate_lcs_ratio = _aggregator("lcs_ratio")
aggregate_edit_distance = _aggregator("edit_distance")
aggregate_kendall_tau = _aggregator("kendall_tau")
aggregate_pairwise_accuracy = _aggregator("pairwise_accuracy")
aggregate_invalid_rate = _aggregator("invalid_rate")
aggregate_unparsed_rate = _aggregator("unparsed_rate")
