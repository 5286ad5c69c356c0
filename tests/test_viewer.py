"""The Hub dataset viewer's step that failed for the ``video`` config (issue 13).

For a config whose data files are already Parquet, the viewer copies the files as they are,
reads EVERY column of a row group (``libs/libviewer/src/parquet.rs``, ``ProjectionMask::all()``)
and casts the table to the config's features (``libs/libcommon/.../parquet_utils.py``,
``datasets.table.cast_table_to_schema``); ``/rows`` has no fallback. A config whose files
hold more columns than its features (a ``columns:`` projection over shared shards) fails
that cast. This runs the same step on a real build, with the files and features that
``datasets`` itself resolves from the card for each config, the question configs
(``text_pairwise``, ``text_choice``: issue 24) included.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset_builder
from datasets.table import cast_table_to_schema

import splice_dataset as sd


@pytest.mark.parametrize("config", sd.WRITTEN_CONFIGS)
def test_viewer_cast_of_first_row_group_passes_for_every_config(
    demo_build: Path, config: str
) -> None:
    builder = load_dataset_builder(str(demo_build), config)
    schema = builder.info.features.arrow_schema
    files = builder.config.data_files[sd.SPLIT]
    assert files, f"config {config}: no data files resolved"
    for file in files:
        table = pq.ParquetFile(file).read_row_group(0)
        cast = cast_table_to_schema(table, schema)  # raises CastError on a column mismatch
        assert cast.num_rows == table.num_rows > 0
        assert cast.column_names == list(sd.columns(config))


def test_every_config_reads_only_its_own_files(demo_build: Path) -> None:
    """No file is shared between configs: each holds exactly its config's columns, so the
    viewer (which ignores ``columns:``) and ``load_dataset`` see the same table."""
    seen: dict[str, str] = {}
    for config in sd.WRITTEN_CONFIGS:
        for file in load_dataset_builder(str(demo_build), config).config.data_files[sd.SPLIT]:
            assert file not in seen, f"{file} read by both {seen.get(file)} and {config}"
            seen[file] = config
            assert pq.read_schema(file).names == list(sd.columns(config))


@pytest.mark.parametrize("config", list(sd.TEXT_QUESTION_CONFIGS))
def test_viewer_pages_the_questions_load_format_gives(demo_build: Path, config: str) -> None:
    """What the viewer shows of a question config is the rows ``load(format=)`` maps."""
    asked, fmt = sd.TEXT_QUESTION_CONFIGS[config]
    builder = load_dataset_builder(str(demo_build), config)
    assert builder.info.features == sd.features(config)
    viewed = []
    for file in builder.config.data_files[sd.SPLIT]:
        pf = pq.ParquetFile(file)
        for group in range(pf.num_row_groups):
            table = cast_table_to_schema(
                pf.read_row_group(group), builder.info.features.arrow_schema
            )
            viewed += table.to_pylist()
    assert viewed == list(sd.load(asked, source=demo_build, format=fmt))
    assert len(viewed) > 0
