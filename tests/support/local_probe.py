"""What ``splice run --backend transformers`` hands a checkpoint's processor, read back from
the processor's own output: run in ``.venv-models`` as
``python tests/support/local_probe.py BUILD CONFIG LIMIT CHECKPOINT...``, it builds the run's
requests for the first LIMIT rows exactly as the runner does (``jobs.iter_jobs`` with the family's
default ``--frames``), encodes each through the family's adapter, and prints one JSON line
per row: the prompt as the model's input ids decode (runs of the media token collapsed to
``<token>*N``), the adapter's ``Sent`` record, the clip headings and the video id.
"""

from __future__ import annotations

import json
import re
import sys

import transformers

from splice_eval.run.jobs import RunSettings, iter_jobs, load_rows
from splice_eval.run.local.adapters import adapter_for
from splice_eval.run.local.families import family_of
from splice_eval.run.runner import parse_frames


def main(checkpoint: str, build: str, config: str, limit: int) -> None:
    model_type = transformers.AutoConfig.from_pretrained(checkpoint).model_type
    family = family_of(model_type)
    adapter = adapter_for(family, transformers.AutoProcessor.from_pretrained(checkpoint))
    settings = RunSettings(config=config, clips_as="frames", frames=parse_frames(family.frames))
    media = adapter.tokenizer.convert_ids_to_tokens(adapter.media_token_id())
    for job in iter_jobs(load_rows(build, config), settings, {}):
        if limit == 0:
            break
        limit -= 1
        request = job.build_messages()
        batch, sent = adapter.encode([request])
        text = adapter.tokenizer.decode(batch["input_ids"][0], skip_special_tokens=False)
        text = re.sub(
            f"(?:{re.escape(media)})+", lambda m: f"{media}*{len(m.group()) // len(media)}", text
        )
        print(
            json.dumps(
                {
                    "video_id": job.video_id,
                    "family": family.name,
                    "text": text,
                    "media": media,
                    "headings": [c.heading for c in request.prompt.clips],
                    "sent": sent[0].as_dict(),
                    "input_tokens": int(batch["input_ids"].shape[1]),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    for path in sys.argv[4:]:  # one process for every checkpoint: torch is imported once
        main(path, sys.argv[1], sys.argv[2], int(sys.argv[3]))
