"""The model families ``splice run --backend transformers`` knows, and the paper's frame
settings for each (Appendix A.2), without importing torch or transformers.

A family is picked from the checkpoint's ``config.json`` ``model_type``; a type no family
names is run by the generic image-text-to-text adapter, frames sent as images. The frame
settings are ``--frames`` strings (``runner.parse_frames`` reads them), so a family's
default is spelled exactly as a user would override it. ``checkpoint_family`` is the one
reading of a checkpoint's config that both local backends do before loading anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from splice_build.errors import UserError

QWEN2_VL = "qwen2_vl"
QWEN2_5_VL = "qwen2_5_vl"
INTERNVL = "internvl"
LLAVA_ONEVISION = "llava_onevision"
SMOLVLM = "smolvlm"
GENERIC = "generic"

# "Qwen2-VL ... 1 fps, and the highest image resolution was set to 448 pixels"; InternVL2.5
# and LLaVA-OneVision: "16 frames instead of fps" (Appendix A.2). The 448 px long-side cap
# is the parser's default, so it applies to every family's sampled frames.
PAPER_FPS = "fps=1"
PAPER_UNIFORM = "num_frames=16"


@dataclass(frozen=True)
class Family:
    """One adapter's models: the ``model_type``s it serves, its default ``--frames``, and
    how clips reach the model (``"video"``: one video per clip through the processor's
    video path; ``"images"``: each sampled frame as an image)."""

    name: str
    model_types: tuple[str, ...]
    frames: str
    clips_as: str
    paper: str  # where the default comes from, for the README and the run's line


FAMILIES: tuple[Family, ...] = (
    Family(QWEN2_VL, ("qwen2_vl",), PAPER_FPS, "video", "Appendix A.2 (Qwen2-VL)"),
    Family(QWEN2_5_VL, ("qwen2_5_vl",), PAPER_FPS, "video", "Appendix A.2 (Qwen2-VL family)"),
    Family(INTERNVL, ("internvl",), PAPER_UNIFORM, "video", "Appendix A.2 (InternVL2.5)"),
    Family(
        LLAVA_ONEVISION,
        ("llava_onevision",),
        PAPER_UNIFORM,
        "video",
        "Appendix A.2 (LLaVA-OneVision)",
    ),
    Family(SMOLVLM, ("smolvlm", "idefics3"), PAPER_FPS, "images", "not in the paper: 1 fps"),
)
GENERIC_FAMILY = Family(GENERIC, (), PAPER_FPS, "images", "not in the paper: 1 fps")

# Remote-code checkpoints that transformers' own classes do not load: said in one line.
REMOTE_CODE_TYPES = {
    "internvl_chat": "use a transformers-native InternVL checkpoint (the '-hf' repositories, "
    "model_type 'internvl')",
}


def family_of(model_type: str) -> Family:
    """The family serving ``model_type`` (a checkpoint's ``config.model_type``)."""
    for family in FAMILIES:
        if model_type in family.model_types:
            return family
    return GENERIC_FAMILY


def refuse_model(model: str, exc: BaseException) -> UserError:
    """A checkpoint that cannot be loaded, in one line naming ``--model``."""
    words = " ".join(str(exc).split())
    if len(words) > 300:
        words = words[:297] + "..."
    return UserError(f"--model {model}: cannot load it ({type(exc).__name__}: {words})")


def checkpoint_family(transformers: Any, model: str) -> tuple[str, Family]:
    """``model``'s ``config.json`` ``model_type`` and the family serving it, read with the
    caller's ``transformers`` (this module imports neither it nor torch); a UserError naming
    ``--model`` when the config cannot be read or the checkpoint is remote code.

    The refusal comes before anything could run the checkpoint's code: ``config.json`` is
    read as data first (``get_config_dict``), and the config class is then loaded with
    ``trust_remote_code=False``. ``AutoConfig`` left to decide asked "Do you wish to run the
    custom code? [y/N]" on the terminal of an InternVL2.5 (remote-code) checkpoint, before
    our refusal pointing at the '-hf' checkpoints could appear."""
    try:
        data, _ = transformers.PretrainedConfig.get_config_dict(model)
    except (OSError, ValueError) as exc:
        raise refuse_model(model, exc) from None
    model_type = str(data.get("model_type") or "")
    if model_type in REMOTE_CODE_TYPES:
        raise UserError(f"--model {model}: {REMOTE_CODE_TYPES[model_type]}")
    try:
        config = transformers.AutoConfig.from_pretrained(model, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        raise refuse_model(model, exc) from None
    model_type = getattr(config, "model_type", model_type)
    return model_type, family_of(model_type)
