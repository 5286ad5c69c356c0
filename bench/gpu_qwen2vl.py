"""The real Qwen2-VL-7B-Instruct on N videos of a build, through ``splice run --backend
transformers`` with the paper's settings (1 fps, 448 px on the long side): prints the
accuracy (binary, Hamming, the paper's metrics) and seconds per video. Run it on any
machine with a CUDA GPU and the weights at hand (the Hub cache, or ``--model FOLDER``):

    .venv-models/bin/python bench/gpu_qwen2vl.py --data splice-data/ -n 50

On a machine without a GPU it says so in one line and exits 0 (so ``make bench`` passes
there): a 7B model on a CPU is not a check anyone waits for.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODEL = "Qwen/Qwen2-VL-7B-Instruct"


def gpu() -> str | None:
    """The GPU's name, or None (no torch, or torch sees no CUDA device)."""
    try:
        import torch
    except ModuleNotFoundError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO / "splice-data"), help="a SPLICE build")
    parser.add_argument("-n", type=int, default=20, help="videos to ask (default 20)")
    parser.add_argument("--model", default=MODEL, help=f"Hub id or folder (default {MODEL})")
    parser.add_argument("--config", default="video", help="video, video_text or text")
    parser.add_argument("--batch-size", default="4", help="rows per generate call")
    args = parser.parse_args()
    name = gpu()
    if name is None:
        print("gpu_qwen2vl: no CUDA GPU here (torch missing or sees none); nothing to check.")
        return 0
    from splice_build.cli import main as splice

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "qwen2vl.jsonl"
        argv = ["run", "--backend", "transformers", "--model", args.model]
        argv += ["--config", args.config, "--data", args.data, "--limit", str(args.n)]
        argv += ["--batch-size", args.batch_size, "--out", str(out)]
        start = time.perf_counter()
        code = splice(argv)
        seconds = time.perf_counter() - start  # model loading included
        if code != 0:
            print(f"gpu_qwen2vl: splice run exited {code}")
            return code
        scores = json.loads(out.with_name("qwen2vl.scores.json").read_text())["scores"]
        rows = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    sent = [r.get("sent", {}) for r in rows]
    tokens = sum(s.get("prompt_tokens", 0) for s in sent) / max(1, len(sent))
    print(
        f"gpu_qwen2vl on {name}: {len(rows)} videos ({args.config}), "
        f"binary accuracy {scores['binary_accuracy']:.3f}, Hamming "
        f"{scores['hamming_accuracy']:.3f}, invalid {scores['invalid_rate']:.3f}, "
        f"{seconds / max(1, len(rows)):.2f} s per video (loading included), "
        f"{tokens:.0f} prompt tokens per video"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
