"""``splice publish`` / ``publish-metric``: checks before sending, exact HfApi calls, the
uploaded folder loads back, and the token never shows.

The Hub is out of reach here, so ``HfApi`` (and only it) is replaced by a recording
stand-in whose ``upload_folder`` copies the files the real one would send (selected with
huggingface_hub's own ``filter_repo_objects`` and default ignore patterns) into a local
"remote" folder; that copy is what ``load_dataset`` and ``evaluate.load`` read back.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from types import SimpleNamespace

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils._paths import DEFAULT_IGNORE_PATTERNS

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_build.remote import publish
from splice_build.remote.publish import publish_dataset, publish_metric
from splice_build.remote.upload_plan import (
    COMMON_IGNORE_PATTERNS,
    METRIC_ALLOW_PATTERNS,
    METRIC_IGNORE_PATTERNS,
    HubLimits,
    check_card,
    check_limits,
    plan_upload,
)
from tests.support.paths import REPO

SECRET = "hf_TESTsecretTOKENvalue0123456789abcdef"
CODE_URL = "https://github.com/someone/splice-benchmark"
CODE = ["--code-url", CODE_URL]  # the card's code placeholder, filled (else refused)
GOOD_CARD = """---
configs:
- config_name: video_text
  default: true
  data_files:
  - split: test
    path: video_text/test-*.parquet
- config_name: text
  data_files:
  - split: test
    path: text/test-*.parquet
---
# card
"""


# --- the recording stand-in for HfApi ----------------------------------------------------


class Hub:
    """Records every HfApi construction and call; upload_folder copies what it would send."""

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
                return f"https://huggingface.co/{args[0]}"

            def create_branch(self, *args, **kwargs):
                hub.calls.append(("create_branch", args, kwargs))

            def upload_folder(self, *args, **kwargs):
                hub.calls.append(("upload_folder", args, kwargs))
                folder = Path(kwargs["folder_path"])
                rels = sorted(
                    p.relative_to(folder).as_posix() for p in folder.glob("**/*") if p.is_file()
                )
                sent = filter_repo_objects(
                    rels,
                    allow_patterns=kwargs.get("allow_patterns"),
                    ignore_patterns=[
                        *(kwargs.get("ignore_patterns") or []),
                        *DEFAULT_IGNORE_PATTERNS,
                    ],
                )
                target = hub.repo_folder(kwargs["repo_id"], kwargs.get("revision"))
                for rel in sent:
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(folder / rel, target / rel)
                return SimpleNamespace(commit_url=f"https://huggingface.co/{kwargs['repo_id']}")

            def upload_file(self, *args, **kwargs):
                hub.calls.append(("upload_file", args, kwargs))
                target = hub.repo_folder(kwargs["repo_id"], kwargs.get("revision"))
                path = target / kwargs["path_in_repo"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(kwargs["path_or_fileobj"])
                return SimpleNamespace(commit_url=f"https://huggingface.co/{kwargs['repo_id']}")

        return RecordingHfApi

    def repo_folder(self, repo_id: str, revision: str | None = None) -> Path:
        # Named like the repo, as a Hub clone would be (evaluate.load needs NAME/NAME.py).
        return self.remote / (revision or "main") / repo_id

    def sent_card(self, repo_id: str, revision: str | None = None) -> bytes:
        return (self.repo_folder(repo_id, revision) / "README.md").read_bytes()

    def sent_files(self, repo_id: str, revision: str | None = None) -> list[str]:
        root = self.repo_folder(repo_id, revision)
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Hub:
    recorder = Hub(tmp_path / "remote")
    monkeypatch.setattr(publish, "HfApi", recorder.api_class())
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(tmp_path / "no-saved-token"))
    return recorder


@pytest.fixture
def build_copy(demo_build: Path, tmp_path: Path) -> Path:
    """A copy of the demo build the test may change."""
    return Path(shutil.copytree(demo_build, tmp_path / "splice"))


# --- planning and the Hub's limits, on folders made to break them ------------------------


def _touch(path: Path, data: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_plan_uploads_the_layout_and_leaves_strays(tmp_path: Path) -> None:
    for rel in [
        "README.md",
        "build_report.json",
        "build_report.txt",
        "video_text/test-00000-of-00001.parquet",
        "video/test-00000-of-00001.parquet",
        "text/test-00000-of-00001.parquet",
        "webdataset/test-000000.tar",
        "notes.txt",
        "data/test-00000-of-00001.parquet",
        "video_text/.tmp-test-00000.parquet",
        "video_text/sub/test-x.csv",
        ".cache/huggingface/upload/x.lock",
        "__pycache__/x.pyc",
    ]:
        _touch(tmp_path / rel, b"x" * len(rel))
    plan = plan_upload(tmp_path)
    assert [f.path_in_repo for f in plan] == [
        "README.md",
        "build_report.json",
        "build_report.txt",
        "text/test-00000-of-00001.parquet",
        "video/test-00000-of-00001.parquet",
        "video_text/test-00000-of-00001.parquet",
        "webdataset/test-000000.tar",
    ]
    assert all(f.size == len(f.path_in_repo) for f in plan)


def test_more_than_10000_entries_in_a_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "webdataset"
    folder.mkdir()
    for i in range(10_000):
        (folder / f"test-{i:06d}.tar").touch()
    assert check_limits(tmp_path, plan_upload(tmp_path)) == []  # 10,000 is allowed
    (folder / "test-010000.tar").touch()
    (problem,) = check_limits(tmp_path, plan_upload(tmp_path))
    assert problem.startswith("webdataset/: 10001 entries") and "10000" in problem


def test_oversized_shard_is_refused(tmp_path: Path) -> None:
    limit = HubLimits().max_file_bytes
    shard = tmp_path / "webdataset" / "test-000000.tar"
    shard.parent.mkdir()
    with open(shard, "wb") as f:  # sparse: takes no disk space
        f.truncate(limit + 1)
    (problem,) = check_limits(tmp_path, plan_upload(tmp_path))
    assert problem.startswith("webdataset/test-000000.tar:") and "per-file limit" in problem
    with open(shard, "wb") as f:
        f.truncate(limit)
    assert check_limits(tmp_path, plan_upload(tmp_path)) == []


def test_row_group_too_big_for_the_viewer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "video_text" / "test-00000-of-00001.parquet"
    path.parent.mkdir()
    table = pa.table({"x": pa.array([b"\x01" * 4_000] * 4)})
    pq.write_table(table, path, row_group_size=2)
    limits = HubLimits(max_row_group_bytes=4_000)
    problems = check_limits(tmp_path, plan_upload(tmp_path), limits)
    assert len(problems) == 2
    assert all(p.startswith(f"video_text/{path.name}: row group") for p in problems)
    assert check_limits(tmp_path, plan_upload(tmp_path), HubLimits(max_row_group_bytes=10**6)) == []
    path.write_bytes(b"not parquet")
    (problem,) = check_limits(tmp_path, plan_upload(tmp_path))
    assert "not a readable Parquet file" in problem


def _card_folder(tmp_path: Path, card: str) -> Path:
    _touch(tmp_path / "README.md", card.encode())
    _touch(tmp_path / "video_text" / "test-00000-of-00001.parquet")
    _touch(tmp_path / "text" / "test-00000-of-00001.parquet")
    return tmp_path


def test_good_card_passes(tmp_path: Path) -> None:
    folder = _card_folder(tmp_path, GOOD_CARD)
    assert check_card(folder, plan_upload(folder)) == []


@pytest.mark.parametrize(
    ("card", "expected"),
    [
        ("---\nconfigs: [\n---\n", "card YAML does not parse"),
        ("---\n- a\n- b\n---\n", "card YAML does not parse"),
        ("# no YAML at all\n", "no 'configs:' list"),
        ("---\nlicense: mit\n---\n", "no 'configs:' list"),
        (GOOD_CARD.replace("text/test-*", "text/train-*"), "'text/train-*.parquet' matches no"),
        (GOOD_CARD.replace("video_text/test-*", "video_text/*/test-*"), "matches no uploaded file"),
        (GOOD_CARD.replace("path: text/test-*.parquet", "path: notes.txt"), "'notes.txt'"),
        (GOOD_CARD.replace("  default: true\n", ""), "exactly one config must be the default"),
        (GOOD_CARD.replace("config_name: text", "config_name: video_text"), "declared 2 times"),
        (GOOD_CARD.replace("- config_name: text", "- data_files: x"), "configs[1] has no"),
        (
            GOOD_CARD.replace("- split: test\n    path: text/", "- path: text/"),
            "config 'text': Invalid format for data_files entry",
        ),
    ],
)
def test_broken_cards_are_refused(tmp_path: Path, card: str, expected: str) -> None:
    folder = _card_folder(tmp_path, card)
    _touch(folder / "notes.txt")  # exists locally but is not uploaded
    problems = check_card(folder, plan_upload(folder))
    assert problems, card
    assert any(expected in p for p in problems), problems
    assert all(str(folder / "README.md") in p for p in problems)


def test_missing_card_is_refused(tmp_path: Path) -> None:
    _touch(tmp_path / "video_text" / "test-00000-of-00001.parquet")
    (problem,) = check_card(tmp_path, plan_upload(tmp_path))
    assert "README.md: missing" in problem


# --- the demo build: dry run, exact calls, load back, refusal -----------------------------


def test_dry_run_lists_files_with_sizes_and_sends_nothing(
    build_copy: Path, hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    code = splice_main(
        [
            "publish",
            str(build_copy),
            "--allow-stand-in",
            *CODE,
            "--repo-id",
            "org/splice",
            "--dry-run",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert hub.calls == []
    plan = plan_upload(build_copy)
    assert {f.path_in_repo for f in plan} >= {"README.md", "build_report.json", "build_report.txt"}
    for f in plan:
        assert f"{f.size:>15,d}  {f.path_in_repo}" in out
    assert f"{len(plan)} files" in out and "nothing sent" in out
    # issue 41 wall 2: the dry run shows the real ids the upload writes into the card
    for line in (
        "README.md: https://github.com/ORG/splice-benchmark -> " + CODE_URL + " (1)",
        "README.md: ORG/splice_metric -> org/splice_metric (1)",
        "README.md: ORG/splice -> org/splice (",
    ):
        assert line in out, out


def test_a_card_still_naming_a_placeholder_is_refused(
    build_copy: Path, hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41 wall 2: the card's placeholders went up unchanged. Without the code's URL, or
    with an ``ORG/...`` id no option fills, nothing is sent, dry run or not."""
    argv = ["publish", str(build_copy), "--allow-stand-in", "--repo-id", "me/bench"]
    assert splice_main(argv) == 1
    err = capsys.readouterr().err
    assert "README.md: still names the placeholder https://github.com/ORG/splice-benchmark" in err
    assert "--code-url" in err
    card = build_copy / "README.md"
    card.write_text(card.read_text("utf-8") + "\nSee ORG/other-thing.\n", "utf-8")
    assert splice_main([*argv, *CODE, "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "still names the placeholder ORG/other-thing" in err and "ORG/splice" not in err
    assert hub.calls == []


def test_publish_calls_hfapi_exactly_and_the_upload_loads_back(
    build_copy: Path, hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    (build_copy / "scratch.txt").write_text("left behind")
    code = publish_dataset(
        build_copy,
        "org/splice",
        private=True,
        revision="v1",
        allow_stand_in=True,
        code_url=CODE_URL,
    )
    assert code == 0, capsys.readouterr()
    files = plan_upload(build_copy)
    assert hub.calls == [
        ("HfApi", (), {"token": SECRET}),
        (
            "create_repo",
            ("org/splice",),
            {"repo_type": "dataset", "private": True, "exist_ok": True},
        ),
        (
            "create_branch",
            ("org/splice",),
            {"branch": "v1", "repo_type": "dataset", "exist_ok": True},
        ),
        (
            "upload_folder",
            (),
            {
                "repo_id": "org/splice",
                "folder_path": str(build_copy),
                "repo_type": "dataset",
                "revision": "v1",
                "allow_patterns": [f.path_in_repo for f in files],
                "ignore_patterns": [*COMMON_IGNORE_PATTERNS, "README.md"],
                "commit_message": f"Upload SPLICE build ({len(files)} files)",
            },
        ),
        (  # the card last, with the real ids written in
            "upload_file",
            (),
            {
                "path_or_fileobj": hub.sent_card("org/splice", "v1"),
                "path_in_repo": "README.md",
                "repo_id": "org/splice",
                "repo_type": "dataset",
                "revision": "v1",
                "commit_message": f"Upload SPLICE build ({len(files)} files): README.md with "
                "the real ids",
            },
        ),
    ]
    # The card went up with the real ids (issue 41 wall 2); the folder's own is unchanged.
    sent = hub.sent_card("org/splice", "v1").decode("utf-8")
    assert 'load_dataset("org/splice", "video_text"' in sent and CODE_URL in sent
    assert 'evaluate.load("org/splice_metric")' in sent and "ORG/" not in sent
    assert 'load_dataset("ORG/splice", "video_text"' in (build_copy / "README.md").read_text()
    # What was sent is exactly what the dry run lists; the stray file stayed home.
    assert hub.sent_files("org/splice", "v1") == [f.path_in_repo for f in files]
    remote = hub.repo_folder("org/splice", "v1")
    local_text = pq.read_table(build_copy / schema.shard_dir("text"))
    assert set(datasets.get_dataset_config_names(str(remote))) == set(schema.WRITTEN_CONFIGS)
    assert datasets.get_dataset_default_config_name(str(remote)) == schema.DEFAULT_CONFIG
    for config in schema.CONFIGS:
        ds = datasets.load_dataset(str(remote), config, split=schema.SPLIT)
        assert ds.features == schema.features(config)
        assert ds.num_rows == local_text.num_rows
        assert list(ds[schema.VIDEO_ID]) == local_text.column(schema.VIDEO_ID).to_pylist()
    for config in schema.TEXT_QUESTION_CONFIGS:  # the questions the viewer pages, uploaded
        ds = datasets.load_dataset(str(remote), config, split=schema.SPLIT)
        local = datasets.load_dataset(str(build_copy), config, split=schema.SPLIT)
        assert ds.features == schema.features(config)
        assert ds.to_list() == local.to_list() and ds.num_rows > 0


def test_public_publish_without_revision(build_copy: Path, hub: Hub) -> None:
    assert publish_dataset(build_copy, "org/splice", allow_stand_in=True, code_url=CODE_URL) == 0
    names = [c[0] for c in hub.calls]
    assert names == ["HfApi", "create_repo", "upload_folder", "upload_file"]
    assert hub.calls[1][2]["private"] is False
    assert hub.calls[2][2]["revision"] is None


def test_folder_failing_validate_is_refused(
    build_copy: Path, hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    for shard in (build_copy / schema.shard_dir("text")).glob("*.parquet"):
        shard.unlink()
    code = splice_main(
        ["publish", str(build_copy), "--allow-stand-in", *CODE, "--repo-id", "org/splice"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "fails splice validate" in err and str(build_copy) in err
    assert hub.calls == []


def test_limits_are_checked_before_anything_is_sent(
    build_copy: Path, hub: Hub, capsys: pytest.CaptureFixture[str]
) -> None:
    root_entries = {f.path_in_repo.split("/")[0] for f in plan_upload(build_copy)}
    assert {"README.md", schema.shard_dir("video_text"), schema.shard_dir("text")} <= root_entries
    code = publish_dataset(
        build_copy,
        "org/splice",
        limits=HubLimits(max_entries_per_folder=len(root_entries) - 1),
        allow_stand_in=True,
        code_url=CODE_URL,
    )
    assert code == 1
    assert "./: " in capsys.readouterr().err
    assert hub.calls == []


def test_bad_repo_id_is_refused(build_copy: Path, hub: Hub, capsys) -> None:
    assert (
        splice_main(["publish", str(build_copy), "--allow-stand-in", *CODE, "--repo-id", "splice"])
        == 2
    )
    assert "expected ORG/NAME" in capsys.readouterr().err
    assert hub.calls == []


# --- the token ------------------------------------------------------------------------------


def test_token_never_printed_or_logged(
    build_copy: Path,
    hub: Hub,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    assert (
        splice_main(
            [
                "publish",
                str(build_copy),
                "--allow-stand-in",
                *CODE,
                "--repo-id",
                "org/s",
                "--dry-run",
            ]
        )
        == 0
    )
    assert (
        splice_main(
            [
                "publish",
                str(build_copy),
                "--allow-stand-in",
                *CODE,
                "--repo-id",
                "org/s",
                "--private",
            ]
        )
        == 0
    )
    assert (
        publish_dataset(
            build_copy,
            "org/s",
            limits=HubLimits(max_entries_per_folder=1),
            allow_stand_in=True,
            code_url=CODE_URL,
        )
        == 1
    )
    captured = capsys.readouterr()
    assert hub.calls[0] == ("HfApi", (), {"token": SECRET})  # it was used...
    for text in (captured.out, captured.err, caplog.text):
        assert SECRET not in text  # ...and never shown
        assert SECRET[3:15] not in text


def test_saved_login_token_is_used(
    build_copy: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    saved = _touch(tmp_path / "token", b"hf_savedLOGINtoken000000000000000000\n")
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(saved))
    assert publish_dataset(build_copy, "org/splice", allow_stand_in=True, code_url=CODE_URL) == 0
    assert hub.calls[0] == ("HfApi", (), {"token": "hf_savedLOGINtoken000000000000000000"})
    assert "savedLOGIN" not in "".join(capsys.readouterr())


def test_no_token_is_a_clear_error(
    build_copy: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    assert (
        splice_main(
            ["publish", str(build_copy), "--allow-stand-in", *CODE, "--repo-id", "org/splice"]
        )
        == 2
    )
    assert "no Hugging Face token found: set HF_TOKEN" in capsys.readouterr().err
    assert hub.calls == []


# --- the viewer: the clip shards as the Hub reads them ----------------------------------------


@pytest.mark.parametrize("config", schema.CLIP_CONFIGS)
def test_clip_shards_restore_list_of_video_and_bare_clip_names(
    demo_build: Path, config: str
) -> None:
    shards = sorted((demo_build / schema.shard_dir(config)).glob("*.parquet"))
    assert shards
    for shard in shards:
        restored = datasets.Features.from_arrow_schema(pq.read_schema(shard))
        assert restored[schema.CLIPS] == datasets.List(datasets.Video())
        assert restored == schema.features(config)
        table = pq.read_table(shard, columns=[schema.VIDEO_ID, schema.CLIPS])
        for row in table.to_pylist():
            names = [c["path"] for c in row[schema.CLIPS]]
            expected = [
                schema.clip_file_name(row[schema.VIDEO_ID], k) for k in range(1, len(names) + 1)
            ]
            assert names == expected
            assert all("/" not in n and "\\" not in n for n in names)
            assert all(c["bytes"] for c in row[schema.CLIPS])
    # Row groups and shards stay within what the viewer pages through.
    assert check_limits(demo_build, plan_upload(demo_build)) == []
    assert check_card(demo_build, plan_upload(demo_build)) == []


# --- the metric Space -----------------------------------------------------------------------

SPACE_CARD = """---
title: SPLICE metric
sdk: gradio
app_file: app.py
tags: [evaluate, metric]
---
# SPLICE metric
"""


def _metric_folder(tmp_path: Path, card: str = SPACE_CARD) -> Path:
    folder = tmp_path / "metric"
    _touch(folder / "splice_metric.py", b"# the metric\n")
    _touch(folder / "app.py", b"# the widget\n")
    _touch(folder / "README.md", card.encode())
    _touch(folder / "requirements.txt", b"evaluate\n")
    _touch(folder / "__init__.py")
    _touch(folder / "__pycache__" / "splice_metric.cpython-311.pyc", b"\0")
    _touch(folder / "notes.md", b"private notes")
    return folder


def test_publish_metric_calls_hfapi_exactly(tmp_path: Path, hub: Hub, capsys) -> None:
    folder = _metric_folder(tmp_path)
    code = splice_main(
        ["publish-metric", "--repo-id", "org/splice_metric", "--metric-dir", str(folder)]
    )
    assert code == 0, capsys.readouterr()
    assert hub.calls == [
        ("HfApi", (), {"token": SECRET}),
        (
            "create_repo",
            ("org/splice_metric",),
            {"repo_type": "space", "space_sdk": "gradio", "private": False, "exist_ok": True},
        ),
        (
            "upload_folder",
            (),
            {
                "repo_id": "org/splice_metric",
                "folder_path": str(folder),
                "repo_type": "space",
                "revision": None,
                "allow_patterns": METRIC_ALLOW_PATTERNS,
                "ignore_patterns": METRIC_IGNORE_PATTERNS,
                "commit_message": "Upload the SPLICE metric",
            },
        ),
    ]
    assert hub.sent_files("org/splice_metric") == [
        "README.md",
        "app.py",
        "requirements.txt",
        "splice_metric.py",
    ]
    assert SECRET not in "".join(capsys.readouterr())


@pytest.mark.parametrize(
    ("repo_id", "change", "expected"),
    [
        ("org/other_metric", None, "no other_metric.py"),
        ("org/splice_metric", "sdk: gradio", "expected 'gradio'"),
        ("org/splice_metric", "app.py", "no app.py"),
        ("org/splice_metric", "README.md", "README.md: missing"),
        ("org/splice_metric", "splice_metric.py", "no splice_metric.py"),
    ],
)
def test_publish_metric_refuses_a_folder_that_cannot_work(
    tmp_path: Path, hub: Hub, capsys, repo_id: str, change: str | None, expected: str
) -> None:
    folder = _metric_folder(tmp_path)
    if change == "sdk: gradio":
        (folder / "README.md").write_text(SPACE_CARD.replace(change, "sdk: static"))
    elif change:
        (folder / change).unlink()
    code = publish_metric(repo_id, folder)
    assert code == 1
    assert expected in capsys.readouterr().err
    assert hub.calls == []


def test_metric_dry_run_lists_and_sends_nothing(tmp_path: Path, hub: Hub, capsys) -> None:
    folder = _metric_folder(tmp_path)
    assert publish_metric("org/splice_metric", folder, dry_run=True) == 0
    out = capsys.readouterr().out
    assert "splice_metric.py" in out and "__init__.py" not in out and "notes.md" not in out
    assert hub.calls == []


def test_real_metric_folder_uploads_as_a_loadable_space(hub: Hub, capsys) -> None:
    """The repo's own splice_metric/ passes the checks and, as uploaded, evaluate loads it."""
    import evaluate

    assert publish_metric("me/splice_metric") == 0, capsys.readouterr()
    remote = hub.repo_folder("me/splice_metric")
    metric = evaluate.load(str(remote))
    assert metric.name
    card = (remote / "README.md").read_text("utf-8")  # the metric's card names its real id
    assert 'evaluate.load("me/splice_metric", "pairwise")' in card and "ORG/" not in card


def test_publishing_md_lists_every_file_publish_uploads():
    """docs/publishing.md's upload list is the allow list publish applies (issue 30, wall
    11: it lacked text_pairwise/, text_choice/ and build_report.txt)."""
    from splice_build.remote.upload_plan import DATASET_ALLOW_PATTERNS

    doc = (REPO / "docs" / "publishing.md").read_text()
    listed = doc.split("## The metric")[0]
    missing = [p for p in DATASET_ALLOW_PATTERNS if f"`{p}`" not in listed]
    assert missing == [], f"publish uploads these, docs/publishing.md does not say so: {missing}"
