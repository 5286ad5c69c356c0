"""One small adapter per model family: a ``FramesRequest`` (the paper's prompt and each
clip's sampled frames) -> the processor's inputs, with every "Video k[: caption]" heading
directly before its own clip, and a record of what the model was sent.

Each family's processor expands one placeholder per clip (Qwen2-VL's
``<|vision_start|><|video_pad|><|vision_end|>``, InternVL's and LLaVA-OneVision's
``<video>``) or one image token per frame (SmolVLM/Idefics3 and the generic fallback) in
place, so the text is laid out here (``prompts.interleaved_text``) and the chat template
only wraps it as the user's turn: a template that puts every video before the text (as
LLaVA-OneVision's does) never reorders the clips. Frames are the project's own
(``sampling.sample_frames`` through the runner's frame cache and probe); the processors are
told not to sample again (``do_sample_frames=False``), and Qwen's are told the frames'
real rate, since without it Qwen2.5-VL assumes 24 fps for its time positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from splice_eval.run import prompts
from splice_eval.run.jobs import FramesRequest
from splice_eval.run.local import families
from splice_eval.run.local.families import Family
from splice_eval.run.sampling import Frames


@dataclass(frozen=True)
class Sent:
    """What one row's model input held, counted from the processor's output: recorded in
    the prediction (``sent``) so a run says what its model saw."""

    frames_per_clip: tuple[int, ...]  # frames sampled per clip, as handed to the processor
    frame_size: tuple[int, int] | None  # (width, height) of the sampled frames
    model_frames_per_clip: tuple[int, ...]  # frames per clip in the model's input
    model_frame_size: tuple[int, int] | None  # (width, height) the processor made them
    media_tokens: int  # placeholder tokens standing for the clips in the prompt
    prompt_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


class Adapter:
    """The generic image-text-to-text adapter: each sampled frame as one image, after its
    clip's heading. Subclasses send a clip as one video where the family has a video path."""

    def __init__(self, family: Family, processor: Any) -> None:
        self.family = family
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)

    # --- the text ---------------------------------------------------------------------

    def clip_placeholder(self, frames: Frames) -> str:
        token = getattr(self.processor, "image_token", None)
        if not token:
            raise ValueError(
                f"{type(self.processor).__name__} names no image token: the generic adapter "
                "cannot place frames in its prompt"
            )
        return token * len(frames.frames)

    def text(self, request: FramesRequest) -> str:
        """The whole prompt as the model reads it: the user's turn in the chat template,
        every clip's placeholder right after its heading."""
        placeholders = [self.clip_placeholder(f) for f in request.frames or ()]
        body = prompts.interleaved_text(request.prompt, placeholders)
        messages = [{"role": "user", "content": [{"type": "text", "text": body}]}]
        template = getattr(self.processor, "chat_template", None)
        owner = self.processor if template else self.tokenizer
        if not getattr(owner, "chat_template", None):
            return body  # a base model without a chat format reads the prompt as it is
        return owner.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    # --- the processor's inputs ----------------------------------------------------------

    def processor_kwargs(self, requests: Sequence[FramesRequest]) -> dict[str, Any]:
        images = [[im for f in r.frames or () for im in f.frames] for r in requests]
        if not any(images):
            return {}
        return {"images": images}

    def encode(self, requests: Sequence[FramesRequest]) -> tuple[Any, list[Sent]]:
        """The batch's processor output (tensors, left-padded) and each row's ``Sent``."""
        texts = [self.text(r) for r in requests]
        self.tokenizer.padding_side = "left"  # generation continues every row at its end
        batch = self.processor(
            text=texts, return_tensors="pt", padding=True, **self.processor_kwargs(requests)
        )
        model_frames = self.model_frames(batch, requests)
        sent = []
        for i, request in enumerate(requests):
            clips = request.frames or ()
            counts, size = model_frames[i] if model_frames else ((), None)
            sent.append(
                Sent(
                    frames_per_clip=tuple(len(f.frames) for f in clips),
                    frame_size=_size_of(clips),
                    model_frames_per_clip=tuple(counts),
                    model_frame_size=size,
                    media_tokens=int((batch["input_ids"][i] == self.media_token_id()).sum()),
                    prompt_tokens=int(batch["attention_mask"][i].sum()),
                )
            )
        return batch, sent

    def media_token_id(self) -> int:
        return int(self.tokenizer.convert_tokens_to_ids(self.processor.image_token))

    def model_frames(
        self, batch: Any, requests: Sequence[FramesRequest]
    ) -> list[tuple[list[int], tuple[int, int] | None]]:
        """Per row: frames per clip and their (width, height) in the model's input. Images:
        one per frame (``pixel_values`` is (rows, images, C, H, W) or (images, C, H, W))."""
        if "pixel_values" not in batch:
            return []
        pixels = batch["pixel_values"]
        size = (int(pixels.shape[-1]), int(pixels.shape[-2]))
        return [([len(f.frames) for f in r.frames or ()], size) for r in requests]


class VideoAdapter(Adapter):
    """A family whose processor takes a clip as one video and expands its placeholder."""

    def clip_placeholder(self, frames: Frames) -> str:
        return self.processor.video_token

    def media_token_id(self) -> int:
        return int(self.tokenizer.convert_tokens_to_ids(self.processor.video_token))

    def processor_kwargs(self, requests: Sequence[FramesRequest]) -> dict[str, Any]:
        videos = [f.frames for r in requests for f in r.frames or ()]
        if not videos:
            return {}
        return {"videos": videos, "do_sample_frames": False}

    def model_frames(
        self, batch: Any, requests: Sequence[FramesRequest]
    ) -> list[tuple[list[int], tuple[int, int] | None]]:
        """``pixel_values_videos``: one (T, C, H, W) per clip, in the rows' order."""
        if "pixel_values_videos" not in batch:
            return []
        videos = iter(batch["pixel_values_videos"])
        out = []
        for r in requests:
            clips = [next(videos) for _ in r.frames or ()]
            size = (int(clips[0].shape[-1]), int(clips[0].shape[-2])) if clips else None
            out.append(([int(c.shape[0]) for c in clips], size))
        return out


class QwenAdapter(VideoAdapter):
    """Qwen2-VL / Qwen2.5-VL: a clip is ``<|vision_start|><|video_pad|><|vision_end|>``;
    frames are resized to multiples of 28 px within the processor's pixel bounds and paired
    in time (an odd count gets its last frame repeated), which ``video_grid_thw`` says."""

    def clip_placeholder(self, frames: Frames) -> str:
        return f"<|vision_start|>{self.processor.video_token}<|vision_end|>"

    def processor_kwargs(self, requests: Sequence[FramesRequest]) -> dict[str, Any]:
        from transformers.video_utils import VideoMetadata

        kwargs = super().processor_kwargs(requests)
        if kwargs:
            # qwen-vl-utils' per-frame share of the video's pixel budget (transformers 5.22's
            # default); it binds only for clips far longer than COIN's steps
            kwargs["cap_pixels_per_frame"] = True
            kwargs["video_metadata"] = [
                VideoMetadata(
                    total_num_frames=len(f.frames),
                    fps=frame_rate(f),
                    frames_indices=list(range(len(f.frames))),
                )
                for r in requests
                for f in r.frames or ()
            ]
        return kwargs

    def model_frames(
        self, batch: Any, requests: Sequence[FramesRequest]
    ) -> list[tuple[list[int], tuple[int, int] | None]]:
        if "video_grid_thw" not in batch:
            return []
        video = self.processor.video_processor
        grids = iter(batch["video_grid_thw"].tolist())
        out = []
        for r in requests:
            clips = [next(grids) for _ in r.frames or ()]
            size = (
                (clips[0][2] * video.patch_size, clips[0][1] * video.patch_size) if clips else None
            )
            out.append(([t * video.temporal_patch_size for t, _h, _w in clips], size))
        return out


class InternVLAdapter(VideoAdapter):
    """InternVL (transformers-native): ``<video>`` becomes one ``FrameN: <img>...</img>``
    per frame; the frames travel flattened in ``pixel_values``."""

    def media_token_id(self) -> int:
        return int(self.processor.image_token_id)

    def model_frames(
        self, batch: Any, requests: Sequence[FramesRequest]
    ) -> list[tuple[list[int], tuple[int, int] | None]]:
        if "pixel_values" not in batch:
            return []
        pixels = batch["pixel_values"]
        size = (int(pixels.shape[-1]), int(pixels.shape[-2]))
        starts = self.processor.start_image_token_id
        out = []
        for i, r in enumerate(requests):
            # each frame opens with <img>: the count per row is what reached the model
            opened = int((batch["input_ids"][i] == starts).sum())
            sampled = [len(f.frames) for f in r.frames or ()]
            if opened != sum(sampled):
                raise ValueError(f"InternVL prompt holds {opened} frames, {sum(sampled)} sent")
            out.append((sampled, size if sampled else None))
        return out


class SmolVLMAdapter(Adapter):
    """SmolVLM / Idefics3: each frame one image, never split into tiles (a frame is one
    picture at the processor's size, as the model's own video path does)."""

    def processor_kwargs(self, requests: Sequence[FramesRequest]) -> dict[str, Any]:
        kwargs = super().processor_kwargs(requests)
        if kwargs:
            kwargs["do_image_splitting"] = False
        return kwargs


ADAPTERS: dict[str, type[Adapter]] = {
    families.QWEN2_VL: QwenAdapter,
    families.QWEN2_5_VL: QwenAdapter,
    families.INTERNVL: InternVLAdapter,
    families.LLAVA_ONEVISION: VideoAdapter,
    families.SMOLVLM: SmolVLMAdapter,
    families.GENERIC: Adapter,
}


def adapter_for(family: Family, processor: Any) -> Adapter:
    return ADAPTERS[family.name](family, processor)


def frame_rate(frames: Frames) -> float:
    """Frames per second of a clip's sampled frames (their median spacing; 1.0 for one)."""
    times = np.asarray(frames.times, dtype=np.float64)
    steps = np.diff(times)
    steps = steps[steps > 0]
    return float(1.0 / np.median(steps)) if len(steps) else 1.0


def _size_of(clips: Sequence[Frames]) -> tuple[int, int] | None:
    if not clips:
        return None
    height, width = clips[0].frames.shape[1:3]
    return int(width), int(height)
