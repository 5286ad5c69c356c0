"""The folder's layout: shard names without gaps or leftovers, each file's columns and
``huggingface`` features exactly its config's, and each shard's row groups as the parts
(`parts.Part`) that are read and checked, with every page's CRC verified."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from splice_build.output.validate.parts import Part, PartResult, parts_of
from splice_build.output.validate.problems import Problem
from splice_build.output.writing.shards import ShardInfo, shard_info
from splice_build.output.writing.write import TMP_PREFIX
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
        if path.name.startswith("."):  # neither loaded nor published
            continue
        if path.is_dir() or path.suffix != ".parquet":
            what = "a folder" if path.is_dir() else "a file"
            problems.append(
                Problem(rel, f"{what} in the {folder}/ folder that no config of the card names")
            )
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


def check_schemas(opened: dict[str, list[Shard]]) -> None:
    """Each opened shard's columns and features against its config's, added to its
    problems. ``datasets`` is imported here, on first use: run beside the parts (see
    ``folder``), its second of importing overlaps the workers' reading."""
    for config, shards in opened.items():
        for shard in shards:
            if shard.schema is not None:
                shard.problems.extend(check_schema(shard.rel, shard.schema, config))


def check_schema(rel: str, schema: pa.Schema, config: str) -> list[Problem]:
    from datasets import Features

    problems = []
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


@dataclass(frozen=True)
class Shard:
    """One shard as the driver opened it: its own problems (it does not open, its schema),
    and its row groups as the parts the executor checks."""

    rel: str  # <config folder>/<file name>
    path: str  # as every worker sees it
    problems: list[Problem]
    parts: list[Part]
    schema: pa.Schema | None = None  # None: it did not open


def open_shards(config: str, paths: list[Path], infos: list[ShardInfo]) -> list[Shard]:
    """Every shard of a config, and, if it opens, its `ShardInfo` added to ``infos``; only
    footers are read here (the parts read the rows, `check_schemas` the schemas)."""
    shards = []
    for path in paths:
        rel = f"{shard_dir(config)}/{path.name}"
        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            problem = Problem(rel, f"not a readable Parquet file: {exc}")
            shards.append(Shard(rel, str(path), [problem], []))
            continue
        meta = pf.metadata
        infos.append(shard_info(path, meta))
        groups = (meta.row_group(rg) for rg in range(meta.num_row_groups))
        sizes = [(group.num_rows, group.total_byte_size) for group in groups]
        parts = parts_of(config, str(path), rel, sizes)
        shards.append(Shard(rel, str(path), [], parts, pf.schema_arrow))
    return shards


def read_back(
    shard: Shard, results: Mapping[tuple[str, int], PartResult]
) -> tuple[list[Problem], list[PartResult]]:
    """A shard's own problems with its parts' read errors, then its parts' results in row
    order: listed so, a shard's problems come in the same order however its rows are split
    into parts."""
    done = [results[part.key] for part in shard.parts]
    errors = [Problem(shard.rel, error) for result in done for error in result.errors]
    return shard.problems + errors, done
