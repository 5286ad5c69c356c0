"""``ShuffledVideo`` stream -> WebDataset tar shards under ``<out>/webdataset/``.

One sample per video: ``<video_id>.json`` (the same row the Parquet writer stores, minus
the clip bytes, plus the member name of each clip) and one ``<video_id>.video<k>.mp4``
member per clip, ``k`` being the shuffled label ("Video k" of the prompts).

Member naming follows the ``webdataset`` library's grouping rule: a member name splits at
the first dot after the last slash, so ``abc_XY-1.video3.mp4`` is key ``abc_XY-1`` and
field ``video3.mp4``. A key therefore must not contain a dot (YouTube ids never do; any
other id with a dot is refused rather than silently merged with its neighbours).

Samples hold 2..7 clips, so their member sets differ. ``datasets``' own WebDataset loader
refuses that ("files in the archive don't share the same prefix or the same types"), which
is why the card points WebDataset users at the ``webdataset`` library and keeps
``load_dataset`` on the Parquet configs.

Shards are byte-for-byte deterministic (fixed mtime, owner and mode, samples in video id
order, members in label order), so rebuilding the same inputs gives the same tar files
and the Hub's content-addressed storage uploads nothing new.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterable
from pathlib import Path

import splice_dataset as schema
from splice_build.output.writing.rows import check_order, video_row
from splice_build.output.writing.write import MAX_SHARD_BYTES
from splice_build.records import ShuffledVideo

_TAR_BLOCK = 512
_MTIME = 0  # fixed: the tar bytes depend on the data only
_MODE = 0o644


def tar_shard_name(split: str, index: int) -> str:
    """``test-000000.tar``: the brace-expandable naming ``webdataset`` users expect."""
    return f"{split}-{index:06d}.tar"


def clip_member_field(label: int) -> str:
    """Field name of clip ``label`` inside a sample (``sample["video3.mp4"]`` is Video 3)."""
    return f"video{label}.mp4"


def sample_key(video_id: str) -> str:
    """The sample key, refusing ids that ``webdataset`` would split or misplace."""
    if not video_id or "." in video_id or "/" in video_id:
        raise ValueError(
            f"video {video_id!r}: a WebDataset key must be non-empty and contain no '.' or '/' "
            "(webdataset splits member names at the first dot after the last slash)"
        )
    return video_id


def sample_members(video: ShuffledVideo) -> list[tuple[str, bytes]]:
    """``(member name, bytes)`` of one sample: the JSON first, then clips in label order.

    The JSON is the Parquet writer's own row (``rows.video_row``) with each clip replaced
    by its field name, so the two formats cannot disagree on any column, the answer
    included; ``json["clips"][k - 1]`` is the field holding Video k.
    """
    key = sample_key(video.entry.video_id)
    row = video_row(video)
    clips = row[schema.CLIPS]
    row[schema.CLIPS] = [clip_member_field(k) for k in range(1, len(clips) + 1)]
    text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    members = [(f"{key}.json", text.encode("utf-8"))]
    for label, clip in enumerate(clips, start=1):
        members.append((f"{key}.{clip_member_field(label)}", clip["bytes"]))
    return members


def shard_pattern(num_shards: int, split: str = schema.SPLIT) -> str:
    """The brace pattern naming all ``num_shards`` shards, relative to the build folder."""
    if num_shards <= 1:
        return f"{schema.WEBDATASET_DIR}/{tar_shard_name(split, 0)}"
    return f"{schema.WEBDATASET_DIR}/{split}-{{000000..{num_shards - 1:06d}}}.tar"


def card_section(num_shards: int, split: str = schema.SPLIT) -> tuple[str, str]:
    """``(heading, markdown)`` for ``card.render_card(extra_sections=...)`` when a build
    carries tar shards: which loader reads them, and why not ``load_dataset``."""
    d = schema.WEBDATASET_DIR
    body = f"""
`{d}/{tar_shard_name(split, 0)}`, ... hold the same videos as WebDataset tar shards, one
sample per video: `<video_id>.json` is the row of the `video_text` config (answer included)
with `clips` holding field names, and `<video_id>.video<k>.mp4` is clip `k` ("Video k").
Read them with the [`webdataset`](https://github.com/webdataset/webdataset) library
(`pip install webdataset`), not with `load_dataset`: samples hold 2 to 7 clips, so their
member sets differ, which `datasets`' own WebDataset loader refuses.

```python
import webdataset as wds

ds = wds.WebDataset("{shard_pattern(num_shards, split)}", shardshuffle=False).decode()
for sample in ds:  # sample["__key__"] is the video id
    row = sample["json"]
    clips = [sample[name] for name in row["clips"]]  # mp4 bytes of Video 1..n
    order = row["answer"]["order"]
```

Keys are YouTube ids, which never contain a dot (the `webdataset` library cuts a member
name at its first dot). The tar shards are not part of any `load_dataset` config.
"""
    return "WebDataset shards", body.strip()


def write_webdataset(
    videos: Iterable[ShuffledVideo],
    out_dir: Path,
    *,
    split: str = schema.SPLIT,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> list[Path]:
    """Write the tar shards under ``out_dir/webdataset`` and return their paths in order.

    ``videos`` must come sorted by video id (the pipeline's order); a sample is never split
    across shards, so a shard exceeds ``max_shard_bytes`` only when one sample alone does.
    Shards of ``split`` left from an earlier run in that folder are removed.
    """
    if max_shard_bytes <= 0:
        raise ValueError(f"max_shard_bytes must be positive, got {max_shard_bytes}")
    folder = Path(out_dir) / schema.WEBDATASET_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    tar: tarfile.TarFile | None = None
    shard_bytes = 0
    previous: str | None = None
    try:
        for video in videos:
            check_order(video.entry.video_id, previous)
            previous = video.entry.video_id
            members = sample_members(video)
            size = sum(_member_size(data) for _, data in members)
            if tar is not None and shard_bytes + size > max_shard_bytes:
                tar.close()
                tar = None
            if tar is None:
                path = folder / tar_shard_name(split, len(written))
                tar = _open_tar(path)
                written.append(path)
                shard_bytes = 0
            for name, data in members:
                _add_member(tar, name, data)
            shard_bytes += size
    finally:
        if tar is not None:
            tar.close()
    keep = set(written)
    for stale in folder.glob(f"{split}-*.tar"):
        if stale not in keep:
            stale.unlink()
    return written


def _open_tar(path: Path) -> tarfile.TarFile:
    # USTAR: no PAX headers (which may carry times), readable by every tar reader.
    return tarfile.open(path, "w", format=tarfile.USTAR_FORMAT)


def _add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = _MTIME
    info.mode = _MODE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    tar.addfile(info, io.BytesIO(data))


def _member_size(data: bytes) -> int:
    """Bytes a member takes in the tar: one header block plus the data padded to blocks."""
    return _TAR_BLOCK + -(-len(data) // _TAR_BLOCK) * _TAR_BLOCK


__all__ = [
    "shard_pattern",
    "card_section",
    "clip_member_field",
    "sample_members",
    "sample_key",
    "tar_shard_name",
    "write_webdataset",
]
