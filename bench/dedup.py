"""What the Hub stores and what a user downloads per config, and how much of the clip bytes
the Hub's chunk-deduplicating storage can keep once.

Each config has its own shards (the dataset viewer needs files that hold exactly the
config's columns), so ``video`` and ``video_text`` both carry every clip. The writer cuts
the two at the same rows and writes them with Parquet content-defined chunking (CDC), so
their clip pages are the same bytes. Measured here on real-size rows (bench/load.py's
footage build, written by the real shard writer):

1. Bytes per config (what downloading the config fetches) and in all.
2. Between the configs: the share of the ``video`` files' clip-column page bytes (every
   page of the ``clips.*`` column chunks, header included) that occur byte for byte as a
   page of the ``video_text`` files. Target: at least 95%.
3. Between versions: the same build with one more video in front (every row group then
   holds other videos): the share of the new ``video_text`` clip page bytes already held
   by the old build. This is where CDC matters: without it pages are cut at fixed sizes
   from each row group's start, so a shifted row group shares no page.

Baseline: the same rows written without CDC (``content_defined_chunking=False``), in the
same run. Pages are found by reading each page header (Thrift compact protocol) from the
column chunk's first page on, as a Parquet reader does; pyarrow has no page-location API.
The Hub's Xet storage deduplicates ~64 kB content-defined chunks of the files, so a shared
page of 256 kB - 1 MB is stored once up to the chunks that straddle its ends.

    .venv/bin/python bench/dedup.py [--videos 24]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

import splice_dataset as sd
from splice_build.output.card_tables import human_size

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import encode_footage_clips, footage_folder, packaged_footage  # noqa: E402

TARGET_SHARE = 0.95


# --- Parquet pages ------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        out |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return out, pos
        shift += 7


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _skip(buf: bytes, pos: int, kind: int) -> int:
    """Skip one Thrift compact value of type ``kind``."""
    if kind in (1, 2):  # bool in a field header
        return pos
    if kind == 3:
        return pos + 1
    if kind in (4, 5, 6):
        return _varint(buf, pos)[1]
    if kind == 7:
        return pos + 8
    if kind == 8:
        size, pos = _varint(buf, pos)
        return pos + size
    if kind in (9, 10):
        return _skip_list(buf, pos)
    if kind == 11:
        return _skip_map(buf, pos)
    if kind == 12:
        return _struct(buf, pos)[1]
    raise ValueError(f"unknown Thrift compact type {kind}")


def _skip_list(buf: bytes, pos: int) -> int:
    """Skip a Thrift compact list or set (its bools take a byte each, unlike a field's)."""
    head = buf[pos]
    pos += 1
    size, elem = head >> 4, head & 0x0F
    if size == 15:
        size, pos = _varint(buf, pos)
    for _ in range(size):
        pos = pos + 1 if elem in (1, 2) else _skip(buf, pos, elem)
    return pos


def _skip_map(buf: bytes, pos: int) -> int:
    """Skip a Thrift compact map (an empty one has no key/value type byte)."""
    size, pos = _varint(buf, pos)
    if size:
        types = buf[pos]
        pos += 1
        for _ in range(size):
            pos = _skip(buf, pos, types >> 4)
            pos = _skip(buf, pos, types & 0x0F)
    return pos


def _struct(buf: bytes, pos: int) -> tuple[dict[int, int], int]:
    """Integer fields of one Thrift compact struct (others skipped), and its end."""
    fields: dict[int, int] = {}
    last = 0
    while True:
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        kind, delta = head & 0x0F, head >> 4
        if delta:
            fid = last + delta
        else:
            raw, pos = _varint(buf, pos)
            fid = _zigzag(raw)
        last = fid
        if kind in (4, 5, 6):
            raw, pos = _varint(buf, pos)
            fields[fid] = _zigzag(raw)
        else:
            pos = _skip(buf, pos, kind)


def column_pages(path: Path, leaf_prefix: str) -> list[bytes]:
    """Every page (header + body) of the column chunks whose leaf path starts with
    ``leaf_prefix``, in file order."""
    meta = pq.ParquetFile(path).metadata
    data = path.read_bytes()
    pages = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            col = group.column(c)
            if not col.path_in_schema.startswith(leaf_prefix):
                continue
            start = col.dictionary_page_offset or col.data_page_offset
            pos, end = start, start + col.total_compressed_size
            while pos < end:
                header, body = _struct(data, pos)
                size = header[3]  # PageHeader.compressed_page_size
                pages.append(data[pos : body + size])
                pos = body + size
            if pos != end:
                raise ValueError(f"{path}: pages of {col.path_in_schema} overrun the chunk")
    return pages


# --- measures -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Share:
    shared: int
    total: int
    pages: int

    @property
    def ratio(self) -> float:
        return self.shared / self.total if self.total else 0.0


def clip_pages(folder: Path, config: str) -> list[bytes]:
    return [
        page
        for path in sd.shard_files(folder, config)[sd.SPLIT]
        for page in column_pages(path, f"{sd.CLIPS}.")
    ]


def shared_share(pages: list[bytes], held: list[bytes]) -> Share:
    """Bytes of ``pages`` that occur byte for byte as one of the ``held`` pages."""
    have = {hashlib.sha256(p).digest() for p in held}
    shared = sum(len(p) for p in pages if hashlib.sha256(p).digest() in have)
    return Share(shared, sum(len(p) for p in pages), len(pages))


def config_bytes(folder: Path) -> dict[str, int]:
    return {
        c: sum(p.stat().st_size for p in sd.shard_files(folder, c)[sd.SPLIT]) for c in sd.CONFIGS
    }


def _mb(n: int) -> str:
    return f"{human_size(n):>10s}"


def measure(root: Path, videos: int, cdc: bool, pool: list) -> dict[str, object]:
    label = "cdc" if cdc else "no-cdc"
    print(f"writing {videos} + {videos + 1} footage videos ({label}) ...", file=sys.stderr)
    kwargs = {"content_defined_chunking": cdc, "pool": pool}
    base = footage_folder(root / label / "base", videos, **kwargs)
    grown = footage_folder(root / label / "grown", videos, extra_first=True, **kwargs)
    video, video_text = clip_pages(base, "video"), clip_pages(base, "video_text")
    return {
        "bytes": config_bytes(base),
        "configs": shared_share(video, video_text),
        "versions": shared_share(clip_pages(grown, "video_text"), video_text),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=24, help="rows of the footage build")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="splice-bench-dedup-") as tmp:
        print("encoding footage clips ...", file=sys.stderr)
        pool = encode_footage_clips(packaged_footage(), Path(tmp) / "clips")
        results = {cdc: measure(Path(tmp), args.videos, cdc, pool) for cdc in (True, False)}
    cdc, plain = results[True], results[False]
    print(f"[footage, {args.videos} videos] bytes per config (what its download fetches):")
    for config in sd.CONFIGS:
        print(
            f"  {config:10s} {_mb(cdc['bytes'][config])} with CDC  "
            f"{_mb(plain['bytes'][config])} without"
        )
    print(
        f"  {'all':10s} {_mb(sum(cdc['bytes'].values()))} with CDC  "
        f"{_mb(sum(plain['bytes'].values()))} without"
    )
    for key, what in (
        ("configs", "video clip page bytes also in video_text"),
        ("versions", "clip page bytes of a rebuild with one more video already stored"),
    ):
        a, b = cdc[key], plain[key]
        print(f"  {what}:")
        print(f"    with CDC:    {a.ratio:6.1%} of {_mb(a.total)} in {a.pages} pages")
        print(f"    without CDC: {b.ratio:6.1%} of {_mb(b.total)} in {b.pages} pages (baseline)")
    share = cdc["configs"].ratio
    stored_once = sum(cdc["bytes"].values()) - cdc["configs"].shared
    print(
        f"  the Hub stores about {_mb(stored_once).strip()} for "
        f"{_mb(sum(cdc['bytes'].values())).strip()} of files (clip pages shared by the configs "
        "counted once)"
    )
    verdict = "OK" if share >= TARGET_SHARE else "BELOW TARGET"
    print(
        f"summary: clip page bytes shared between video and video_text {share:.1%} "
        f"(target >= {TARGET_SHARE:.0%}: {verdict}); rebuild with one more video: "
        f"{cdc['versions'].ratio:.1%} with CDC against {plain['versions'].ratio:.1%} without"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
