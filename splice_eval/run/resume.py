"""The prediction file of a ``splice run``, written as answers arrive and resumed later.

Long runs get killed. Each answer is appended as one whole line per write, after a
metadata line saying how the answers are produced, so a kill loses only the requests in
flight and leaves at most one partial last line. A run started again on the same file
drops that line, skips rows already answered (rows that ended in an error are asked again)
and refuses to mix in answers produced with other settings, another model or config.
The format itself is ``splice_eval.predictions``'.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_eval.predictions import (
    Prediction,
    iter_predictions,
    metadata_conflict,
    read_metadata,
)

log = logging.getLogger("splice.run")


def load_previous(
    path: Path, config: str, model: str, metadata: dict[str, Any] | None = None
) -> dict[str, Prediction]:
    """The last line per video already in ``path`` (answers and errors alike).

    A run killed mid-write can leave a partial last line: it is cut off (with a warning)
    so that the rest of the file stays usable. A file made with other settings (its
    metadata line), without a metadata line, or holding another model's or config's lines
    belongs to another run: refuse rather than mix two runs' answers.
    """
    if not path.exists():
        return {}
    drop_partial_last_line(path)
    previous: dict[str, Prediction] = {}
    for pred in iter_predictions(path):
        if pred.config != config or pred.model != model:
            raise UserError(
                f"{path}: holds predictions for model {pred.model!r}, config {pred.config!r} "
                f"(video {pred.video_id}); this run is model {model!r}, config {config!r}. "
                "Use another --out file."
            )
        previous[pred.video_id] = pred
    if metadata is not None and (previous or path.stat().st_size):
        found = read_metadata(path)
        if found is None:
            raise UserError(
                f"{path}: has no metadata line saying how its answers were produced (an "
                "older splice run or another tool made it); use another --out file"
            )
        _check_build(path, found.get("build_id"), metadata.get("build_id"))
        conflict = metadata_conflict(found, metadata)
        if conflict is not None:
            raise UserError(
                f"{path}: was made with other settings: {conflict}. Resuming would mix "
                "answers of two settings in one file; use another --out file"
            )
    return previous


def _check_build(path: Path, made_on: str | None, asked: str | None) -> None:
    """A file's answers belong to the build they were asked on (``build_id``, the card's
    identity): resuming it on another build would mix two builds' answers, or count as
    answered rows whose clips and labels are no longer the ones asked."""
    if made_on == asked:
        return
    was = f"build {made_on[:16]}" if made_on else "a build whose identity it does not record"
    now = f"build {asked[:16]}" if asked else "a build whose card records no identity"
    raise UserError(
        f"{path}: its answers were made on {was}, but --data is {now}. Resuming would "
        "mix two builds' answers (rows already in it would be skipped, not asked again); "
        "use another --out file"
    )


def is_answered(pred: Prediction) -> bool:
    """A row counts as done once the model answered (even unparseably); errors are retried."""
    return not pred.extra.get("error")


def drop_partial_last_line(path: Path) -> None:
    """Cut a partial last line (a write a kill interrupted) so the rest of the file reads."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    log.warning("%s: dropping a partial last line left by an interrupted run", path)
    with path.open("r+b") as fh:
        fh.truncate(keep)


def append_line(fh: Any, text: str) -> None:
    """Append one line with as few write() calls as the OS allows (one, for a regular
    file), so a kill leaves whole lines and at most one partial last line."""
    data = memoryview((text + "\n").encode("utf-8"))
    while data:
        data = data[fh.write(data) :]
