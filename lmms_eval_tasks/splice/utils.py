"""SPLICE for lmms-eval: the functions the task YAMLs name with ``!function utils.<name>``.

Register the folder with ``lmms-eval --include_path lmms_eval_tasks/splice`` and run
``--tasks splice`` (all three configs) or one of ``splice_video``, ``splice_video_text``,
``splice_text``. The project must be importable (``pip install -e .`` in lmms-eval's
environment, or ``PYTHONPATH=<repo>``): everything SPLICE-specific comes from
``splice_dataset`` (prompts, schema) and ``splice_metric`` (parser and scores), so an
lmms-eval run and ``splice run`` ask the same question and score the same way.

This module imports nothing from lmms-eval, so its functions also run (and are tested)
without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import splice_dataset as schema
import splice_metric

# Where doc_to_visual writes the clips lmms-eval's video models read by path.
CLIP_CACHE_ENV = "SPLICE_CLIP_CACHE"
DEFAULT_CLIP_CACHE = Path("~/.cache/splice/clips")


def process_docs(dataset: Any) -> Any:
    """Hand clips back undecoded (``{"bytes", "path"}``): datasets decodes ``Video`` with
    torchcodec only, and lmms-eval's video models want files, not decoders."""
    return schema.undecoded(dataset)


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
    """Paths of the row's clips, "Video 1" first, written once to the clip cache.

    Files are named by ``splice_dataset.clip_file_name`` (video id + shuffled label), so
    the name tells the model nothing about the order.
    """
    if config_of(doc) == "text":
        return []
    video_id = str(doc[schema.VIDEO_ID])
    folder = clip_cache_dir() / video_id
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for label, clip in enumerate(doc[schema.CLIPS], 1):
        path = folder / schema.clip_file_name(video_id, label)
        data = schema.clip_bytes(clip)
        if not path.exists() or path.stat().st_size != len(data):
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)  # atomic: parallel ranks never read half a clip
        paths.append(str(path))
    return paths


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    """The paper's prompt. For video configs the clips' headings ("Video 1" ..., with their
    captions for video_text) follow the instruction, in the order doc_to_visual gives the
    clips, since a plain lmms-eval model gets the visuals apart from the text."""
    kwargs = lmms_eval_specific_kwargs or {}
    prompt = schema.build_prompt(doc, config_of(doc))
    text = prompt.text
    if prompt.config != "text":
        text += "\n" + "\n".join(c.heading for c in prompt.clips)
    return f"{kwargs.get('pre_prompt', '')}{text}{kwargs.get('post_prompt', '')}"


def doc_to_messages(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
) -> list[dict[str, Any]]:
    """Chat models: the instruction, then each clip after its heading, interleaved (the
    layout of ``splice_dataset.to_chat_messages``, in lmms-eval's content format)."""
    prompt = schema.build_prompt(doc, config_of(doc))
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt.text}]
    if prompt.config != "text":
        for item, path in zip(prompt.clips, doc_to_visual(doc), strict=True):
            content.append({"type": "text", "text": item.heading})
            content.append({"type": "video", "url": path})
    return [{"role": "user", "content": content}]


def doc_to_target(doc: dict[str, Any]) -> str:
    """The ideal answer in the prompt's format (for logs; scoring uses the label order)."""
    order = doc[schema.ANSWER]["order"]
    return schema.answer_text(order)


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict[str, Any]]:
    """One record per doc, under every metric's name: the metric needs all examples at
    once (for per-n breakdowns), so per-doc work is only parsing the answer."""
    raw = results[0] if results else None
    record = {
        "video_id": str(doc[schema.VIDEO_ID]),
        "raw_output": raw,
        "order": splice_metric.parse_order(raw) if isinstance(raw, str) else None,
        "reference": list(doc[schema.ANSWER]["order"]),
    }
    return {name: record for name in splice_metric.METRICS}


def score_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The SPLICE metric over process_results' records (unparsed answers are invalid)."""
    return splice_metric.score([r["order"] for r in records], [r["reference"] for r in records])


def _aggregator(name: str):
    def aggregate(records: list[dict[str, Any]]) -> float:
        return float(score_records(records)[name])

    aggregate.__name__ = f"aggregate_{name}"
    aggregate.__doc__ = f"lmms-eval aggregation: the SPLICE metric's {name} over all docs."
    return aggregate


aggregate_binary_accuracy = _aggregator("binary_accuracy")
aggregate_hamming_accuracy = _aggregator("hamming_accuracy")
aggregate_lcs_ratio = _aggregator("lcs_ratio")
aggregate_edit_distance = _aggregator("edit_distance")
aggregate_kendall_tau = _aggregator("kendall_tau")
aggregate_pairwise_accuracy = _aggregator("pairwise_accuracy")
aggregate_invalid_rate = _aggregator("invalid_rate")
