"""What a publish would send, checked before a byte goes: the files a built folder (or the
metric's folder) uploads, the Hub's size limits, and a card whose configs `load_dataset`
can resolve. No network: `publish` runs these checks first, and `--dry-run` only these."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import pyarrow.parquet as pq
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS

import splice_dataset as schema
from splice_build.errors import UserError
from splice_build.output.card_reader import read_card
from splice_build.output.card_tables import human_size
from splice_build.output.release_manifest import MANIFEST
from splice_build.running.report import REPORT_JSON, REPORT_TXT

# What a built folder uploads: the card, the shards, the build report (which videos
# were kept or skipped and why; it holds no local paths) and an imported build's release
# manifest (`splice validate` checks its clips against it). Anything else a
# user left in the folder (notes, caches, half-written files) stays home.
DATASET_ALLOW_PATTERNS = [
    "README.md",
    REPORT_JSON,
    REPORT_TXT,
    MANIFEST,
    *(f"{schema.shard_dir(config)}/*.parquet" for config in schema.WRITTEN_CONFIGS),
    f"{schema.WEBDATASET_DIR}/*.tar",
]
# The metric Space: evaluate.load("ORG/NAME") fetches NAME.py; the Space runs app.py.
METRIC_ALLOW_PATTERNS = ["*.py", "README.md", "requirements.txt"]
COMMON_IGNORE_PATTERNS = ["**/__pycache__/**", "**/.*", ".*", "*.tmp", "*.incomplete"]
METRIC_IGNORE_PATTERNS = [*COMMON_IGNORE_PATTERNS, "__init__.py", "tests/**"]


@dataclass(frozen=True)
class HubLimits:
    """Limits checked before uploading.

    - ``max_entries_per_folder``: the Hub refuses more than 10,000 entries in one folder.
    - ``max_file_bytes``: the Hub recommends files under 20 GB (50 GB is the hard cap);
      a shard above it means the writer's shard size is wrong.
    - ``max_row_group_bytes``: the dataset viewer reads a Parquet file directly only when
      its row groups stay under 300 MB uncompressed (its ``maxRowGroupByteSizeForCopy``;
      "TooBigContentError ... max=286.10 MiB" otherwise); above it the viewer falls back
      to a partial conversion and cannot page through all clips.
    """

    max_entries_per_folder: int = 10_000
    max_file_bytes: int = 20 * 10**9
    max_row_group_bytes: int = 300_000_000


DEFAULT_LIMITS = HubLimits()


@dataclass(frozen=True)
class UploadFile:
    path_in_repo: str
    size: int


def plan_upload(
    folder: Path,
    allow_patterns: list[str] | None = None,
    ignore_patterns: list[str] | None = None,
) -> list[UploadFile]:
    """The files ``HfApi.upload_folder`` would send, selected by the same rules it applies."""
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder")
    relpaths = {
        p.relative_to(folder).as_posix(): p for p in sorted(folder.glob("**/*")) if p.is_file()
    }
    chosen = filter_repo_objects(
        relpaths,
        allow_patterns=DATASET_ALLOW_PATTERNS if allow_patterns is None else allow_patterns,
        ignore_patterns=[
            *(COMMON_IGNORE_PATTERNS if ignore_patterns is None else ignore_patterns),
            *DEFAULT_IGNORE_PATTERNS,
        ],
    )
    if allow_patterns is None:  # a build: exactly the files its patterns name
        chosen = [rel for rel in chosen if _exactly(rel, DATASET_ALLOW_PATTERNS)]
    return [UploadFile(rel, relpaths[rel].stat().st_size) for rel in chosen]


def check_limits(
    folder: Path, files: list[UploadFile], limits: HubLimits = HubLimits()
) -> list[str]:
    """Problems (file named in each) that would make the Hub refuse or misread the upload."""
    problems: list[str] = []
    entries: dict[str, set[str]] = {}
    for f in files:
        parts = PurePosixPath(f.path_in_repo).parts
        for depth in range(len(parts)):
            parent = "/".join(parts[:depth]) or "."
            entries.setdefault(parent, set()).add(parts[depth])
    for parent, names in sorted(entries.items()):
        if len(names) > limits.max_entries_per_folder:
            problems.append(
                f"{parent}/: {len(names)} entries, the Hub allows at most "
                f"{limits.max_entries_per_folder} per folder"
            )
    for f in files:
        if f.size > limits.max_file_bytes:
            problems.append(
                f"{f.path_in_repo}: {human_size(f.size)}, above the "
                f"{human_size(limits.max_file_bytes)} per-file limit; write smaller shards"
            )
        if f.path_in_repo.endswith(".parquet"):
            problems.extend(_check_row_groups(folder, f.path_in_repo, limits))
    return problems


def _check_row_groups(folder: Path, rel: str, limits: HubLimits) -> list[str]:
    try:
        meta = pq.read_metadata(Path(folder) / rel)
    except Exception as e:  # noqa: BLE001 - any unreadable footer is a problem to report
        return [f"{rel}: not a readable Parquet file ({e})"]
    problems = []
    for i in range(meta.num_row_groups):
        size = meta.row_group(i).total_byte_size
        if size > limits.max_row_group_bytes:
            problems.append(
                f"{rel}: row group {i} holds {human_size(size)} uncompressed, above the "
                f"viewer's {human_size(limits.max_row_group_bytes)}; it could not page through it"
            )
    return problems


def check_card(folder: Path, files: list[UploadFile]) -> list[str]:
    """Problems with README.md's YAML as huggingface_hub parses it and load_dataset reads it.

    Each config needs a name and data files per split; each pattern must match files that
    are actually uploaded (a pattern matching only local files fails on the Hub); exactly
    one config is the default.
    """
    readme = Path(folder) / schema.CARD
    uploaded = {f.path_in_repo for f in files}
    configs, problem = _card_configs(folder, readme, uploaded)
    if problem:
        return [problem]
    problems: list[str] = []
    names: list[str] = []
    defaults: list[str] = []
    for i, config in enumerate(configs):
        if not isinstance(config, dict) or not config.get("config_name"):
            problems.append(f"{readme}: configs[{i}] has no config_name")
            continue
        name = str(config["config_name"])
        names.append(name)
        if config.get("default") or name == "default":
            defaults.append(name)
        problems += _check_data_files(folder, name, config.get("data_files"), uploaded)
    for name, count in Counter(names).items():
        if count > 1:
            problems.append(f"{readme}: config {name!r} is declared {count} times")
    if len(defaults) != 1:
        problems.append(
            f"{readme}: exactly one config must be the default (default: true), "
            f"found {len(defaults)}: {defaults}"
        )
    return problems


def _card_configs(folder: Path, readme: Path, uploaded: set[str]) -> tuple[list[Any], str]:
    """The card's ``configs:`` list (read by `card_reader.read_card`, the one reader of
    a card), or the one problem that stops any further check."""
    if schema.CARD not in uploaded:
        return [], f"{readme}: missing; the card's YAML is what names the configs"
    card = read_card(folder)
    if card.problem:
        return [], f"{readme}: card YAML {card.problem}"
    if not card.configs:
        return [], f"{readme}: card YAML has no 'configs:' list"
    return list(card.configs), ""


def _check_data_files(folder: Path, name: str, value: object, uploaded: set[str]) -> list[str]:
    """Problems with one config's data_files: a pattern that matches only local files
    fails on the Hub, so each must match a file that is uploaded."""
    readme = Path(folder) / schema.CARD
    try:
        splits = _data_files(value)
    except (TypeError, ValueError) as e:  # what load_dataset itself would refuse
        return [f"{readme}: config {name!r}: {e}"]
    if not splits:
        return [f"{readme}: config {name!r} has no data_files"]
    return [
        f"{readme}: config {name!r} split {split!r}: data_files pattern "
        f"{pattern!r} matches no uploaded file"
        for split, patterns in splits.items()
        for pattern in patterns
        if not _resolved(folder, pattern) & uploaded
    ]


def _data_files(value: object) -> dict[str, list[str]]:
    """A config's data_files as {split: [patterns]}, read by ``datasets``' own
    ``sanitize_patterns`` so that this check accepts exactly the forms load_dataset does
    (it raises ValueError or TypeError on a malformed one). Splits without patterns are
    dropped."""
    from datasets.data_files import sanitize_patterns  # datasets: ~0.4 s publish-metric skips

    if not value:
        return {}
    return {split: list(p) for split, p in sanitize_patterns(value).items() if p}


def _resolved(folder: Path, pattern: str) -> set[str]:
    """The files of ``folder`` a data_files pattern names, resolved by ``datasets`` itself
    (``resolve_pattern``: its glob, its hidden-file rules), as paths in the repository."""
    from datasets.data_files import resolve_pattern

    root = Path(folder).expanduser().resolve()
    try:
        found = resolve_pattern(pattern, base_path=str(root))
    except FileNotFoundError:
        return set()
    return {Path(p).resolve().relative_to(root).as_posix() for p in found}


def _exactly(rel: str, patterns: list[str]) -> bool:
    """Whether a path matches one of ``patterns`` component by component: huggingface_hub's
    ``fnmatch`` lets ``*`` cross ``/``, so ``video/*.parquet`` would also send
    ``video/sub/x.parquet``, a file no config names and ``splice validate`` refuses."""
    path = PurePosixPath(rel)
    return any(len(path.parts) == len(PurePosixPath(p).parts) and path.match(p) for p in patterns)


def print_plan(files: list[UploadFile], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for f in files:
        print(f"{f.size:>15,d}  {f.path_in_repo}", file=out)
    total = sum(f.size for f in files)
    print(f"{len(files)} files, {human_size(total)} in total", file=out)
