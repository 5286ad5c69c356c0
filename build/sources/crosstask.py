"""The ``crosstask`` adapter: CrossTask's release folder (``crosstask_release/``).

Read: ``tasks_primary.txt`` (task cards: id, name, wikiHow URL, number of steps, the
comma-separated steps in their written order, then a blank line), every
``annotations/<task id>_<YouTube id>.csv`` (``<step number>,<start s>,<end s>`` per line,
the step number 1-based into the task card) and ``videos.csv`` (``<task id>,<YouTube
id>,<URL>``, optional: a video it does not list gets its ``watch?v=`` URL).

Rules of this source (the shared ones are `rules`'):

- primary tasks only: an annotation file of a task not in ``tasks_primary.txt`` (a related
  task: they have none in the release) is skipped, ``not-primary-task``;
- the YouTube id is the file name after the FIRST underscore (ids may start with ``_`` or
  ``-``: ``113766__uAZw6L_R5g.csv`` is task 113766, video ``_uAZw6L_R5g``);
- captions are the task card's step texts; ``answer.step_ids`` holds the card's 1-based
  step number; ``domain`` is ``CrossTask`` (it has no domains);
- CrossTask states no video durations: a time past 10 hours is taken for another unit.

A damaged file is refused whole: a task card whose step count disagrees with its steps, an
annotation line with fewer than three fields (truncated), a step number not on its task's
card, a time that is not seconds.
"""

from __future__ import annotations

import re
from pathlib import Path

from splice_build.errors import UserError, decode_text, read_bytes, read_text
from splice_build.records import Skip
from splice_build.sources import rules
from splice_build.sources.base import (
    IngestResult,
    RawStep,
    RawVideo,
    SourceCard,
    SourceOptions,
    check_units,
    damaged,
    files_sha256,
    seconds,
)

SOURCE = SourceCard(
    name="crosstask",
    title="CrossTask",
    adapter_version=1,
    license="bsd-3-clause",
    license_note=(
        "BSD 3-Clause (the CrossTask repository's LICENSE; no separate licence of the "
        "annotation zip was found); the videos are YouTube's, under their uploaders' terms"
    ),
    citation=(
        "Zhukov et al., Cross-task weakly supervised learning from instructional videos, CVPR 2019"
    ),
    videos="CrossTask's YouTube videos (or the authors' missing-videos archive)",
    default_domain="CrossTask",
)
TASKS = "tasks_primary.txt"
ANNOTATIONS = "annotations"
VIDEOS = "videos.csv"
_FIELDS = ("step", "start", "end")
_FILE = re.compile(r"^(\d+)_(.+)\.csv$")


def looks_like(path: Path) -> str | None:
    if path.is_dir() and (path / TASKS).is_file() and (path / ANNOTATIONS).is_dir():
        return f"a CrossTask release folder ({TASKS}, {ANNOTATIONS}/, {VIDEOS})"
    return None


def read_tasks(path: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Task id -> (name, steps in the card's order)."""
    lines = read_text(path, "CrossTask task file").splitlines()
    tasks: dict[str, tuple[str, tuple[str, ...]]] = {}
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        card = lines[i : i + 5]
        where = f"task card at line {i + 1}"
        if len(card) < 5:
            raise damaged(
                path, where, "steps", "the card ends early (5 lines expected; truncated?)"
            )
        task_id, name, _url, count, steps_text = (c.strip() for c in card)
        if not task_id.isdigit():
            raise damaged(path, where, "task id", f"{task_id!r} is not a number")
        if not count.isdigit():
            raise damaged(path, where, "number of steps", f"{count!r} is not a number")
        steps = tuple(s.strip() for s in steps_text.split(","))
        if len(steps) != int(count) or not all(steps):
            raise damaged(
                path, where, "steps",
                f"{len(steps)} steps listed, the card says {count} (truncated?)",
            )  # fmt: skip
        tasks[task_id] = (name, steps)
        i += 5
    if not tasks:
        raise UserError(f"{path}: no task card; not CrossTask's {TASKS}")
    return tasks


def read_urls(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    urls = {}
    for n, line in enumerate(read_text(path, "CrossTask videos.csv").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(",")
        if len(parts) < 3:
            raise damaged(path, f"line {n}", "url", "missing (task,video,url expected; truncated?)")
        urls[parts[1]] = parts[2]
    return urls


def read_video(
    path: Path, name: str, steps: tuple[str, ...], vid: str, url: str, data: bytes
) -> RawVideo:
    """One annotation file (``data``: its bytes) as its video's steps."""
    entry = f"{ANNOTATIONS}/{path.name}"
    raw = []
    text = decode_text(data, path, "CrossTask annotation")
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{entry} line {n}"
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3 or not all(cells[:3]):
            field = _FIELDS[next(i for i in range(3) if i >= len(cells) or not cells[i])]
            raise damaged(path, where, field, "missing (step,start,end expected; truncated?)")
        if not cells[0].isdigit() or not 1 <= int(cells[0]) <= len(steps):
            what = f"{cells[0]!r} is not a step of task {name!r} (1..{len(steps)})"
            raise damaged(path, where, "step", what)
        start = seconds(cells[1], path, where, "start")
        end = seconds(cells[2], path, where, "end")
        check_units(path, where, "end", end, None)
        if end <= start:
            raise damaged(path, where, "end", f"{end:g} is not after start {start:g}")
        number = int(cells[0])
        raw.append(RawStep(number, steps[number - 1], start, end))
    return RawVideo(vid, name, SOURCE.default_domain, None, url, tuple(raw), entry)


def load(path: Path, options: SourceOptions | None = None) -> IngestResult:
    tasks = read_tasks(path / TASKS)
    urls = read_urls(path / VIDEOS)
    files = sorted((path / ANNOTATIONS).glob("*.csv"), key=lambda f: f.name)  # names: cheap
    raws, skips = [], []
    data: dict[Path, bytes] = {}
    for file in files:
        found = _FILE.match(file.name)
        if not found:
            raise damaged(
                path / ANNOTATIONS, file.name, "file name", "not <task id>_<YouTube id>.csv"
            )
        task_id, vid = found[1], found[2]  # split on the FIRST underscore only
        if task_id not in tasks:
            skips.append(
                Skip(vid, rules.STAGE, f"not-primary-task: task {task_id} is not in {TASKS}")
            )
            continue
        name, steps = tasks[task_id]
        url = urls.get(vid, f"https://www.youtube.com/watch?v={vid}")
        data[file] = read_bytes(file, "CrossTask annotation")
        raws.append(read_video(file, name, steps, vid, url, data[file]))
    read = [path / TASKS, *files] + ([path / VIDEOS] if (path / VIDEOS).is_file() else [])
    return rules.ingested(path, files_sha256(read, data), raws, options, SOURCE, skips)


def written_orders(path: Path) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Task name -> its card's steps in their written order (``splice baseline
    written-order``), from the release folder's ``tasks_primary.txt``."""
    return {name: (steps,) for name, steps in read_tasks(Path(path) / TASKS).values()}


__all__ = ["SOURCE", "load", "looks_like", "read_tasks", "written_orders"]
