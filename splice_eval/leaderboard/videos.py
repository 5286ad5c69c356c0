"""The board's copy of its build's answers (``videos.json``): video ids, answer orders,
clip counts, domains and tasks, read once from the build at ``init`` by ``splice score``'s
own reader (``score.read_answers``). Adding and re-scoring then need only the board, so a
board on another machine (or the Hub) is re-scored without the build's clips.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from splice_build.errors import UserError
from splice_eval.leaderboard import store


@dataclass(frozen=True)
class BoardVideos:
    build_id: str
    ids: tuple[str, ...]  # sorted, as the scorer orders references
    orders: tuple[tuple[int, ...], ...]
    num_clips: tuple[int, ...]
    domains: tuple[str, ...]
    tasks: tuple[str, ...]

    @property
    def references(self) -> dict[str, list[int]]:
        return {v: list(o) for v, o in zip(self.ids, self.orders, strict=True)}

    def clip_counts(self) -> np.ndarray:
        return np.asarray(self.num_clips, dtype=np.float32)

    def as_dict(self) -> dict:
        return {
            "build_id": self.build_id,
            "ids": list(self.ids),
            "orders": [list(o) for o in self.orders],
            "num_clips": list(self.num_clips),
            "domains": list(self.domains),
            "tasks": list(self.tasks),
        }


def from_build(data: Path, build_id: str) -> BoardVideos:
    from splice_eval.scoring.score import read_answers

    answers = read_answers(data)
    ids = tuple(answers.references)
    return BoardVideos(
        build_id,
        ids,
        tuple(tuple(answers.references[v]) for v in ids),
        tuple(int(n) for n in answers.columns["num_clips"]),
        tuple(map(str, answers.columns["domain"])),
        tuple(map(str, answers.columns["task"])),
    )


def write(board: Path, videos: BoardVideos) -> None:
    store.write_json(board / store.VIDEOS_FILE, videos.as_dict())


def read(board: Path) -> BoardVideos:
    path = board / store.VIDEOS_FILE
    try:
        data = store.read_json(path)
        return BoardVideos(
            str(data["build_id"]),
            tuple(data["ids"]),
            tuple(tuple(o) for o in data["orders"]),
            tuple(data["num_clips"]),
            tuple(data["domains"]),
            tuple(data["tasks"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: the board's videos cannot be read ({exc})") from None
