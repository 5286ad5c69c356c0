"""The folder's layout and reading its shards: shard names without gaps or leftovers,
each file's columns and ``huggingface`` features exactly its config's, and rows read one
row group at a time with every page's CRC verified."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features

from splice_build.output.shards import ShardInfo, shard_info
from splice_build.output.validate.problems import Problem
from splice_build.output.write import TMP_PREFIX
from splice_dataset import SHARD_NAME_RE, columns, features, shard_dir


def list_shards(root: Path, folder: str, split: str) -> tuple[list[Path], list[Problem]]:
    """The shards of one folder in index order, and any naming problem."""
    problems: list[Problem] = []
    directory = root / folder
    if not directory.is_dir():
        return [], [Problem(folder, "folder missing")]
    found: dict[int, Path] = {}
    totals: set[int] = set()
    for path in sorted(directory.iterdir()):
        rel = f"{folder}/{path.name}"
        if path.name.startswith(TMP_PREFIX):
            problems.append(Problem(rel, "leftover temporary shard of an unfinished write"))
            continue
        if path.suffix != ".parquet":
            continue
        m = SHARD_NAME_RE.match(path.name)
        if not m or m["split"] != split:
            problems.append(Problem(rel, f"not a {split!r} shard name like {split}-00000-of-00001"))
            continue
        found[int(m["i"])] = path
        totals.add(int(m["n"]))
    if not found:
        problems.append(Problem(folder, f"no {split!r} shard"))
        return [], problems
    if len(totals) > 1:
        problems.append(Problem(folder, f"shards disagree on their count: {sorted(totals)}"))
    total = max(totals)
    missing = sorted(set(range(total)) - set(found))
    if missing or max(found) >= total:
        problems.append(
            Problem(folder, f"shard indices {sorted(found)} do not cover 0..{total - 1}")
        )
    return [found[i] for i in sorted(found)], problems


def check_schema(rel: str, pf: pq.ParquetFile, config: str) -> list[Problem]:
    problems = []
    schema = pf.schema_arrow
    expected = list(columns(config))
    if schema.names != expected:
        extra = [c for c in schema.names if c not in expected]
        missing = [c for c in expected if c not in schema.names]
        problems.append(
            Problem(
                rel,
                f"columns {schema.names} are not the {config} config's {expected}"
                + (f"; extra {extra} (a model-facing column outside the answer?)" if extra else "")
                + (f"; missing {missing}" if missing else ""),
            )
        )
    if not schema.metadata or b"huggingface" not in schema.metadata:
        problems.append(Problem(rel, "no 'huggingface' schema metadata: features not restorable"))
    elif Features.from_arrow_schema(schema) != features(config):
        problems.append(Problem(rel, f"schema metadata does not restore the {config} features"))
    return problems


def open_shard(rel: str, path: Path, problems: list[Problem]) -> pq.ParquetFile | None:
    """The shard, opened to verify page checksums; None (with the problem) if unreadable."""
    try:
        return pq.ParquetFile(path, page_checksum_verification=True)
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(rel, f"not a readable Parquet file: {exc}"))
        return None


def shard_rows(
    rel: str, pf: pq.ParquetFile, problems: list[Problem]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row index, row), one row group at a time so memory stays bounded by a row group;
    every page's CRC is verified on the way (a flipped byte anywhere is a problem)."""
    first = 0
    for rg in range(pf.metadata.num_row_groups):
        size = pf.metadata.row_group(rg).num_rows
        try:
            rows = pf.read_row_group(rg).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            problems.append(
                Problem(rel, f"row group {rg} (rows {first}..{first + size - 1}): {exc}")
            )
            rows = []
        yield from enumerate(rows, start=first)
        first += size


def config_rows(
    config: str, paths: list[Path], problems: list[Problem], infos: list[ShardInfo]
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(shard, row index, row) of every readable shard of a config, each shard's schema
    checked and its `ShardInfo` added to ``infos`` on the way."""
    for path in paths:
        rel = f"{shard_dir(config)}/{path.name}"
        pf = open_shard(rel, path, problems)
        if pf is None:
            continue
        problems += check_schema(rel, pf, config)
        infos.append(shard_info(path))
        for i, row in shard_rows(rel, pf, problems):
            yield rel, i, row
