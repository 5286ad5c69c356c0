"""``open_local``: the local backend ``splice run --backend`` names, imported only when asked
for (so ``--backend transformers`` never needs vLLM, and the runner never needs torch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import splice_dataset as schema
from splice_eval.data_source import check_reachable
from splice_eval.run.local import options
from splice_eval.run.local.backend import LocalModel


def open_local(args: Any) -> LocalModel:
    """Load ``args.model`` with the backend ``args.backend`` names (``splice run`` has
    checked it is reachable before reading the build: `check_model_reachable`)."""
    check_model_reachable(args.model)
    if args.backend == options.VLLM:
        from splice_eval.run.local.vllm_backend import open_vllm

        return open_vllm(args)
    from splice_eval.run.local.transformers_backend import open_transformers

    return open_transformers(args)


def check_model_reachable(model: str) -> None:
    """A Hub model id neither cached nor reachable: one line at once, before torch is
    imported, not the Hub client's retries (ten lines over 46 s) inside ``from_pretrained``."""
    if Path(model).expanduser().is_dir() or not schema.is_hub_id(model):
        return  # a local checkpoint, or a name the backend itself refuses
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(model, "config.json"), str):
        return  # cached: from_pretrained reads it without asking the Hub
    check_reachable(model, "--model", "model", "a local checkpoint folder")
