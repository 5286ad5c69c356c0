"""``splice run --backend vllm``: the same adapters, run by vLLM's offline engine.

The prompt text is the transformers adapter's (``Adapter.text``: the chat template around
the paper's prompt, each clip's placeholder after its heading), and the clips are the same
sampled frames, handed to vLLM as ``multi_modal_data`` (one video per clip, or one image
per frame for the image families). vLLM is not installed in any venv the tests build (it
needs a CUDA machine), so this path is written against vLLM's documented offline API and
untested here; without vLLM the run stops with one line saying so.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import splice_dataset as schema
from splice_build.errors import UserError, require
from splice_eval.run.chat import CallResult
from splice_eval.run.jobs import FramesRequest
from splice_eval.run.local import families
from splice_eval.run.local.adapters import Adapter, adapter_for, frame_rate
from splice_eval.run.local.backend import BatchCaller, LocalModel

GPU_BATCH = 8


def open_vllm(args: Any) -> LocalModel:
    try:
        import vllm
    except ModuleNotFoundError:
        raise UserError(
            "--backend vllm needs vllm, which is not installed in this Python (pip install "
            "vllm, on a Linux machine with a GPU); --backend transformers runs the same "
            "adapters without it"
        ) from None
    transformers = require("transformers", "models", "--backend vllm")
    model_type, family = families.checkpoint_family(transformers, args.model)
    try:
        processor = transformers.AutoProcessor.from_pretrained(args.model)
    except (OSError, ValueError) as exc:
        raise families.refuse_model(args.model, exc) from None
    adapter = adapter_for(family, processor)
    print(f"splice run: loading {args.model} in vLLM ({family.name})", file=sys.stderr)
    per_prompt = (
        {"video": schema.MAX_CLIPS} if family.clips_as == "video" else {"image": 16 * 7 * 8}
    )
    engine_args: dict[str, Any] = {"model": args.model, "limit_mm_per_prompt": per_prompt}
    if args.dtype != "auto":
        engine_args["dtype"] = args.dtype
    llm = vllm.LLM(**engine_args)
    sampling = vllm.SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature)
    batch_size = args.batch_size or GPU_BATCH
    caller = BatchCaller(lambda requests: _generate(llm, adapter, sampling, requests), batch_size)
    metadata = {"backend": "vllm", "family": family.name, "model_type": model_type}
    metadata["vllm_version"] = vllm.__version__
    return LocalModel(family, caller, batch_size, "vLLM", metadata)


def _generate(
    llm: Any, adapter: Adapter, sampling: Any, requests: Sequence[FramesRequest]
) -> list[CallResult]:
    inputs = [_vllm_input(adapter, r) for r in requests]
    outputs = llm.generate(inputs, sampling, use_tqdm=False)
    results = []
    for out in outputs:
        completion = out.outputs[0]
        usage = {
            "prompt_tokens": len(out.prompt_token_ids or ()),
            "completion_tokens": len(completion.token_ids),
        }
        results.append(CallResult(completion.text, usage, 1))
    return results


def _vllm_input(adapter: Adapter, request: FramesRequest) -> dict[str, Any]:
    text = adapter.text(request)
    clips = request.frames or ()
    if not clips:
        return {"prompt": text}
    if adapter.family.clips_as == "video":
        # (frames, metadata) pairs: vLLM's processors read the rate from the metadata
        videos = [
            (
                f.frames,
                {
                    "fps": frame_rate(f),
                    "total_num_frames": len(f.frames),
                    "frames_indices": list(range(len(f.frames))),
                    "do_sample_frames": False,
                },
            )
            for f in clips
        ]
        return {"prompt": text, "multi_modal_data": {"video": videos}}
    images = [image for f in clips for image in f.frames]
    return {"prompt": text, "multi_modal_data": {"image": images}}
