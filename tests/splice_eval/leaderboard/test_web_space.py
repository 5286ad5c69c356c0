"""Hosting a board: ``push`` uploads it through ``HfApi`` (replaced, as in the publish tests,
by a recorder that copies what the real one would send into a local "remote" folder), the
Space folder ``space`` writes is served from its own venv (``make board-space-venv``: the
Space's requirements.txt, as the Hub installs it) reading that pushed copy, and the Space's
form opens a pull request (``create_commit(create_pr=True)``, recorded) whose files a
maintainer adds to the board."""

from __future__ import annotations

import configparser
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS

from splice_build.cli import main
from splice_build.errors import UserError
from splice_build.remote import publish
from splice_eval.leaderboard.table import board_rows, load_board
from splice_eval.leaderboard.web import push, space, submit
from splice_eval.leaderboard.web.page import GRADIO_VERSION
from tests.support.paths import REPO
from tests.support.side_venvs import side_venv_python
from tests.support.web_board import INJECTION, answers_file, make_board

SECRET = "hf_TESTsecretTOKENvalue0123456789abcdef"
REPO_ID = "org/splice-board"


class Hub:
    """Records every HfApi construction and call; ``upload_folder`` copies the files it
    would send (huggingface_hub's own pattern filter) into ``remote``, ``create_commit``
    keeps each operation's bytes."""

    def __init__(self, remote: Path):
        self.remote = remote
        self.calls: list[tuple[str, tuple, dict]] = []

    def api_class(self):
        hub = self

        class RecordingHfApi:
            def __init__(self, *args, **kwargs):
                hub.calls.append(("HfApi", args, kwargs))

            def create_repo(self, *args, **kwargs):
                hub.calls.append(("create_repo", args, kwargs))

            def upload_folder(self, **kwargs):
                hub.calls.append(("upload_folder", (), kwargs))
                folder = Path(kwargs["folder_path"])
                rels = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
                ignore = [*kwargs.get("ignore_patterns", []), *DEFAULT_IGNORE_PATTERNS]
                allow = kwargs.get("allow_patterns")
                for rel in filter_repo_objects(rels, allow_patterns=allow, ignore_patterns=ignore):
                    (hub.remote / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(folder / rel, hub.remote / rel)
                return SimpleNamespace(commit_url=f"https://huggingface.co/datasets/{REPO_ID}")

            def create_commit(self, **kwargs):
                ops = [(op.path_in_repo, op.path_or_fileobj) for op in kwargs["operations"]]
                hub.calls.append(("create_commit", (), {**kwargs, "operations": ops}))
                return SimpleNamespace(
                    pr_url=f"https://huggingface.co/datasets/{REPO_ID}/discussions/1"
                )

        return RecordingHfApi


@pytest.fixture(scope="module")
def board(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_board(demo_build, tmp_path_factory.mktemp("web-board"))


@pytest.fixture(scope="module")
def pushed(board: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Hub]:
    """The board as ``push`` sent it: (the remote copy, the recorder)."""
    root = tmp_path_factory.mktemp("hub")
    hub = Hub(root / "remote")
    (board / "notes.txt").write_text("local only")  # not the board's: never sent
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(publish, "HfApi", hub.api_class())
        mp.setenv("HF_TOKEN", SECRET)
        mp.setattr(hf_constants, "HF_TOKEN_PATH", str(root / "no-saved-token"))
        push = ["leaderboard", "push", "--board", str(board), "--repo", REPO_ID]
        assert main([*push, "--allow-stand-in"]) == 0  # the demo's build is a stand-in
    return hub.remote, hub


def test_push_sends_the_board_and_it_reads_back_the_same(board, pushed):
    remote, hub = pushed
    names = [c[0] for c in hub.calls]
    assert names == ["HfApi", "create_repo", "upload_folder"]
    assert hub.calls[0][2] == {"token": SECRET}
    assert hub.calls[1][2] == {"repo_type": "dataset", "private": False, "exist_ok": True}
    assert hub.calls[2][2]["repo_type"] == "dataset"
    sent = sorted(p.relative_to(remote).as_posix() for p in remote.rglob("*") if p.is_file())
    assert "board.yaml" in sent and "index.json" in sent
    assert not any(s.startswith(".") or "/." in s or s == "notes.txt" for s in sent)
    assert any(s.endswith("/score.json") for s in sent)
    assert any("/predictions" in s for s in sent)
    assert board_rows(load_board(remote)) == board_rows(load_board(board))


def test_push_refuses_a_folder_that_is_no_board(tmp_path, capsys):
    with pytest.raises(UserError, match="no board.yaml"):
        push.push_board(tmp_path, REPO_ID)
    with pytest.raises(UserError, match="ORG/NAME"):
        push.push_board(tmp_path, "no-org")


# --- the Space ------------------------------------------------------------------------


def test_space_folder_is_generated_from_the_source(tmp_path):
    out = space.write_space(REPO_ID, tmp_path / "space")
    header = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert (header["sdk"], header["sdk_version"], header["app_file"]) == (
        "gradio",
        GRADIO_VERSION,
        "app.py",
    )
    wanted = (out / "requirements.txt").read_text().splitlines()
    assert f"gradio=={GRADIO_VERSION}" in wanted
    assert (out / "requirements.txt").read_text() == space.REQUIREMENTS.read_text()
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")  # the page runs here with the Space's Gradio
    assert f"gradio=={GRADIO_VERSION}" in cfg["options.extras_require"]["leaderboard"].split()
    for name in space.VENDORED:
        module = __import__(name, fromlist=["_"])
        source = Path(module.__file__)
        rel = Path(*name.split("."))
        target = out / (
            rel / "__init__.py" if source.name == "__init__.py" else rel.with_suffix(".py")
        )
        first, second, body = target.read_text().split("\n", 2)
        assert first.startswith("# GENERATED by `splice leaderboard space`") and name in first
        assert body == source.read_text(), name  # the source itself, after the header
    assert 'main("org/splice-board")' in (out / "app.py").read_text()
    with pytest.raises(UserError, match="not an empty folder"):
        space.write_space(REPO_ID, out)
    with pytest.raises(UserError, match="ORG/NAME"):
        space.write_space("../x", tmp_path / "other")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_space_serves_the_pushed_board_from_its_own_venv(pushed, tmp_path):
    python = side_venv_python(
        ".venv-board-space", "SPLICE_BOARD_SPACE_PYTHON", "SPLICE_REQUIRE_BOARD_SPACE",
        "board-space-venv", "gradio, matplotlib, yaml, huggingface_hub",
    )  # fmt: skip
    remote, _ = pushed
    out = space.write_space(REPO_ID, tmp_path / "space")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("SPLICE_")}
    env |= {"GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home"),
            "GRADIO_TEMP_DIR": str(tmp_path / "cache"),
            "SPLICE_BOARD_DIR": str(remote)}  # fmt: skip
    where = subprocess.run(
        [str(python), "-c", "import splice_eval.leaderboard.table as m; print(m.__file__)"],
        cwd=out, env=env, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(out)  # the Space's copy, not this clone
    log = (tmp_path / "app.log").open("w")
    server = subprocess.Popen([str(python), "app.py"], cwd=out, env=env, stdout=log,
                              stderr=subprocess.STDOUT)  # fmt: skip
    try:
        config = None
        deadline = time.monotonic() + 300  # generous: gradio's import alone takes a while
        while config is None:
            assert server.poll() is None, (tmp_path / "app.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "app.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=10) as r:
                    config = json.loads(r.read())
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
    finally:
        server.kill()
        server.wait(timeout=60)
        log.close()
    by_id = {c["props"].get("elem_id"): c["props"] for c in config["components"]}
    rows = board_rows(load_board(remote))
    table = by_id["board-table"]["value"]
    assert len(table["data"]) == len(rows)
    assert INJECTION in [row[table["headers"].index("model")] for row in table["data"]]
    assert "paired bootstrap" in by_id["ranking-method"]["value"]
    assert "Stale" not in by_id["board-header"]["value"]  # written with this checkout's metric
    assert {"submit-name", "submit-file", "submit-meta", "submit-button"} <= set(by_id)


# --- the submission form ------------------------------------------------------------------


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Hub:
    recorder = Hub(tmp_path / "remote")
    monkeypatch.setattr(submit, "HfApi", recorder.api_class())
    monkeypatch.setenv(submit.TOKEN_ENV, SECRET)
    return recorder


def test_the_form_opens_a_pull_request_a_maintainer_adds(hub, board, demo_build, tmp_path):
    pred = answers_file(demo_build, tmp_path / "upload.jsonl", "org/new-3b", 0.6, {})
    meta = "params_b: 3\nweights: open\nsubmitter: carol\n"
    name = "New 3B `x` $(rm -rf /) ../../etc"
    shown = submit.submit(REPO_ID, name, str(pred), meta)
    assert shown.startswith("**Submitted:**"), shown
    [(call, _, kwargs)] = [c for c in hub.calls if c[0] == "create_commit"]
    assert (kwargs["repo_id"], kwargs["repo_type"], kwargs["create_pr"]) == (
        REPO_ID,
        "dataset",
        True,
    )
    files = dict(kwargs["operations"])
    folders = {Path(p).parent for p in files}
    assert len(folders) == 1 and folders.pop().parent == Path(submit.SUBMISSIONS)
    assert all(".." not in Path(p).parts for p in files)
    [pred_path] = [p for p in files if Path(p).name == "predictions.jsonl"]
    assert files[pred_path] == pred.read_bytes()

    # the maintainer: the PR's files into a copy of the board, with the command it names
    local = Path(shutil.copytree(board, tmp_path / "board"))
    for path, data in files.items():
        (tmp_path / "pr" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pr" / path).write_bytes(data)
    meta_path = next(p for p in files if p.endswith("meta.yaml"))
    argv = ["leaderboard", "add", str(tmp_path / "pr" / pred_path), "--board", str(local),
            "--meta", str(tmp_path / "pr" / meta_path), "--name", name]  # fmt: skip
    assert main(argv) == 0
    assert "'New 3B `x` $(rm -rf /) ../../etc'" in kwargs["commit_description"]  # quoted
    added = [r for r in board_rows(load_board(local)) if r["name"] == name]
    assert added and added[0]["params_b"] == 3 and added[0]["submitter"] == "carol"


def test_the_form_refuses_with_one_line_and_sends_nothing(hub, demo_build, tmp_path, monkeypatch):
    pred = answers_file(demo_build, tmp_path / "upload.jsonl", "org/m", 0.5, {})
    cases = [
        (("", str(pred), ""), "name: give"),
        (("m", None, ""), "prediction file: choose"),
        (("m", str(pred.rename(tmp_path / "p.py")), ""), "expected one of"),
        (("m", str(tmp_path / "p.py"), ""), "expected one of"),
    ]
    good = answers_file(demo_build, tmp_path / "good.jsonl", "org/m", 0.5, {})
    cases += [
        (("m", str(good), "script: rm -rf /\n"), "unknown key 'script'"),
        (("m", str(good), "weights: [1\n"), "meta.yaml: not YAML"),
    ]
    for args, expected in cases:
        shown = submit.submit(REPO_ID, *args)
        assert shown.startswith("**Not submitted:**") and expected in shown.replace("\\", ""), shown
    monkeypatch.setattr(submit, "SUBMISSION_MAX", 10)
    assert "more than the 10 allowed" in submit.submit(REPO_ID, "m", str(good), "")
    monkeypatch.undo()
    monkeypatch.setattr(submit, "HfApi", hub.api_class())
    monkeypatch.delenv(submit.TOKEN_ENV, raising=False)
    assert "no HF\\_TOKEN secret" in submit.submit(REPO_ID, "m", str(good), "")
    assert not [c for c in hub.calls if c[0] == "create_commit"]
