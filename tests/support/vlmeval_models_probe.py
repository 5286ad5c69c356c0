"""Run ``splice vlmeval`` in VLMEvalKit's venv with its REAL model classes on tiny local
checkpoints (tests/splice_eval/toolkits/test_vlmeval_models.py).

Used as ``<.venv-models>/bin/python tests/support/vlmeval_models_probe.py CHECKPOINTS_JSON
[splice vlmeval options...]``: each ``{"name": [class, checkpoint folder, {kwargs}]}`` of
the JSON becomes a VLMEvalKit model name, made exactly as VLMEvalKit's own
``vlmeval/config.py`` makes its names (``partial(vlm.<class>, model_path=...)``). What the
model receives is recorded by tests/support/lmms_record/sitecustomize.py (on PYTHONPATH, with
``SPLICE_RECORD_GENERATE``) at ``generate``, the model's real input.

VLMEvalKit's local classes are written for a CUDA GPU: ``Qwen2VLChat`` asserts
``nvidia-smi`` reports memory and asks for flash-attention 2, and every class moves its model
and inputs to ``'cuda'`` by name. This machine has no GPU, so ``on_the_cpu`` changes exactly
that and nothing else: a GPU memory figure, ``sdpa`` attention, and ``'cuda'`` read as
``'cpu'`` by ``.to``. No message, prompt, template or processor call is touched.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any


def _cpu(value: Any) -> Any:
    """``'cuda'`` (or ``cuda:N``, or such a torch.device) as ``'cpu'``; anything else as is."""
    import torch

    text = str(value) if isinstance(value, str | torch.device) else ""
    return "cpu" if text.startswith("cuda") else value


def on_the_cpu() -> None:
    """Let VLMEvalKit's GPU-only classes load and run on the CPU (see the module's text)."""
    import torch
    import transformers
    from vlmeval.vlm.qwen2_vl import model as qwen2_vl_model

    def moved(original):
        def to(self, *args, **kwargs):
            args = tuple(_cpu(a) for a in args)
            if "device" in kwargs:
                kwargs["device"] = _cpu(kwargs["device"])
            return original(self, *args, **kwargs)

        return to

    for cls in (torch.Tensor, torch.nn.Module, transformers.BatchFeature):
        cls.to = moved(cls.to)
    transformers.BatchEncoding.to = moved(transformers.BatchEncoding.to)
    qwen2_vl_model.get_gpu_memory = lambda: [24 * 1024]  # MiB "free on GPU 0"
    load = transformers.PreTrainedModel.from_pretrained.__func__

    def from_pretrained(cls, *args, **kwargs):
        if kwargs.get("attn_implementation") == "flash_attention_2":
            kwargs["attn_implementation"] = "sdpa"
        return load(cls, *args, **kwargs)

    transformers.PreTrainedModel.from_pretrained = classmethod(from_pretrained)


def register(checkpoints: dict[str, list]) -> None:
    """Each name as VLMEvalKit's config.py defines its own: the class with the checkpoint."""
    from vlmeval import vlm
    from vlmeval.config import supported_VLM

    for name, (cls, path, kwargs) in checkpoints.items():
        supported_VLM[name] = partial(getattr(vlm, cls), model_path=path, **kwargs)


if __name__ == "__main__":
    from splice_build.cli import main

    on_the_cpu()
    register(json.loads(sys.argv[1]))
    sys.exit(main(["vlmeval", *sys.argv[2:]]))
