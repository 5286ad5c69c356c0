"""``splice run --backend transformers``: the model loaded with transformers' own classes
(``AutoModelForImageTextToText`` and ``AutoProcessor``) and asked row by row, or in
batches on a GPU, through its family's adapter (``adapters``).

Greedy decoding at ``--temperature 0`` (the default), ``--max-tokens`` new tokens, and the
checkpoint's own ``generation_config`` for the rest. An interrupt stops generation at the
next token (a stopping criterion watching the run's breaker).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from splice_build.errors import UserError, require
from splice_eval.run.chat import CallResult
from splice_eval.run.jobs import FramesRequest
from splice_eval.run.local import families
from splice_eval.run.local.adapters import Adapter, adapter_for
from splice_eval.run.local.backend import BatchCaller, LocalModel

EXTRA = "models"
GPU_BATCH = 8


def open_transformers(args: Any) -> LocalModel:
    torch = require("torch", EXTRA, "--backend transformers")
    transformers = require("transformers", EXTRA, "--backend transformers")
    device = resolve_device(torch, args.device)
    dtype = resolve_dtype(torch, args.dtype, device)
    model_type, family = families.checkpoint_family(transformers, args.model)
    print(
        f"splice run: loading {args.model} ({model_type}) on {device}",
        file=sys.stderr,
    )
    try:
        processor = transformers.AutoProcessor.from_pretrained(args.model)
        model = transformers.AutoModelForImageTextToText.from_pretrained(args.model, dtype=dtype)
    except (OSError, ValueError, KeyError) as exc:
        raise families.refuse_model(args.model, exc) from None
    model.to(device).eval()
    batch_size = args.batch_size or (GPU_BATCH if device.startswith("cuda") else 1)
    generation = {"max_new_tokens": args.max_tokens}
    if args.temperature > 0:
        generation.update(do_sample=True, temperature=args.temperature)
    else:
        generation.update(do_sample=False)
    runner = _Generator(torch, transformers, model, adapter_for(family, processor), generation)
    caller = BatchCaller(runner.run, batch_size)
    runner.breaker = caller.breaker
    metadata = {
        "backend": "transformers",
        "family": family.name,
        "model_type": model_type,
        "dtype": str(dtype).removeprefix("torch."),
        "transformers_version": transformers.__version__,
    }
    return LocalModel(family, caller, batch_size, device, metadata)


def resolve_device(torch: Any, device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {device}: torch sees no CUDA GPU on this machine")
    if device != "cpu" and not device.startswith("cuda"):
        raise UserError(f"--device {device}: expected auto, cpu, cuda or cuda:N")
    return device


def resolve_dtype(torch: Any, dtype: str, device: str) -> Any:
    if dtype == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    return getattr(torch, dtype)


class _Generator:
    """One batch of rows -> their answers, on the model's device."""

    def __init__(
        self, torch: Any, transformers: Any, model: Any, adapter: Adapter, generation: dict
    ) -> None:
        self.torch, self.model, self.adapter = torch, model, adapter
        self.generation = generation
        self.breaker: Any = None
        tokenizer = adapter.tokenizer
        self.pad_id = tokenizer.pad_token_id
        if self.pad_id is None:
            self.pad_id = tokenizer.eos_token_id
        stop = self

        class _StopOnInterrupt(transformers.StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                stopped = stop.breaker is not None and stop.breaker.stopped.is_set()
                return torch.full((input_ids.shape[0],), stopped, dtype=torch.bool)

        self.stopping = transformers.StoppingCriteriaList([_StopOnInterrupt()])

    def run(self, requests: Sequence[FramesRequest]) -> list[CallResult]:
        batch, sent = self.adapter.encode(requests)
        batch = batch.to(self.model.device, dtype=self.model.dtype)
        with self.torch.inference_mode():
            out = self.model.generate(
                **batch,
                **self.generation,
                pad_token_id=self.pad_id,
                stopping_criteria=self.stopping,
            )
        new = out[:, batch["input_ids"].shape[1] :]
        texts = self.adapter.tokenizer.batch_decode(new, skip_special_tokens=True)
        results = []
        for i, text in enumerate(texts):
            completion = int((new[i] != self.pad_id).sum())
            usage = {"prompt_tokens": sent[i].prompt_tokens, "completion_tokens": completion}
            results.append(CallResult(text, usage, 1, sent=sent[i].as_dict()))
        return results
