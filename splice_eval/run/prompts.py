"""The paper's prompts (Appendix A.3) and the chat messages that carry them.

``splice run``, the lmms-eval task and a user's own script all ask with ``build_prompt``, so
every way of running a model asks the same question; ``PROMPT_VERSION`` fingerprints the
wording for the prediction files. ``parse_order`` is the metric's own parser, named here
beside the prompt whose answers it reads (the project has no other parser).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

import splice_dataset as schema
import splice_formats
from splice_eval.run.sampling import Frames, clip_bytes, sample_frames
from splice_metric import parse_order

__all__ = [
    "MAX_NEW_TOKENS",
    "PROMPT_VERSION",
    "QUESTION_PROMPT_VERSION",
    "Prompt",
    "PromptClip",
    "answer_text",
    "build_prompt",
    "build_question_prompt",
    "prompt_version",
    "clip_label",
    "image_data_url",
    "interleaved_text",
    "parse_order",
    "to_chat_messages",
]

# The most tokens a model may generate for one answer, on every path that asks SPLICE
# (``splice run``'s ``--max-tokens`` default, the lmms-eval task's ``max_new_tokens``): a
# model that reasons before its order is cut at the same place whichever path runs it.
MAX_NEW_TOKENS = 1024

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


# The question formats' prompts (splice_formats), in the same style: the order prompt's
# opening and focus list, the question in its words, an answer in tags.
_PAIRWISE_VIDEO_HEAD = (
    "Two clips have been taken from one video and are shown in random order.",
    "Your task is to analyze each clip deeply to decide which of the two happened first in "
    "the video. Focus on:",
)
_CHOICE_VIDEO_HEAD = (
    "A video has been split into {n} clips, shuffled randomly.",
    "Your task is to analyze each clip deeply to choose which of the candidate orders below "
    "is the correct temporal sequence. Focus on:",
)
_PAIRWISE_VIDEO_TAIL = (
    "Provide the clip that happened first strictly within answer tags in this format: ",
    "\u2019<answer>Video X</answer>\u2019.",
)
_CHOICE_VIDEO_TAIL = (
    "Provide the letter of the correct order strictly within answer tags in this format: ",
    "\u2019<answer>X</answer>\u2019.",
)
_PAIRWISE_TEXT_HEAD = (
    "Analyze the following two video clip descriptions from one continuous video and "
    "decide which of them happened first. ",
    *_TEXT_PROMPT_HEAD[1:],
)
_CHOICE_TEXT_HEAD = (
    "Analyze the following video clips descriptions and choose the order in which they "
    "happened as part of one continuous video. ",
    *_TEXT_PROMPT_HEAD[1:],
)
_PAIRWISE_TEXT_TAIL = (
    "Return the clip that happened first strictly within <answer> tags in this format: ",
    "<answer>Video X</answer> ",
)
_CHOICE_TEXT_TAIL = (
    "Return the letter of the correct order strictly within <answer> tags in this format: ",
    "<answer>X</answer> ",
)
_OPTIONS_HEAD = "Candidate orders:"
_QUESTION_PROMPTS = {
    (splice_formats.PAIRWISE, "video"): (_PAIRWISE_VIDEO_HEAD, _PAIRWISE_VIDEO_TAIL),
    (splice_formats.CHOICE, "video"): (_CHOICE_VIDEO_HEAD, _CHOICE_VIDEO_TAIL),
    (splice_formats.PAIRWISE, "text"): (_PAIRWISE_TEXT_HEAD, _PAIRWISE_TEXT_TAIL),
    (splice_formats.CHOICE, "text"): (_CHOICE_TEXT_HEAD, _CHOICE_TEXT_TAIL),
}
# Their fingerprint, recorded by question runs (order runs keep PROMPT_VERSION, unchanged).
QUESTION_PROMPT_VERSION = hashlib.sha256(
    "\x1f".join(
        (
            PROMPT_VERSION,
            _OPTIONS_HEAD,
            *(
                line
                for key in sorted(_QUESTION_PROMPTS)
                for p in _QUESTION_PROMPTS[key]
                for line in p
            ),
        )
    ).encode("utf-8")
).hexdigest()[:12]


def prompt_version(format: str = splice_formats.ORDER) -> str:
    """The fingerprint of the prompts a run of ``format`` asks with."""
    return PROMPT_VERSION if format == splice_formats.ORDER else QUESTION_PROMPT_VERSION


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
    schema.columns(config)  # refuses an unknown config
    vid = row.get(schema.VIDEO_ID)
    where = f"video {vid!r}" if vid is not None else "row"
    if config == "text":
        captions = _field(row, schema.CAPTIONS, where)
        clips = [None] * len(captions)
    else:
        clips = list(_field(row, schema.CLIPS, where))
        captions = list(_field(row, schema.CAPTIONS, where)) if config == "video_text" else None
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


def build_question_prompt(row: Mapping[str, Any], config: str, format: str) -> Prompt:
    """The prompt for one question row (``splice_dataset.question_rows``) of ``config``: the
    clips it shows, in the order shown, each labelled as in the video's row."""
    if format == splice_formats.ORDER:
        return build_prompt(row, config)
    head, tail = _QUESTION_PROMPTS[(format, "text" if config == "text" else "video")]
    if config != "text":
        head = (*head, *_VIDEO_PROMPT_FOCUS[config])
    order = build_prompt(row, config)  # the clips and captions, checked as an order row's
    labels = [int(x) for x in _field(row, schema.LABELS, f"question {row.get('question_id')!r}")]
    if len(labels) != len(order.clips):
        raise ValueError(f"question {row.get('question_id')!r}: labels do not match its clips")
    items = tuple(
        PromptClip(k, clip_label(k), clip_label(k) + c.heading[len(c.label) :], c.caption, c.clip)
        for k, c in zip(labels, order.clips, strict=True)
    )
    parts = ["".join(head).format(n=len(items))]
    if config == "text":
        parts.append("\n".join(c.heading for c in items))
    if format == splice_formats.CHOICE:
        options = _field(row, schema.OPTIONS, f"question {row.get('question_id')!r}")
        parts.append(_OPTIONS_HEAD)
        parts += [
            f"{splice_formats.LETTERS[i]}. " + ", ".join(clip_label(k) for k in o)
            for i, o in enumerate(options)
        ]
    parts.append("".join(tail))
    return Prompt(config, row.get(schema.VIDEO_ID), "\n".join(parts), items)


def interleaved_text(prompt: Prompt, clip_texts: Sequence[str]) -> str:
    """The prompt as one text for a model that takes its clips inline: the instruction,
    then each clip's heading ("Video 2" or "Video 2: <caption>") with ``clip_texts[i]``
    (the model's placeholder for that clip) on the next line, every part on its own line.

    This is the layout of Appendix A.3 for a processor that expands placeholders in place
    (``splice run --backend transformers`` / ``vllm``): every clip right after its own
    heading, never all clips before or after the text. The text config has no clips: its
    text is the whole prompt."""
    if prompt.config == "text" or not prompt.clips:
        return prompt.text
    if len(clip_texts) != len(prompt.clips):
        raise ValueError(
            f"video {prompt.video_id!r}: {len(clip_texts)} placeholders for "
            f"{len(prompt.clips)} clips"
        )
    parts = [prompt.text]
    for clip, placeholder in zip(prompt.clips, clip_texts, strict=True):
        parts += [clip.heading, placeholder]
    return "\n".join(parts)


def _field(row: Mapping[str, Any], column: str, where: str) -> Any:
    if column not in row or row[column] is None:
        raise KeyError(f"{where}: column {column!r} missing (is this the right config?)")
    return row[column]


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
      (default ``{"fps": 1.0, "long_side": 448}``) or one precomputed `Frames` per clip.

    The text config has no clips: its content is the single text item.
    """
    if clips_as not in ("video", "images"):
        raise ValueError(f"clips_as must be 'video' or 'images', got {clips_as!r}")
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt.text}]
    if prompt.config != "text":
        if clips_as == "images":
            if frames is None or isinstance(frames, Mapping):
                kwargs = dict(frames or {"fps": 1.0, "long_side": schema.PAPER_LONG_SIDE})
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
