"""The WebDataset tar shards (``--format both``), checked as the Parquet shards are: each
tar read whole (one task per tar, on the executors like the parts), each sample rebuilt as
the full config's row (its JSON with the clips' members in place) and compared with that
row by its columns' digests; a tar cut short, a member replaced, an answer edited, a
sample missing, repeated or out of order, or a file in the folder that is no tar shard
is a problem naming the tar and the sample (its index in the tar and its video id)."""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from splice_build.output.validate.parts import PartResult, RowRecord, digest
from splice_build.output.validate.problems import Problem
from splice_dataset import CLIPS, FULL_CONFIG, VIDEO_ID, WEBDATASET_DIR, clip_file_name, columns

_TAR_NAME = re.compile(r"^(?P<split>[A-Za-z0-9_]+)-(?P<i>\d{6})\.tar$")


def list_tars(root: Path, split: str) -> tuple[list[Path], list[Problem]]:
    """The tar shards of ``split`` in index order (none without a ``webdataset/`` folder),
    and any file there that is not one."""
    folder = root / WEBDATASET_DIR
    if not folder.is_dir():
        return [], []
    found, problems = {}, []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        m = _TAR_NAME.match(path.name)
        if not path.is_file() or not m or m["split"] != split:
            what = f"not a {split!r} tar shard like {split}-000000.tar (no loader reads it)"
            problems.append(Problem(f"{WEBDATASET_DIR}/{path.name}", what))
            continue
        found[int(m["i"])] = path
    if found and sorted(found) != list(range(len(found))):
        problems.append(Problem(WEBDATASET_DIR, f"tar indices {sorted(found)} have gaps"))
    return [found[i] for i in sorted(found)], problems


@dataclass(frozen=True)
class TarCheck:
    """One tar shard read whole: its samples as the full config's rows' digests."""

    path: str
    rel: str

    @property
    def key(self) -> tuple[str, int]:
        return (self.rel, -2)

    def check(self) -> PartResult:
        errors: list[str] = []
        records: list[RowRecord] = []
        size = Path(self.path).stat().st_size
        if size % tarfile.RECORDSIZE:
            errors.append(f"cut short: {size} bytes, not a whole number of tar records")
        try:
            samples = _samples(self.path, errors)
        except (tarfile.TarError, OSError, EOFError) as exc:
            errors.append(f"not a whole tar file: {exc}")
            samples = []
        for index, (key, members) in enumerate(samples):
            row, why = _row(key, members)
            if row is None:
                errors.append(f"sample {index} ({key}): {why}")
                continue
            cells = {c: digest(row.get(c)) for c in columns(FULL_CONFIG)}
            records.append(RowRecord(index, key, cells))
        return PartResult(self.key, tuple(errors), tuple(records))


def _samples(path: str, errors: list[str]) -> list[tuple[str, dict[str, bytes]]]:
    """(key, {field: bytes}) of each sample in member order (the ``webdataset`` rule: a
    member's key ends at the first dot of its name)."""
    samples: list[tuple[str, dict[str, bytes]]] = []
    with tarfile.open(path, "r:") as tar:
        for member in tar:
            if not member.isfile():
                errors.append(f"member {member.name!r} is not a file")
                continue
            key, _, field = member.name.partition(".")
            handle = tar.extractfile(member)
            data = handle.read() if handle is not None else b""
            if len(data) != member.size:
                raise EOFError(f"member {member.name!r} cut short")
            if not samples or samples[-1][0] != key:
                samples.append((key, {}))
            samples[-1][1][field] = data
    return samples


def _row(key: str, members: dict[str, bytes]) -> tuple[dict[str, Any] | None, str]:
    """A sample as its full-config row (clips as the Parquet stores them), or why not."""
    try:
        row = json.loads(members.pop("json"))
    except (KeyError, ValueError) as exc:
        return None, f"no readable json member ({exc})"
    if not isinstance(row, dict) or row.get(VIDEO_ID) != key:
        return None, "its json is not the row of this key's video"
    fields = row.get(CLIPS)
    if not isinstance(fields, list) or set(fields) != set(members) or len(fields) != len(members):
        return None, f"clip members {sorted(members)} are not the json's clips {fields}"
    row[CLIPS] = [
        {"bytes": members[f], "path": clip_file_name(key, k)} for k, f in enumerate(fields, 1)
    ]
    return row, ""


def check_tars(
    checks: list[TarCheck],
    results: Mapping[tuple[str, int], PartResult],
    seen: dict[str, dict[str, bytes]],
) -> list[Problem]:
    """The tars' samples against the full config's rows (``seen``: digests by video id
    and column): every video once, in the rows' (video id) order, each column the same."""
    if not checks:
        return []
    problems: list[Problem] = []
    found: set[str] = set()
    last = ""
    for check in checks:
        result = results[check.key]
        problems += [Problem(check.rel, error) for error in result.errors]
        for record in result.rows:
            i, vid = record.row, record.video_id
            if vid in found or vid < last:
                problems.append(Problem(check.rel, "sample repeated or out of order", i, vid))
            found.add(vid)
            last = max(last, vid)
            full = seen.get(vid)
            if full is None:
                what = f"video not in the {FULL_CONFIG} shards"
                problems.append(Problem(check.rel, what, i, vid))
                continue
            problems += [
                Problem(check.rel, f"differs from the {FULL_CONFIG} shards' row", i, vid, col)
                for col in columns(FULL_CONFIG)
                if record.digests[col] != full.get(col)
            ]
    for vid in sorted(set(seen) - found):
        problems.append(Problem(WEBDATASET_DIR, "video missing from the tar shards", video_id=vid))
    return problems


__all__ = ["TarCheck", "check_tars", "list_tars"]
