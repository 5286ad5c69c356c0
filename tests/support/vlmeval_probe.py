"""Run ``splice vlmeval`` in VLMEvalKit's venv, with test-only echo models registered.

Used by tests/splice_eval/toolkits/test_vlmeval.py as
``<.venv-models>/bin/python tests/support/vlmeval_probe.py ECHO_LOG [splice vlmeval
options...]``. The echo models need no weights: they write every message VLMEvalKit hands
them (one JSON line each, to ECHO_LOG) and answer with the clip labels in the order the
prompt showed them, so the scores are the metric's on known answers.
``splice-echo-clips`` takes clips as videos (VIDEO_LLM), ``splice-echo-frames`` as frames.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from functools import partial

from vlmeval.config import supported_VLM
from vlmeval.vlm.base import BaseModel

from splice_build.cli import main


class EchoModel(BaseModel):
    INTERLEAVE = True

    def __init__(self, log: str, video_llm: bool) -> None:
        super().__init__()
        self.log = log
        self.VIDEO_LLM = video_llm
        self.lock = threading.Lock()

    def generate_inner(self, message: list[dict], dataset: str | None = None) -> str:
        with self.lock, open(self.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"dataset": dataset, "message": message}) + "\n")
        text = "".join(m["value"] for m in message if m["type"] == "text")
        labels = list(dict.fromkeys(re.findall(r"^Video (\d+)", text, re.M)))
        return "<order>" + ", ".join(f"Video {k}" for k in labels) + "</order>"


if __name__ == "__main__":
    log, argv = sys.argv[1], sys.argv[2:]
    supported_VLM["splice-echo-clips"] = partial(EchoModel, log=log, video_llm=True)
    supported_VLM["splice-echo-frames"] = partial(EchoModel, log=log, video_llm=False)
    sys.exit(main(["vlmeval", *argv]))
