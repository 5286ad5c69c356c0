"""The one place for Parquet writer options: every shard is written with these.

- Per-column compression as ``datasets`` chooses: clip bytes stored PLAIN and uncompressed
  since H.264 is already compressed, snappy+dictionary for the rest.
- Page CRCs, which ``splice validate`` verifies, and a page index, so readers can fetch
  single rows.
- Content-defined chunking with push_to_hub's settings (``CDC_OPTIONS``), so that pages of
  the same clips in two configs' files are the same bytes and deduplicate on the Hub.
- No timestamp is written, so the same inputs give byte-identical files.
- The schema carries the ``huggingface`` metadata key (``Features.arrow_schema``), from
  which ``datasets`` restores ``List(Video())`` and the other features.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from datasets import Features

# Content-defined chunking as push_to_hub writes it (datasets' DEFAULT_CDC_OPTIONS, which
# are pyarrow's defaults): pages cut where the data's rolling hash says, 256 KiB to 1 MiB.
CDC_OPTIONS = {"min_chunk_size": 256 * 1024, "max_chunk_size": 1024 * 1024, "norm_level": 0}


def parquet_options(features: Features, *, content_defined_chunking: bool = True) -> dict:
    """The project's ``pq.ParquetWriter`` options for a table of ``features``: every shard
    is written with these (see the module docstring for each choice).

    Per leaf column, as datasets' own Parquet writer chooses: leaves of a column whose
    feature embeds files (``List(Video())``) are PLAIN and uncompressed, the rest snappy with
    dictionaries. ``content_defined_chunking=False`` exists for bench/dedup.py's baseline.
    """
    from datasets.features.features import require_storage_embed  # with datasets, on use

    schema = features.arrow_schema
    compression: dict[str, str] = {}
    use_dictionary: list[str] = []
    column_encoding: dict[str, str] = {}
    for name, pa_type in zip(schema.names, schema.types, strict=True):
        embed = require_storage_embed(features[name])
        for leaf in _leaf_paths(name, pa_type):
            compression[leaf] = "none" if embed else "snappy"
            if embed:
                column_encoding[leaf] = "PLAIN"
            else:
                use_dictionary.append(leaf)
    return {
        "compression": compression,
        "use_dictionary": use_dictionary,
        "column_encoding": column_encoding,
        "write_page_index": True,
        "write_page_checksum": True,  # `splice validate` verifies every page's CRC
        "use_content_defined_chunking": (dict(CDC_OPTIONS) if content_defined_chunking else False),
    }


def _leaf_paths(path: str, pa_type: pa.DataType) -> list[str]:
    """Parquet's leaf column paths (``clips.list.element.bytes``): the keys of per-column
    writer options."""
    if pa.types.is_struct(pa_type):
        return [leaf for f in pa_type for leaf in _leaf_paths(f"{path}.{f.name}", f.type)]
    if pa.types.is_list(pa_type) or pa.types.is_large_list(pa_type):
        return _leaf_paths(f"{path}.list.element", pa_type.value_type)
    return [path]


def open_parquet_writer(
    path: Path, features: Features, *, content_defined_chunking: bool = True
) -> pq.ParquetWriter:
    """A ParquetWriter for one shard, with the schema's ``huggingface`` metadata and the
    project's options (``parquet_options``)."""
    return pq.ParquetWriter(
        path,
        features.arrow_schema,
        **parquet_options(features, content_defined_chunking=content_defined_chunking),
    )


__all__ = ["CDC_OPTIONS", "open_parquet_writer", "parquet_options"]
