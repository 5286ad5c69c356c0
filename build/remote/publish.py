"""``splice publish`` and ``splice publish-metric``: put a build and the metric on the Hub.

Everything that can go wrong is checked before a byte is sent, because an upload that
fails at the end (or succeeds with a dataset the Hub cannot load or show) costs hours:
the folder must pass ``splice validate``, and the files that would be uploaded must fit
the Hub's limits and carry a card whose configs ``load_dataset`` can resolve. The upload
itself is a thin use of ``HfApi`` (``upload_folder`` resumes through hf_xet).

The token is whatever huggingface_hub resolves (``HF_TOKEN``, the saved login); it is
handed to ``HfApi`` and never printed or logged.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, HfApi, SpaceCard, get_token
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS

import splice_dataset as schema
from splice_build.errors import UserError
from splice_build.output.card import human_size
from splice_build.output.validate import validate
from splice_build.remote.release_manifest import MANIFEST
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
    *(f"{schema.shard_dir(config)}/*.parquet" for config in schema.CONFIGS),
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
    readme = Path(folder) / "README.md"
    uploaded = {f.path_in_repo for f in files}
    configs, problem = _card_configs(readme, uploaded)
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
        problems += _check_data_files(readme, name, config.get("data_files"), uploaded)
    for name, count in Counter(names).items():
        if count > 1:
            problems.append(f"{readme}: config {name!r} is declared {count} times")
    if len(defaults) != 1:
        problems.append(
            f"{readme}: exactly one config must be the default (default: true), "
            f"found {len(defaults)}: {defaults}"
        )
    return problems


def _card_configs(readme: Path, uploaded: set[str]) -> tuple[list[Any], str]:
    """The card's ``configs:`` list, or the one problem that stops any further check."""
    if "README.md" not in uploaded:
        return [], f"{readme}: missing; the card's YAML is what names the configs"
    try:
        card = DatasetCard.load(readme)
    except Exception as e:  # noqa: BLE001 - yaml and huggingface_hub raise several types
        return [], f"{readme}: card YAML does not parse: {e}"
    configs = card.data.to_dict().get("configs")
    if not configs or not isinstance(configs, list):
        return [], f"{readme}: card YAML has no 'configs:' list"
    return configs, ""


def _check_data_files(readme: Path, name: str, value: object, uploaded: set[str]) -> list[str]:
    """Problems with one config's data_files: a pattern that matches only local files
    fails on the Hub, so each must match a file that is uploaded."""
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
        if not _matches(pattern, uploaded)
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


def _matches(pattern: str, uploaded: set[str]) -> bool:
    regex = _glob_regex(pattern)
    return any(regex.fullmatch(p) for p in uploaded)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A data_files glob as datasets resolves it: '*' and '?' stay inside one path
    component, '**/' spans any number of folders."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            j = pattern.index("]", i + 1)
            body = pattern[i + 1 : j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = j + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def print_plan(files: list[UploadFile], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for f in files:
        print(f"{f.size:>15,d}  {f.path_in_repo}", file=out)
    total = sum(f.size for f in files)
    print(f"{len(files)} files, {human_size(total)} in total", file=out)


# Where the errors of talking to the Hub come from: the HTTP clients huggingface_hub has
# used (requests, httpx and its httpx2 fork, urllib3 below them) and huggingface_hub's own.
_HUB_ERROR_MODULES = ("huggingface_hub", "httpx", "httpx2", "requests", "urllib3")


@contextlib.contextmanager
def _hub_errors(target: str) -> Iterator[None]:
    """No network, a refused token, a missing permission: one line naming the target
    (``--debug`` shows the traceback), not a client library's traceback."""
    try:
        yield
    except Exception as exc:
        modules = {c.__module__.split(".")[0] for c in type(exc).__mro__}
        if not (isinstance(exc, OSError) or modules & set(_HUB_ERROR_MODULES)):
            raise
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(
            f"upload to {target} on {endpoint} failed: {type(exc).__name__}: {detail} "
            "(files already sent stay; rerun to resume)"
        ) from exc


def _api() -> HfApi:
    """An HfApi holding the resolved token, or a clear error naming where tokens come from."""
    token = get_token()
    if not token:
        raise PermissionError(
            "no Hugging Face token found: set HF_TOKEN or log in with `hf auth login`"
        )
    return HfApi(token=token)


# --- splice publish ---------------------------------------------------------------------


def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="built dataset folder (splice build --out)")
    parser.add_argument("--repo-id", required=True, help="dataset repo, ORG/NAME")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--revision", default=None, help="branch to upload to (created)")
    parser.add_argument(
        "--dry-run", action="store_true", help="list files and check limits; send nothing"
    )


def publish_dataset(
    folder: Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    dry_run: bool = False,
    limits: HubLimits = HubLimits(),
    out: TextIO | None = None,
) -> int:
    """Check ``folder`` and (unless ``dry_run``) upload it; 0 on success, 1 when refused."""
    out = out or sys.stdout
    err = _errors_to(out)
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    _check_repo_id(repo_id)

    failed = validate(folder)
    if failed:
        return _refuse(f"splice publish: refusing {folder}: it fails splice validate:", failed, err)
    files = plan_upload(folder)
    problems = check_limits(folder, files, limits) + check_card(folder, files)
    target = f"datasets/{repo_id}" + (f"@{revision}" if revision else "")
    stop = _check_before_sending(
        problems, f"splice publish: {folder} breaks the Hub's limits:", target, files, dry_run, out
    )
    if stop is not None:
        return stop
    api = _api()
    with _hub_errors(target):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision:
            api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="dataset",
            revision=revision,
            allow_patterns=DATASET_ALLOW_PATTERNS,
            ignore_patterns=COMMON_IGNORE_PATTERNS,
            commit_message=f"Upload SPLICE build ({len(files)} files)",
        )
    print(f"uploaded {len(files)} files to {getattr(info, 'commit_url', repo_id)}", file=out)
    return 0


def run_publish(args: argparse.Namespace) -> int:
    try:
        return publish_dataset(
            args.folder,
            args.repo_id,
            private=args.private,
            revision=args.revision,
            dry_run=args.dry_run,
        )
    except PermissionError as e:  # no token
        raise UserError(str(e)) from None


# --- splice publish-metric --------------------------------------------------------------


def default_metric_dir() -> Path:
    """The installed ``splice_metric`` package folder (the repo's ``splice_metric/``)."""
    spec = importlib.util.find_spec("splice_metric")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("splice_metric is not importable; pass --metric-dir")
    return Path(next(iter(spec.submodule_search_locations)))


def check_metric_folder(folder: Path, repo_id: str, files: list[UploadFile]) -> list[str]:
    """What would make the Space unusable: ``evaluate.load("ORG/NAME")`` downloads
    ``NAME.py`` from the Space, and the Gradio SDK runs the card's ``app_file``."""
    folder = Path(folder)
    uploaded = {f.path_in_repo for f in files}
    name = repo_id.split("/")[-1]
    problems = []
    if f"{name}.py" not in uploaded:
        problems.append(
            f"{folder}: no {name}.py; evaluate.load({repo_id!r}) fetches the script named "
            "like the repo"
        )
    readme = folder / "README.md"
    if "README.md" not in uploaded:
        return [*problems, f"{readme}: missing; a Space needs a card with 'sdk: gradio'"]
    try:
        data = SpaceCard.load(readme).data.to_dict()
    except Exception as e:  # noqa: BLE001 - yaml and huggingface_hub raise several types
        return [*problems, f"{readme}: card YAML does not parse: {e}"]
    if data.get("sdk") != "gradio":
        problems.append(f"{readme}: card YAML says sdk {data.get('sdk')!r}, expected 'gradio'")
    app_file = data.get("app_file") or "app.py"
    if app_file not in uploaded:
        problems.append(f"{folder}: no {app_file} (the card's app_file) for the Gradio Space")
    return problems


def add_publish_metric_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", required=True, help="Space repo, ORG/splice_metric")
    parser.add_argument(
        "--metric-dir", type=Path, default=None, help="metric folder (default: splice_metric/)"
    )
    parser.add_argument("--private", action="store_true", help="create the Space as private")
    parser.add_argument("--dry-run", action="store_true", help="list files; send nothing")


def publish_metric(
    repo_id: str,
    metric_dir: Path | None = None,
    *,
    private: bool = False,
    dry_run: bool = False,
    out: TextIO | None = None,
) -> int:
    """Check the metric folder and (unless ``dry_run``) upload it as a Gradio Space."""
    out = out or sys.stdout
    _check_repo_id(repo_id)
    folder = Path(metric_dir) if metric_dir is not None else default_metric_dir()
    files = plan_upload(folder, METRIC_ALLOW_PATTERNS, METRIC_IGNORE_PATTERNS)
    problems = check_metric_folder(folder, repo_id, files)
    header = f"splice publish-metric: {folder} cannot become a working Space:"
    stop = _check_before_sending(problems, header, f"spaces/{repo_id}", files, dry_run, out)
    if stop is not None:
        return stop
    api = _api()
    with _hub_errors(f"spaces/{repo_id}"):
        api.create_repo(
            repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True
        )
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="space",
            allow_patterns=METRIC_ALLOW_PATTERNS,
            ignore_patterns=METRIC_IGNORE_PATTERNS,
            commit_message="Upload the SPLICE metric",
        )
    print(f"uploaded {len(files)} files to {getattr(info, 'commit_url', repo_id)}", file=out)
    return 0


def _errors_to(out: TextIO) -> TextIO:
    """Refusals go to stderr on the console, or to the caller's stream when one is given."""
    return sys.stderr if out is sys.stdout else out


def _refuse(header: str, problems: list, err: TextIO) -> int:
    print(header, file=err)
    for problem in problems:
        print(f"  {problem}", file=err)
    return 1


def _check_before_sending(
    problems: list[str],
    header: str,
    target: str,
    files: list[UploadFile],
    dry_run: bool,
    out: TextIO,
) -> int | None:
    """Shared by both uploads: list the plan on a dry run, refuse on any problem; None
    means go ahead and send."""
    err = _errors_to(out)
    if dry_run:
        print(f"would upload to {target}", file=out)
        print_plan(files, out)
    if problems:
        return _refuse(header, problems, err)
    if dry_run:
        print("dry run: all checks passed, nothing sent", file=out)
        return 0
    return None


def run_publish_metric(args: argparse.Namespace) -> int:
    try:
        return publish_metric(
            args.repo_id, args.metric_dir, private=args.private, dry_run=args.dry_run
        )
    except PermissionError as e:  # no token
        raise UserError(str(e)) from None


def _check_repo_id(repo_id: str) -> None:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--repo-id {repo_id!r}: expected ORG/NAME")
