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
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from huggingface_hub import HfApi, SpaceCard, get_token

from splice_build.errors import UserError
from splice_build.output.card_reader import read_card
from splice_build.output.validate import validate_report
from splice_build.remote.hub_ids import (
    PLACEHOLDER_ORG,
    Filled,
    HubIds,
    fill_files,
    leftover_problems,
    print_filled,
    sibling,
)
from splice_build.remote.upload_plan import (
    COMMON_IGNORE_PATTERNS,
    DEFAULT_LIMITS,
    METRIC_ALLOW_PATTERNS,
    METRIC_IGNORE_PATTERNS,
    HubLimits,
    UploadFile,
    check_card,
    check_limits,
    plan_upload,
    print_plan,
)
from splice_build.running.report import REPORT_JSON, REPORT_TXT

# Where the errors of talking to the Hub come from: the HTTP clients huggingface_hub has
# used (requests, httpx and its httpx2 fork, urllib3 below them) and huggingface_hub's own.
_HUB_ERROR_MODULES = ("huggingface_hub", "httpx", "httpx2", "requests", "urllib3")


@contextlib.contextmanager
def hub_errors(target: str) -> Iterator[None]:
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


def hub_api() -> HfApi:
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
    parser.add_argument(
        "--metric-repo-id",
        default=None,
        help="the metric's Space, written into the card's examples (default: splice_metric "
        "beside --repo-id)",
    )
    add_code_url(parser)
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--revision", default=None, help="branch to upload to (created)")
    parser.add_argument(
        "--dry-run", action="store_true", help="list files and check limits; send nothing"
    )
    parser.add_argument(
        "--allow-stand-in",
        action="store_true",
        help="publish a build whose clips were cut from rendered stand-in videos (the "
        "demo's; its card says stand_in: true), refused otherwise",
    )


def publish_dataset(
    folder: Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    dry_run: bool = False,
    allow_stand_in: bool = False,
    limits: HubLimits = DEFAULT_LIMITS,
    out: TextIO | None = None,
    metric_repo_id: str | None = None,
    code_url: str | None = None,
) -> int:
    """Check ``folder`` and (unless ``dry_run``) upload it; 0 on success, 1 when refused.

    A stand-in build (the demo's rendered videos) would go up looking like SPLICE: it is a
    UserError unless ``allow_stand_in``, and even then the card says what it is."""
    out = out or sys.stdout
    err = _errors_to(out)
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    check_ids(repo_id, ("--metric-repo-id", metric_repo_id), code_url)
    if read_card(folder).stand_in:
        if not allow_stand_in:
            raise UserError(
                f"{folder} is a stand-in build: its clips were cut from rendered stand-in "
                "videos, not COIN's (its card says stand_in: true); pass --allow-stand-in "
                "to publish it anyway"
            )
        print(f"note: {folder} is a stand-in build (--allow-stand-in)", file=out)

    checked = validate_report(folder)
    if checked.problems:
        what = f"splice publish: refusing {folder}: it fails splice validate:"
        return _refuse(what, checked.problems, err)
    # exactly the files validation read and proved (and the build report, which says what
    # was kept and skipped, and is no data)
    proved = {*checked.files, REPORT_JSON, REPORT_TXT}
    files = [f for f in plan_upload(folder) if f.path_in_repo in proved]
    ids = HubIds(repo_id, metric_repo_id or sibling(repo_id, "splice_metric"), code_url)
    filled = fill_files(folder, files, ids)
    problems = check_limits(folder, files, limits) + check_card(folder, files)
    problems += leftover_problems(filled)
    target = f"datasets/{repo_id}" + (f"@{revision}" if revision else "")
    header = f"splice publish: {folder} cannot be uploaded as it is:"
    stop = check_before_sending(problems, header, target, files, dry_run, out, filled, ids)
    if stop is not None:
        return stop
    api = hub_api()
    with hub_errors(target):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision:
            api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
        info = _send(
            api,
            folder,
            repo_id,
            "dataset",
            revision,
            [f.path_in_repo for f in files],
            COMMON_IGNORE_PATTERNS,
            filled,
            f"Upload SPLICE build ({len(files)} files)",
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
            allow_stand_in=args.allow_stand_in,
            metric_repo_id=args.metric_repo_id,
            code_url=args.code_url,
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
        "--dataset-repo-id",
        default=None,
        help="the dataset, written into the metric card's examples (default: splice beside "
        "--repo-id)",
    )
    add_code_url(parser)
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
    dataset_repo_id: str | None = None,
    code_url: str | None = None,
) -> int:
    """Check the metric folder and (unless ``dry_run``) upload it as a Gradio Space."""
    out = out or sys.stdout
    check_ids(repo_id, ("--dataset-repo-id", dataset_repo_id), code_url)
    folder = Path(metric_dir) if metric_dir is not None else default_metric_dir()
    files = plan_upload(folder, METRIC_ALLOW_PATTERNS, METRIC_IGNORE_PATTERNS)
    ids = HubIds(dataset_repo_id or sibling(repo_id, "splice"), repo_id, code_url)
    filled = fill_files(folder, files, ids)
    problems = check_metric_folder(folder, repo_id, files) + leftover_problems(filled)
    header = f"splice publish-metric: {folder} cannot become a working Space:"
    target = f"spaces/{repo_id}"
    stop = check_before_sending(problems, header, target, files, dry_run, out, filled, ids)
    if stop is not None:
        return stop
    api = hub_api()
    with hub_errors(target):
        api.create_repo(
            repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True
        )
        info = _send(
            api,
            folder,
            repo_id,
            "space",
            None,
            METRIC_ALLOW_PATTERNS,
            METRIC_IGNORE_PATTERNS,
            filled,
            "Upload the SPLICE metric",
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


def check_before_sending(
    problems: list[str],
    header: str,
    target: str,
    files: list[UploadFile],
    dry_run: bool,
    out: TextIO,
    filled: list[Filled] | None = None,
    ids: HubIds | None = None,
) -> int | None:
    """Shared by both uploads: list the plan (and the ids written into it) on a dry run,
    refuse on any problem; None means go ahead and send."""
    err = _errors_to(out)
    if dry_run:
        print(f"would upload to {target}", file=out)
        print_plan(files, out)
        if filled:
            print("with the real ids written into what is sent:", file=out)
            print_filled(filled, ids, out)
    if problems:
        return _refuse(header, problems, err)
    if dry_run:
        print("dry run: all checks passed, nothing sent", file=out)
        return 0
    return None


def run_publish_metric(args: argparse.Namespace) -> int:
    try:
        return publish_metric(
            args.repo_id,
            args.metric_dir,
            private=args.private,
            dry_run=args.dry_run,
            dataset_repo_id=args.dataset_repo_id,
            code_url=args.code_url,
        )
    except PermissionError as e:  # no token
        raise UserError(str(e)) from None


def check_repo_id(repo_id: str, option: str = "--repo-id") -> None:
    """ORG/NAME, and not the docs' placeholder organisation: the cards name ``ORG/...``
    until an upload writes the real id in, so that id would be sent as it is."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--repo-id {repo_id!r}: expected ORG/NAME")
    if parts[0] == PLACEHOLDER_ORG:
        raise UserError(
            f"{option} {repo_id}: {PLACEHOLDER_ORG} is the docs' placeholder organisation; "
            f"give your own Hub user or organisation (e.g. your-name/{parts[1]})"
        )


def check_ids(repo_id: str, other: tuple[str, str | None], code_url: str | None) -> None:
    """Every id and URL an upload writes into its files, before anything is read."""
    check_repo_id(repo_id)
    if other[1] is not None:
        check_repo_id(other[1], other[0])
    if code_url is not None:
        check_code_url(code_url)


def check_code_url(url: str) -> None:
    """An http(s) URL with a host: the card links it as the code's repository."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UserError(
            f"--code-url {url}: not an http(s) URL (the code's public repository, e.g. "
            "https://github.com/you/splice)"
        )


def add_code_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--code-url",
        default=None,
        help="the SPLICE code's public repository, written into the card in place of its "
        "placeholder (a card naming it is refused without this)",
    )


def _send(
    api: HfApi,
    folder: Path,
    repo_id: str,
    repo_type: str,
    revision: str | None,
    allow: list[str],
    ignore: list[str],
    filled: list[Filled],
    message: str,
) -> object:
    """The folder's files, but the filled ones as filled (sent last, so a card with the
    real ids appears once the files it describes are there)."""
    rewritten = [f.path_in_repo for f in filled]
    info = api.upload_folder(
        repo_id=repo_id,
        folder_path=str(folder),
        repo_type=repo_type,
        revision=revision,
        allow_patterns=allow,
        ignore_patterns=[*ignore, *rewritten],
        commit_message=message,
    )
    for f in filled:
        info = api.upload_file(
            path_or_fileobj=f.data,
            path_in_repo=f.path_in_repo,
            repo_id=repo_id,
            repo_type=repo_type,
            revision=revision,
            commit_message=f"{message}: {f.path_in_repo} with the real ids",
        )
    return info
