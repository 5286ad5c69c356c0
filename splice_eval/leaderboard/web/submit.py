"""The Space's submission form: a model team uploads a prediction file (and its meta.yaml),
and the form opens a pull request on the board's dataset repository holding them, for a
maintainer to review and ``splice leaderboard add``. Nothing is scored or run here: the
file is data, bounded in size, kept under a folder name made from the entry's name
(``store.slug_of``: no path a submitter writes ever names the folder), and its meta text
is held to the known keys (``meta.checked``) before anything is sent.

The pull request goes through ``HfApi.create_commit(create_pr=True)`` with the Space's
``HF_TOKEN`` secret; ``HfApi`` here is the seam the tests replace, as the publish tests
replace publish's.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from huggingface_hub import CommitOperationAdd, HfApi

from splice_build.errors import UserError

from .. import meta as meta_rules
from .. import store
from . import text

SUBMISSIONS = "submissions"  # the folder pull requests add to, beside the board's entries/
SUBMISSION_MAX = 64 * 1024 * 1024  # bytes of one uploaded prediction file (the form's cap)
# What `splice score` (and so `add`) reads: splice run / lmms-eval JSONL, VLMEvalKit tables.
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".xlsx")
NAME_MAX = 120
TOKEN_ENV = "HF_TOKEN"


@dataclass(frozen=True)
class PullRequest:
    """What a submission becomes: the files it adds and the words a maintainer reads."""

    folder: str
    files: tuple[tuple[str, bytes], ...]  # (path in repo, content)
    title: str
    description: str


def prepare(
    name: str, predictions: str | os.PathLike | None, meta_text: str, now: datetime | None = None
) -> PullRequest:
    """A submission checked and laid out; UserError naming the field when refused."""
    name = " ".join(str(name or "").split())
    if not name:
        raise UserError("name: give the entry's name (a model name)")
    if len(name) > NAME_MAX:
        raise UserError(f"name: at most {NAME_MAX} characters")
    if not predictions:
        raise UserError("prediction file: choose the file to submit")
    path = Path(predictions)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"prediction file: expected one of {', '.join(SUFFIXES)}")
    size = path.stat().st_size
    if size > SUBMISSION_MAX:
        raise UserError(f"prediction file: {size} bytes, more than the {SUBMISSION_MAX} allowed")
    if size == 0:
        raise UserError("prediction file: empty")
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    folder = f"{SUBMISSIONS}/{store.slug_of(name)}-{stamp}"
    files = [(f"{folder}/predictions{suffix}", path.read_bytes())]
    if meta_text.strip():
        files.append((f"{folder}/{store.META_FILE}", _checked_meta(meta_text).encode("utf-8")))
    return PullRequest(folder, tuple(files), f"Submission: {name}", _description(name, files))


def _checked_meta(meta_text: str) -> str:
    import yaml  # noqa: PLC0415

    if len(meta_text.encode("utf-8")) > meta_rules.META_MAX:
        raise UserError(f"meta.yaml: more than the {meta_rules.META_MAX} bytes allowed")
    try:
        data = yaml.safe_load(meta_text)
    except yaml.YAMLError as exc:
        raise UserError(f"meta.yaml: not YAML ({' '.join(str(exc).split())[:200]})") from None
    meta_rules.checked(data, "meta.yaml")
    return meta_text


def _description(name: str, files: list[tuple[str, bytes]]) -> str:
    """The pull request's text: the command a maintainer runs once the files look right.
    The name is shell-quoted and fenced (a fence longer than any backtick run in it), so
    neither a shell nor the Hub's Markdown reads it as anything but text."""
    paths = [p for p, _ in files]
    command = ["splice", "leaderboard", "add", paths[0], "--board", "BOARD", "--name", name]
    if len(paths) > 1:
        command += ["--meta", paths[1]]
    line = " ".join(shlex.quote(part) for part in command)
    fence = "`" * max(3, _longest_run(line, "`") + 1)
    return (
        "A submission made with the leaderboard Space's form. A maintainer reviews the files, "
        "then adds the entry to a local copy of the board (it is re-scored there; nothing "
        "submitted is taken as a score) and pushes the board:\n\n"
        f"{fence}\n{line}\n{fence}\n"
    )


def _longest_run(s: str, ch: str) -> int:
    best = run = 0
    for c in s:
        run = run + 1 if c == ch else 0
        best = max(best, run)
    return best


def open_pull_request(repo_id: str, pr: PullRequest, token: str | None) -> str:
    """The pull request's address; UserError when the Space cannot open one."""
    if not token:
        raise UserError(
            f"submissions are closed here: this Space has no {TOKEN_ENV} secret to open a "
            f"pull request on {repo_id}"
        )
    api = HfApi(token=token)
    operations = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=b) for p, b in pr.files]
    try:
        info = api.create_commit(
            repo_id=repo_id,
            repo_type="dataset",
            operations=operations,
            commit_message=pr.title[:200],
            commit_description=pr.description,
            create_pr=True,
        )
    except Exception as exc:  # noqa: BLE001 - the Hub's many errors, said in one line
        raise UserError(f"the pull request on {repo_id} failed: {type(exc).__name__}") from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", "") or repo_id)


def submit(repo_id: str, name: str, predictions: Any, meta_text: str) -> str:
    """What the form shows after a click: the pull request, or why not (escaped)."""
    try:
        pr = prepare(name, _path_of(predictions), meta_text or "")
        url = open_pull_request(repo_id, pr, os.environ.get(TOKEN_ENV))
    except UserError as exc:
        return f"**Not submitted:** {text.md(exc)}"
    return f"**Submitted:** pull request {text.md(url)} holds `{text.plain(pr.folder)}`."


def _path_of(upload: Any) -> str | None:
    if upload is None:
        return None
    return str(getattr(upload, "name", upload))


def form(repo_id: str):
    """The Submit tab's widgets, given to ``page.build_page(submit_tab=...)``."""

    def build(gr: Any) -> None:
        gr.Markdown(
            "Submit a prediction file (what `splice run`, lmms-eval or VLMEvalKit wrote) and "
            "its `meta.yaml`. It is not scored here: the form opens a pull request on the "
            f"board's repository `{text.plain(repo_id)}`, and a maintainer adds it, where it "
            f"is re-scored. Files up to {SUBMISSION_MAX // 2**20} MB: "
            f"{', '.join(SUFFIXES)}.",
            latex_delimiters=[],
        )
        name = gr.Textbox(label="entry name", max_length=NAME_MAX, elem_id="submit-name")
        upload = gr.File(label="prediction file", file_types=list(SUFFIXES),
                         elem_id="submit-file")  # fmt: skip
        meta = gr.Textbox(label="meta.yaml (optional)", lines=8, elem_id="submit-meta",
                          max_length=meta_rules.META_MAX)  # fmt: skip
        button = gr.Button("Open a pull request", variant="primary", elem_id="submit-button")
        status = gr.Markdown(elem_id="submit-status", latex_delimiters=[])
        button.click(
            lambda n, f, m: submit(repo_id, n, f, m), [name, upload, meta], [status],
            api_visibility="private", queue=True,
        )  # fmt: skip

    return build
