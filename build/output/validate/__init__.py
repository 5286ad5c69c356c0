"""``splice validate DIR`` (stage 8): reopen a built folder and check everything a user relies on.

Checks, each reported as a ``Problem`` naming the file, row, video and column:

- Layout: one folder per config (``splice_dataset.shard_dir``), shards named
  ``{split}-{i:05d}-of-{n:05d}.parquet`` with no gap, no leftover temporary shard; each
  shard's columns are exactly its config's (the Hub's viewer casts every column of a file
  to the config's features), and its ``huggingface`` schema metadata restores exactly
  ``splice_dataset.features``.
- Rows: ``num_clips`` within 2..7 and equal to the lengths of clips, captions, clip
  durations and every ``answer`` list; ``answer.order`` a permutation of 1..n that agrees
  with ``answer.segments`` (the label of the earliest segment comes first); segments
  non-empty and non-overlapping; ``duration`` the sum of ``clip_durations``.
- Clips: every clip is an mp4 that decodes with PyAV (every frame; ``quick`` decodes none), H.264,
  yuv420p, even size, at least ``MIN_SIDE`` px on its short side and ``MIN_FPS`` frames per
  second; its duration matches its segment and its ``clip_durations`` entry to a frame (see
  ``TOLERANCE``).
- Order leaks outside ``answer``: clip file names other than ``clip_file_name(video_id,
  label)``; clips whose timestamps do not start at 0 (they would carry source times); mp4
  metadata beyond the muxer's own keys (``creation_time``, comments, titles... could carry
  source times or positions); ``video`` and ``text`` rows that disagree with the
  ``video_text`` shards (the one config holding every column, checked in full); and a
  build where every video's labels are in chronological order (no shuffle). Captions and
  clip durations are aligned with the labels, so they are not leaks by themselves.
- Questions: each question config's rows (``text_pairwise``, ``text_choice``) are exactly,
  in order, the questions ``splice_dataset.question_rows`` derives from the ``text`` rows
  with the default seed (``questions``).
- Card: README.md parses (``huggingface_hub.DatasetCard``), names every config with
  its columns and data files, and its ``num_examples``, ``num_bytes`` and Table 1 agree
  with the shards.
- Bytes: every Parquet page's CRC is verified (the writer stores them), and the sha256 of
  the shards is recomputed and compared with the one the card recorded, so a flipped byte
  anywhere in a shard fails validation (and ``publish``), even one inside a clip that
  would still decode.

Duration tolerance: the clips are checked by ``splice_build.stages.clipcheck``, the rule the
cutter's workers apply before committing a cut: a clip lasts its segment within
``tolerance_frames`` (default 1) frame durations of its own rate, plus 0.1 ms for the
rounding of times, except that a segment ending within the build's coverage tolerance
(``splice_build.tolerance`` on the card) of the video's last end may lack that part: the
source may end there, and the clip then ends with its last frame.

Clips a build's (or an import's) workers already decoded and checked are proven by digest
instead, in the build's own final validation (``verified``: see ``clips`` and
docs/DESIGN.md); a standalone ``splice validate`` decodes every clip, on as many workers
as it is given.

The checks live in modules named for their part: ``layout`` (shard names, schemas, the
shards' row groups as parts), ``parts`` (one part read and its rows checked, in whatever
process an executor chooses: the parallel work), ``rows`` (answers and row invariants),
``clips`` (each clip against ``clipcheck`` or an import's manifest), ``full_config`` (the
full config's rows, checked in full), ``projections`` (the other configs' rows against
them), ``questions`` (the question configs' rows against the questions ``question_rows``
regenerates from the ``text`` rows), ``card_checks`` (the card, its Table 1 and the shards'
sha256) and ``folder`` (the whole folder, in that order); the command line, ``splice
validate``, is ``splice_build.running.validation``, beside the executors it runs the parts
on.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Resolved on first use: a validation worker imports ``validate.parts`` (and what it
# needs), and must not load the driver's side (``datasets``, the card) by importing
# this package.
_EXPORTS = {
    "ClipProbe": "splice_build.stages.clipcheck",
    "probe_clip": "splice_build.stages.clipcheck",
    "Problem": "splice_build.output.validate.problems",
    "ValidationReport": "splice_build.output.validate.problems",
    "validate": "splice_build.output.validate.folder",
    "validate_report": "splice_build.output.validate.folder",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
