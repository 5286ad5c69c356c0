"""The one format for predictions, shared by baselines, the human protocol, the model
runner, ``splice score`` and ``splice report``.

A prediction file is JSON Lines, one object per (video, config)::

    {"video_id": "4MiubN1oQkg", "config": "video_text", "model": "random",
     "raw_output": "<order>Video 2, Video 1</order>", "order": [2, 1]}

``order`` is the parsed answer in the dataset's label space (``null`` when the raw output
could not be parsed: scored as an invalid prediction). Extra keys (``usage``, ``error``,
``annotator``...) are kept and ignored by scoring.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, read_text

REQUIRED = ("video_id", "config", "model", "raw_output", "order")


@dataclass(frozen=True)
class Prediction:
    video_id: str
    config: str
    model: str
    raw_output: str | None
    order: list[int] | None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        data = asdict(self)
        extra = data.pop("extra")
        return json.dumps({**data, **extra}, ensure_ascii=False)


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read a JSONL prediction file; a bad line raises naming the file and line number."""
    return list(iter_predictions(path))


def iter_predictions(path: str | Path) -> Iterator[Prediction]:
    path = Path(path)
    # split on "\n" only: raw_output may hold U+2028 and other line breaks of str.splitlines
    for lineno, line in enumerate(read_text(path, "prediction file").split("\n"), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise UserError(f"{path}:{lineno}: expected a JSON object")
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise UserError(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
        order = data["order"]
        if order is not None and not (
            isinstance(order, list)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in order)
        ):
            raise UserError(f"{path}:{lineno}: field 'order' must be a list of ints or null")
        yield Prediction(
            video_id=str(data["video_id"]),
            config=str(data["config"]),
            model=str(data["model"]),
            raw_output=data["raw_output"],
            order=order,
            extra={k: v for k, v in data.items() if k not in REQUIRED},
        )


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> Path:
    """Write predictions atomically (a partial file never replaces a good one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in predictions:
            fh.write(p.to_json() + "\n")
    tmp.replace(path)
    return path
