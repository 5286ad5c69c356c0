"""A build's identity: one digest of what its rows hold, the card's ``splice_build.build_id``.

Predictions, caches and scores are only worth something tied to the build they came from,
so the identity must change whenever any answer, clip, caption or row changes, and only
then. It is therefore a digest of the rows' *values*, not of the files' bytes: the same
rows written by another pyarrow (another footer, other pages) or cut into other shards
keep their identity, and a row changed, added, dropped or moved changes it.

- ``cell_digest``: a cell as canonical JSON (keys sorted, floats as ``repr``), every byte
  string (a clip) replaced by its sha256;
- ``row_digest``: a row's cells in its config's column order;
- a shard's digest: its rows' digests in order (the card lists one per shard, so a
  changed row names its shard);
- a config's digest: its rows' digests in order, across its shards (sharding aside);
- ``build_id``: the configs' digests, by config name, and, for a build of any source but
  COIN, the source's identity (`sources.base.SourceCard.identity`: name, adapter version,
  licence, citation) as canonical JSON: two builds of other sources or adapter versions
  differ, and a COIN build keeps the identity it always had.

Standard library only: the validation workers (``validate.parts``) compute the cells'
digests as they read the rows, and the card's writer the same from the shards it wrote.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Bumped if the rule below ever changes: an identity of another rule is another build.
IDENTITY_VERSION = 1


def _bytes_digest(value: Any) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "sha256:" + hashlib.sha256(value).hexdigest()
    raise TypeError(f"cannot digest a {type(value).__name__}")


def cell_digest(value: Any) -> bytes:
    """A cell's value as 32 bytes: canonical JSON, byte strings by their sha256."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_bytes_digest
    )
    return hashlib.sha256(text.encode("ascii")).digest()


def row_digest(cells: Mapping[str, bytes], cols: Iterable[str]) -> bytes:
    """A row's digest from its cells' (``cell_digest``), in its config's column order."""
    digest = hashlib.sha256()
    for col in cols:
        digest.update(col.encode() + b"\0" + cells[col])
    return digest.digest()


class RowsDigest:
    """The digest of rows in order (a shard's or a whole config's), fed one row at a time."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self.rows = 0

    def add(self, row: bytes) -> None:
        self._digest.update(row)
        self.rows += 1

    def hexdigest(self) -> str:
        final = self._digest.copy()
        final.update(b"rows %d" % self.rows)
        return final.hexdigest()


def build_id(config_digests: Mapping[str, str], source: Mapping[str, Any] | None = None) -> str:
    """The build's identity (64 hex digits) from each written config's digest and the
    identity of its source (None, or a source named ``coin``: COIN's, which adds nothing)."""
    digest = hashlib.sha256(f"splice build identity v{IDENTITY_VERSION}\n".encode())
    for config in sorted(config_digests):
        digest.update(f"{config}\0{config_digests[config]}\n".encode())
    if source and source.get("name") != "coin":
        text = json.dumps(dict(source), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        digest.update(f"source\0{text}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class BuildDigests:
    """What the card records of a build's content: each shard's digest (keyed by its path
    in the build, ``<config folder>/<file>``), each config's, and the build's identity."""

    shards: dict[str, str]
    configs: dict[str, str]
    source: dict[str, Any] | None = None  # `build_id`'s source identity

    @property
    def build_id(self) -> str:
        return build_id(self.configs, self.source)

    def as_card(self) -> dict[str, Any]:
        """The card's ``splice_build`` entries."""
        return {
            "build_id": self.build_id,
            "config_digests": dict(sorted(self.configs.items())),
            "shard_digests": dict(sorted(self.shards.items())),
        }


__all__ = [
    "IDENTITY_VERSION",
    "BuildDigests",
    "RowsDigest",
    "build_id",
    "cell_digest",
    "row_digest",
]
