"""A board on disk: the folder layout, its files written whole (``splice_build.atomic``),
the lock that serializes changes, and entry folders whose paths never leave the board.

    <board>/board.yaml            the build ranked and the metric version (BoardConfig)
    <board>/videos.json           the build's videos: ids, clip counts, domains, tasks
    <board>/index.json            every entry's summary and the ranks (derived; rebuilt
                                  from the score.json files when missing or out of date)
    <board>/audit.jsonl           one line per entry removed or replaced (what went, when)
    <board>/entries/<slug>/       one submission (or reference row):
        predictions.<ext>.gz      the prediction file as submitted, compressed
        meta.yaml                 provenance as submitted (refused unless known keys)
        score.json                written by the scorer only, never taken from a submission

A change (init, add, rescore) holds ``.board.lock`` (a blocking ``flock``: a second add
waits for the first), builds its new entry folder in a hidden staging folder beside
``entries/`` and moves it in only once everything is scored and the new index written,
so a failed change leaves the board as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from splice_build.atomic import atomic_path
from splice_build.errors import UserError, read_text
from splice_eval.leaderboard.records import BoardConfig

BOARD_FILE = "board.yaml"
VIDEOS_FILE = "videos.json"
INDEX_FILE = "index.json"
ENTRIES = "entries"
LOCK_FILE = ".board.lock"
SCORE_FILE = "score.json"
META_FILE = "meta.yaml"
PREDICTIONS_STEM = "predictions"
DEFAULT_BOARD = "./splice-board"
AUDIT_FILE = "audit.jsonl"
BOARD_YAML_MAX = 64 * 1024  # bytes of board.yaml read
YAML_DEPTH_MAX = 8  # nesting of a board.yaml or meta.yaml (a mapping of scalars, one deeper)
RESAMPLES_MAX = 20_000  # board.yaml's resamples: resamples x videos float32 counts in memory
SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")


def slug_of(name: str) -> str:
    """A folder name for an entry: lower-case letters, digits, ``.``, ``_``, ``-`` only,
    so no submitted name can name a path outside ``entries/``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")[:80]
    return slug or "entry"


def entry_dir(board: Path, slug: str) -> Path:
    """An entry's folder, confined to ``entries/`` (a slug is checked, never trusted)."""
    if not SLUG.fullmatch(slug) or slug in (".", ".."):
        raise UserError(f"{board}: entry folder name {slug!r} is not allowed")
    return board / ENTRIES / slug


def entry_slugs(board: Path) -> list[str]:
    """The entry folders on the board, sorted (hidden staging folders never)."""
    base = board / ENTRIES
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and SLUG.fullmatch(p.name))


def read_config(board: Path) -> BoardConfig:
    """``board.yaml``: refused naming the file when missing or not a board's, and naming the
    key whose value is not of its type or range."""
    path = board / BOARD_FILE
    if not path.is_file():
        raise UserError(
            f"{board}: no {BOARD_FILE} (not a board; make one with `splice leaderboard init "
            f"--board {board} --data BUILD`)"
        )
    loaded = read_yaml(path, "board file", BOARD_YAML_MAX)
    if not isinstance(loaded, dict):
        raise UserError(f"{path}: not a mapping")
    known = set(BoardConfig.__dataclass_fields__)
    unknown = sorted(set(map(str, loaded)) - known)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r}")
    for key in ("build_id", "data", "metric_version"):
        if key not in loaded:
            raise UserError(f"{path}: {key} is missing")
    for key, value in loaded.items():
        problem = _config_problem(key, value)
        if problem:
            raise UserError(f"{path}: {key}: {problem}, got {value!r:.60}")
    return BoardConfig(**loaded)


def _config_problem(key: str, value: object) -> str:
    """What is wrong with one board.yaml value ("" when nothing)."""
    from splice_eval.leaderboard.statistics import MIN_RESAMPLES

    if key in ("build_id", "data", "metric_version", "created", "source_title"):
        return "" if isinstance(value, str) and len(value) <= 500 else "must be text"
    if key == "stand_in":
        return "" if isinstance(value, bool) else "must be true or false"
    bounds = {
        "videos": (0, 10**7),
        "seed": (0, 2**32 - 1),
        "resamples": (MIN_RESAMPLES, RESAMPLES_MAX),
    }
    low, high = bounds[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"must be a whole number from {low} to {high}"
    return ""


def read_yaml(path: Path, what: str, limit: int) -> object:
    """A user's (or a board's) YAML file, bounded in size (``read_limited``) and in nesting
    (``YAML_DEPTH_MAX``, counted on the parser's events before anything is built: building
    recurses, so a 10 kB file of lists nested 5,000 deep would end in a RecursionError)."""
    import yaml

    text = read_limited(path, what, limit)
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > YAML_DEPTH_MAX:
                    raise UserError(
                        f"{what} {path}: nested more than {YAML_DEPTH_MAX} levels deep "
                        f"(line {event.start_mark.line + 1})"
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise UserError(f"{what} {path}: nested too deep") from None


def read_limited(path: Path, what: str, limit: int) -> str:
    """A user's (or a board's) text file, refused naming it past ``limit`` bytes: the size
    is checked before anything is read, so a huge file costs nothing."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # read_text names what is wrong
    if size > limit:
        raise UserError(f"{what} {path}: {size} bytes, more than the {limit} allowed")
    return read_text(path, what)


def write_config(board: Path, config: BoardConfig) -> None:
    import yaml

    write_text(board / BOARD_FILE, yaml.safe_dump(asdict(config), sort_keys=False))


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def read_json(path: Path) -> Any:
    """A board's own JSON file; a recursion bomb reads as a ValueError, as any bad JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ValueError(f"{path.name}: nested too deep") from None


def append_audit(board: Path, record: dict[str, Any]) -> None:
    """One line of ``audit.jsonl``: an entry removed or replaced, never rewritten."""
    with (board / AUDIT_FILE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")


@contextlib.contextmanager
def board_lock(board: Path) -> Iterator[None]:
    """The board's change lock: a blocking exclusive ``flock``, so two adds at once run
    one after the other (the second scores against the board the first left)."""
    board.mkdir(parents=True, exist_ok=True)
    fd = os.open(board / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def staging(board: Path) -> Iterator[Path]:
    """A hidden folder beside ``entries/`` to build new entry folders in; removed when the
    block ends (what was moved out of it by `commit_entry` stays)."""
    (board / ENTRIES).mkdir(parents=True, exist_ok=True)
    path = board / ENTRIES / f".staging-{os.getpid()}-{secrets.token_hex(4)}"
    path.mkdir()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


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


def videos_of_build(data: Path, build_id: str) -> BoardVideos:
    """The build's answers as the board keeps them (``videos.json``), read once at init by
    ``splice score``'s own reader: adding and re-scoring then need only the board."""
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


def write_videos(board: Path, videos: BoardVideos) -> None:
    write_json(board / VIDEOS_FILE, videos.as_dict())


def read_videos(board: Path) -> BoardVideos:
    path = board / VIDEOS_FILE
    try:
        data = read_json(path)
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
