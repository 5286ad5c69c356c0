"""The options of ``splice run`` that choose where the model runs, and their checks:
``--backend openai`` (the default: an OpenAI-compatible ``--endpoint``), ``transformers``
(the model loaded in this process) or ``vllm`` (vLLM's offline engine, in this process).
Torch-free: the runner imports this module whatever the backend."""

from __future__ import annotations

import argparse
from typing import Any

from splice_build.cli import int_at_least
from splice_build.errors import UserError

OPENAI = "openai"
TRANSFORMERS = "transformers"
VLLM = "vllm"
BACKENDS = (OPENAI, TRANSFORMERS, VLLM)
LOCAL_BACKENDS = (TRANSFORMERS, VLLM)
DEVICES_HELP = "auto (a GPU when torch sees one, else the CPU), cpu, cuda or cuda:N"
DTYPES = ("auto", "float32", "bfloat16", "float16")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=OPENAI,
        help="where the model runs: openai (an OpenAI-compatible --endpoint; default), "
        "transformers (loaded here from --model, a local folder or Hub id; needs torch and "
        "transformers) or vllm (vLLM's offline engine here; needs vllm)",
    )
    parser.add_argument(
        "--device",
        default="auto",
        help=f"--backend transformers: where the model runs: {DEVICES_HELP} (default auto)",
    )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="auto",
        help="--backend transformers/vllm: weights' dtype; auto is bfloat16 on a GPU, "
        "float32 on the CPU (default auto)",
    )
    parser.add_argument(
        "--batch-size",
        type=int_at_least(1),
        default=None,
        help="--backend transformers/vllm: rows generated together (default 8 on a GPU, "
        "1 on the CPU)",
    )


def check(args: Any) -> None:
    """Options that belong to another backend are refused, each in one line."""
    if args.backend == OPENAI:
        if not args.endpoint:
            raise UserError("--endpoint is required with --backend openai (the default)")
        for name, value, default in (
            ("--device", args.device, "auto"),
            ("--dtype", args.dtype, "auto"),
            ("--batch-size", args.batch_size, None),
        ):
            if value != default:
                raise UserError(f"{name} applies to --backend transformers or vllm")
        return
    if args.endpoint:
        raise UserError(
            f"--endpoint is for --backend openai; --backend {args.backend} runs --model here"
        )
    if args.clips_as is not None:
        raise UserError(
            f"--as is for --backend openai; --backend {args.backend} sends each clip the way "
            "its model family takes clips (see `splice run --help`)"
        )
    if args.backend == VLLM and args.device != "auto":
        raise UserError("--device applies to --backend transformers (vLLM picks its GPUs)")
