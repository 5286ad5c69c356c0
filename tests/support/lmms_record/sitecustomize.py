"""Loaded by Python at start-up in the lmms-eval subprocesses of
tests/splice_eval/toolkits/test_lmms_models.py (this folder is put first on their
PYTHONPATH): records what each real lmms-eval model class hands its model's ``generate``, the
processor's output as the model receives it.

With ``SPLICE_RECORD_GENERATE=<file>`` every ``generate`` call appends one JSON line: the
prompt's token ids decoded with the special tokens kept, the shape of every tensor argument,
the sha256 of every floating-point one (the pixels) and the values of the Qwen grids
(``*_grid_thw``) and Qwen2.5-VL's ``second_per_grid_ts`` (the seconds each temporal grid
step stands for: the time positions the model gets). With ``SPLICE_FORCE_ANSWER=<text>`` the
real ``generate`` still runs (every input goes through the model), then its new tokens are
replaced by ``<text>`` followed by the end-of-sequence token: a checkpoint forced to a fixed
answer, so a test knows what lmms-eval scored.
"""

from __future__ import annotations

import hashlib
import json
import os

RECORD = os.environ.get("SPLICE_RECORD_GENERATE")
FORCE = os.environ.get("SPLICE_FORCE_ANSWER")


def _digest(tensor) -> str:
    return hashlib.sha256(tensor.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()


def _values(value) -> list[float] | None:
    """A tensor or list argument as plain floats (None when the call had none)."""
    if value is None:
        return None
    return [float(x) for x in (value.tolist() if hasattr(value, "tolist") else value)]


def _install() -> None:
    import torch
    import transformers
    from transformers import AutoTokenizer

    original = transformers.GenerationMixin.generate
    tokenizers: dict[str, object] = {}

    def tokenizer_of(model):
        path = str(model.config._name_or_path)
        if path not in tokenizers:
            tokenizers[path] = AutoTokenizer.from_pretrained(path)
        return tokenizers[path]

    def generate(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        tokenizer = tokenizer_of(self)
        if RECORD and input_ids is not None:
            record = {
                "model_class": type(self).__name__,
                "prompt": tokenizer.decode(input_ids[0].tolist(), skip_special_tokens=False),
                "max_new_tokens": kwargs.get("max_new_tokens"),
                "shapes": {
                    k: list(v.shape) for k, v in kwargs.items() if isinstance(v, torch.Tensor)
                },
                # what the frames were, not only their size: sha256 of every tensor's bytes
                "digests": {
                    k: _digest(v)
                    for k, v in kwargs.items()
                    if isinstance(v, torch.Tensor) and v.is_floating_point()
                },
                "grids": {
                    k: v.tolist()
                    for k, v in kwargs.items()
                    if k.endswith("grid_thw") and isinstance(v, torch.Tensor)
                },
                "second_per_grid_ts": _values(kwargs.get("second_per_grid_ts")),
            }
            with open(RECORD, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        if FORCE and input_ids is not None:
            answer = tokenizer.encode(FORCE, add_special_tokens=False) + [tokenizer.eos_token_id]
            tail = torch.tensor([answer] * input_ids.shape[0], dtype=input_ids.dtype)
            head = out[:, : input_ids.shape[1]] if out.shape[1] >= input_ids.shape[1] else None
            # classes that return only the new tokens get only the new tokens
            out = (
                tail
                if head is None or not torch.equal(head, input_ids)
                else torch.cat([input_ids, tail.to(input_ids.device)], dim=1)
            )
        return out

    transformers.GenerationMixin.generate = generate


if RECORD or FORCE:
    _install()
