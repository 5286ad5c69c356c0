"""``open_local``: the local backend ``splice run --backend`` names, imported only when asked
for (so ``--backend transformers`` never needs vLLM, and the runner never needs torch)."""

from __future__ import annotations

from typing import Any

from splice_eval.run.local import options
from splice_eval.run.local.backend import LocalModel


def open_local(args: Any) -> LocalModel:
    """Load ``args.model`` with the backend ``args.backend`` names."""
    if args.backend == options.VLLM:
        from splice_eval.run.local.vllm_backend import open_vllm

        return open_vllm(args)
    from splice_eval.run.local.transformers_backend import open_transformers

    return open_transformers(args)
