"""The lmms-eval task folder: its YAML, its functions on the demo build, and its loading
by lmms-eval's own task registry.

lmms-eval cannot live in the project's venv (it pins PyAV < 16, which the project's video
code is not built against, and it needs torch), so the registry test runs
tests/support/lmms_probe.py with the Python of a separate venv made by ``make models-venv``
(``.venv-models``; or set ``SPLICE_LMMS_PYTHON``). The other tests need no lmms-eval.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import splice_dataset as schema
import splice_metric
from splice_build.cli import main as splice_main
from splice_build.cli import subcommand_parser
from splice_eval.builddata import iter_rows, read_meta
from splice_eval.run import prompts
from tests.support.lmms_tasks import (
    TASK_DIR,
    FunctionTag,
    TaskYamlLoader,
    docs,
    eval_dummy,
    lmms_env,
    load_task_yaml,
)
from tests.support.paths import SUPPORT

TASKS = {"splice_video": "video", "splice_video_text": "video_text", "splice_text": "text"}


# --- YAML ---------------------------------------------------------------------------------


def test_task_yaml_is_complete(utils):
    group = yaml.load((TASK_DIR / "splice.yaml").read_text(), Loader=TaskYamlLoader)
    aggregates = group.pop("aggregate_metric_list")  # the group's own row: every metric
    assert group == {"group": "splice", "task": list(TASKS)}
    assert [a["metric"] for a in aggregates] == list(splice_metric.RATES)
    assert all(a["weight_by_size"] is True for a in aggregates)
    for task, config in TASKS.items():
        cfg = load_task_yaml(TASK_DIR / f"{task}.yaml")
        assert cfg["task"] == task and cfg["dataset_name"] == config
        assert cfg["test_split"] == schema.SPLIT and cfg["output_type"] == "generate_until"
        for key in ("process_docs", "doc_to_visual", "doc_to_text", "doc_to_messages"):
            assert isinstance(cfg[key], FunctionTag), key
        # the answer is never cut at a blank line (lmms-eval's default `until`), and its
        # token limit is `splice run`'s, from the one constant
        generation = cfg["generation_kwargs"]
        assert generation["until"] == []
        assert generation["max_new_tokens"].name == "utils.MAX_NEW_TOKENS"
        assert utils.MAX_NEW_TOKENS == prompts.MAX_NEW_TOKENS == 1024
        run_parser, _ = subcommand_parser("run")
        assert run_parser.get_default("max_tokens") == prompts.MAX_NEW_TOKENS
        # lmms-eval reads metadata.version (a list made it record the version as "Yaml")
        assert cfg["metadata"] == {"version": 1.0}
        # the data: resolved by utils (absolute, $SPLICE_DATA), never a cwd-relative name
        assert cfg["dataset_path"].name == "utils.DATASET_PATH"
        # every other !function names a function of utils.py
        tags = [v for k, v in cfg.items() if isinstance(v, FunctionTag) and k != "dataset_path"]
        tags += [m["aggregation"] for m in cfg["metric_list"]]
        for tag in tags:
            module, name = tag.name.split(".")
            assert module == "utils" and callable(getattr(utils, name)), tag.name
        # one metric per metric of the SPLICE metric, aggregated by the metric
        names = [m["metric"] for m in cfg["metric_list"]]
        assert names == list(splice_metric.RATES)
        for m in cfg["metric_list"]:
            assert m["aggregation"].name == f"utils.aggregate_{m['metric']}"
            lower_better = m["metric"] in ("edit_distance", "invalid_rate", "unparsed_rate")
            assert m["higher_is_better"] is (not lower_better)


# --- functions on the demo build ---------------------------------------------------------------


def test_functions_on_demo_build(demo_build, utils, tmp_path, monkeypatch):
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(tmp_path / "clips"))
    for config in ("video", "video_text", "text"):
        rows = docs(demo_build, config, utils)
        assert rows
        raw = {r[schema.VIDEO_ID]: r.get(schema.CLIPS) for r in iter_rows(demo_build, config)}
        records = []
        for doc in rows:
            assert utils.config_of(doc) == config
            prompt = prompts.build_prompt(doc, config)
            text = utils.doc_to_text(doc, {"pre_prompt": "", "post_prompt": ""})
            assert text.startswith(prompt.text)
            for item in prompt.clips:
                assert item.heading in text
            if config == "video_text":
                assert all(c in text for c in doc[schema.CAPTIONS])
            visuals = utils.doc_to_visual(doc)
            if config == "text":
                assert visuals == []
            else:
                # process_docs wrote the clips once: the doc holds their paths, no bytes
                assert visuals == doc[schema.CLIPS]
                raw_clips = raw[doc[schema.VIDEO_ID]]
                assert len(visuals) == doc[schema.NUM_CLIPS] == len(raw_clips)
                for label, (path, clip) in enumerate(zip(visuals, raw_clips, strict=True), 1):
                    path = Path(path)
                    # keyed by the clip's content: <video id>/<its sha256>/<name>
                    assert path.parent.parent.parent == tmp_path / "clips"
                    assert path.parent.name == hashlib.sha256(clip["bytes"]).hexdigest()[:32]
                    assert path.name == schema.clip_file_name(doc[schema.VIDEO_ID], label)
                    assert path.read_bytes() == clip["bytes"]
                # a raw doc (clip bytes) gets the same files, reused as they are
                before = [Path(p).stat().st_mtime_ns for p in visuals]
                raw_doc = {**doc, schema.CLIPS: raw_clips}
                assert utils.doc_to_visual(raw_doc) == visuals
                assert [Path(p).stat().st_mtime_ns for p in visuals] == before
                messages = utils.doc_to_messages(doc)
                content = messages[0]["content"]
                assert content[0] == {"type": "text", "text": prompt.text}
                assert [c["url"] for c in content if c["type"] == "video"] == visuals
                # each heading on its own line, right before its clip: a chat template
                # joins the items as they are
                for k, item in enumerate(prompt.clips):
                    heading, clip = content[1 + 2 * k], content[2 + 2 * k]
                    assert heading == {"type": "text", "text": f"\n{item.heading}\n"}
                    assert clip == {"type": "video", "url": visuals[k]}
            target = utils.doc_to_target(doc)
            assert splice_metric.parse_order(target) == list(doc[schema.ANSWER]["order"])
            records.append(utils.process_results(doc, [target]))
        per_metric = {m: [r[m] for r in records] for m in splice_metric.RATES}
        assert utils.aggregate_binary_accuracy(per_metric["binary_accuracy"]) == 1.0
        assert utils.aggregate_invalid_rate(per_metric["invalid_rate"]) == 0.0
        assert utils.aggregate_edit_distance(per_metric["edit_distance"]) == 0.0


def test_process_results_parses_and_aggregates_with_the_metric(demo_build, utils):
    rows = docs(demo_build, "text", utils)
    answers = []
    for i, doc in enumerate(rows):
        order = list(doc[schema.ANSWER]["order"])
        if i == 0:
            answers.append("Sorry, I am unable to decide.")
        elif i == 1:
            answers.append("<order>" + ", ".join(f"Video {k}" for k in order[::-1]) + "</order>")
        else:
            answers.append(" -> ".join(f"Clip {k}" for k in order))  # a usual deviation
    records = [
        utils.process_results(d, [a])["binary_accuracy"] for d, a in zip(rows, answers, strict=True)
    ]
    assert records[0]["order"] is None and records[0]["raw_output"] == answers[0]
    assert records[2]["order"] == list(rows[2][schema.ANSWER]["order"])
    n = len(rows)
    assert utils.aggregate_binary_accuracy(records) == pytest.approx((n - 2) / n)
    assert utils.aggregate_invalid_rate(records) == pytest.approx(1 / n)
    assert utils.aggregate_unparsed_rate(records) == pytest.approx(1 / n)  # the prose answer
    expected = splice_metric.score(
        [splice_metric.parse_order(a) for a in answers],
        [list(d[schema.ANSWER]["order"]) for d in rows],
    )
    for name in splice_metric.RATES:
        agg = getattr(utils, f"aggregate_{name}")
        assert agg(records) == pytest.approx(expected[name])


def test_config_of_rejects_a_foreign_doc(utils):
    with pytest.raises(KeyError, match="neither clips nor captions"):
        utils.config_of({"video_id": "abc"})


# --- where the data comes from ------------------------------------------------------------


def test_dataset_path_is_absolute_and_never_a_cached_name(utils, demo_build, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    # a relative $SPLICE_DATA is resolved once, against the folder lmms-eval starts in
    monkeypatch.setenv(utils.DATA_ENV, os.path.relpath(demo_build, elsewhere))
    assert utils.DATASET_PATH == str(demo_build.resolve())
    monkeypatch.setenv(utils.DATA_ENV, "ORG/splice")  # a Hub id passes through
    assert utils.DATASET_PATH == "ORG/splice"
    for missing in ("splice", str(tmp_path / "gone")):  # a name `datasets` would look up
        monkeypatch.setenv(utils.DATA_ENV, missing)
        with pytest.raises(FileNotFoundError, match=re.escape(missing)):
            utils.dataset_path()
    # unset: the repository's ./splice-data, wherever lmms-eval runs, or a clear error
    monkeypatch.delenv(utils.DATA_ENV)
    monkeypatch.setattr(utils, "REPO_BUILD", demo_build)
    assert utils.DATASET_PATH == str(demo_build)
    monkeypatch.setattr(utils, "REPO_BUILD", tmp_path / "no-build")
    with pytest.raises(FileNotFoundError, match="make demo"):
        utils.dataset_path()
    # ... but first the folder `splice demo` writes by default where lmms-eval runs (the
    # only default an installed copy of the tasks, outside any checkout, has)
    (elsewhere / schema.DEFAULT_BUILD_DIR).symlink_to(demo_build, target_is_directory=True)
    assert utils.DATASET_PATH == str(demo_build.resolve())
    monkeypatch.setattr(utils, "REPO_BUILD", None)
    assert utils.DATASET_PATH == str(demo_build.resolve())


# --- lmms-eval itself, in its own venv ---------------------------------------------------------


def test_lmms_eval_registry_loads_the_tasks(lmms, demo_build, utils, tmp_path):
    proc = subprocess.run(
        [str(lmms), str(SUPPORT / "lmms_probe.py"), str(TASK_DIR)],
        capture_output=True,
        text=True,
        env=lmms_env(demo_build, tmp_path),
        timeout=900,
        cwd=tmp_path,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("LMMS_PROBE_JSON ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    report = json.loads(lines[-1].split(" ", 1)[1])
    assert set(TASKS) <= set(report["all_tasks"]) and "splice" in report["groups"]
    expected_docs = {c: len(docs(demo_build, c, utils)) for c in set(TASKS.values())}
    assert set(report["tasks"]) == set(TASKS)
    for task, config in TASKS.items():
        seen = report["tasks"][task]
        assert seen["dataset_name"] == config
        assert seen["dataset_path"] == str(demo_build.resolve())
        assert seen["version"] == 1.0
        assert seen["num_docs"] == expected_docs[config]
        first = seen["first"]
        if config == "text":
            assert first["visuals"] == []
        else:
            assert first["visuals"] and all(Path(p).is_file() for p in first["visuals"])
            assert "Video 1" in first["text"]
        assert seen["perfect"]["binary_accuracy"] == 1.0
        assert seen["perfect"]["invalid_rate"] == 0.0
        assert seen["wrong"]["invalid_rate"] == 1.0
        assert seen["higher_is_better"]["edit_distance"] is False


# What the dummy model answers: right for some two-clip videos, wrong for the others, and
# no complete order (invalid) for longer ones, so the scores are not all 0 or 1.
GROUP_ANSWER = "Video 2 -> Video 1"


@pytest.fixture(scope="module")
def group_run(lmms, demo_build, tmp_path_factory) -> tuple[Path, dict, str]:
    """``lmms-eval eval --tasks splice`` as the README runs it, from the repository root:
    the group, so each config's task runs once in it (each was also run alone, which proved
    nothing more: the task, its YAML and its functions are the same).
    (its output folder, its results, its stdout)."""
    tmp = tmp_path_factory.mktemp("lmms-group")
    return eval_dummy(lmms, demo_build, tmp, "splice", GROUP_ANSWER)


@pytest.mark.parametrize("task", list(TASKS))
def test_lmms_eval_runs_the_task_end_to_end(group_run, demo_build, task):
    """lmms-eval loads the build, asks the dummy model, scores with the task's aggregations
    and prints the table; its scores are the SPLICE metric's on the answers it logged."""
    out, results, stdout = group_run
    (samples_file,) = out.rglob(f"*_samples_{task}.jsonl")
    assert results["versions"][task] == 1.0
    assert results["configs"][task]["dataset_path"] == str(demo_build.resolve())

    text = samples_file.read_text(encoding="utf-8")
    assert "base64" not in text and "image/png" not in text  # no clip bytes in the log
    samples = [json.loads(line) for line in text.splitlines()]
    meta = read_meta(demo_build)
    answered = {s["binary_accuracy"]["video_id"]: s["filtered_resps"] for s in samples}
    assert sorted(answered) == sorted(meta)  # every video, once
    for answer in answered.values():
        answer = answer[0] if isinstance(answer, list) else answer
        assert answer == GROUP_ANSWER
    vids = sorted(answered)
    expected = splice_metric.score(
        [
            splice_metric.parse_order(a[0] if isinstance(a, list) else a)
            for a in (answered[v] for v in vids)
        ],
        [list(meta[v].order) for v in vids],
    )
    scores = results["results"][task]
    table = [[c.strip() for c in ln.strip("|").split("|")] for ln in stdout.splitlines()]
    for name in splice_metric.RATES:
        assert scores[f"{name},none"] == pytest.approx(expected[name]), name
        # the printed table has a row per metric (a task of the group as "- task")
        rows = [cells for cells in table if cells[:1] == [f"- {task}"] and name in cells]
        assert len(rows) == 1, (name, stdout[-3000:])
        after = rows[0][rows[0].index(name) + 1 :]
        shown = [float(c) for c in after if re.fullmatch(r"-?\d+(\.\d+)?", c)]
        # the value, the first number after the metric's name (four decimals)
        assert shown[0] == pytest.approx(expected[name], abs=5e-5), (name, rows[0])
    assert 0 < expected["invalid_rate"] < 1


def test_lmms_eval_prints_the_group_aggregate(group_run, demo_build, tmp_path):
    """``--tasks splice`` prints a ``splice`` row per metric (it had none: issue 21, wall 7):
    the size-weighted mean of the three configs' scores, which for these means over examples
    is the metric over all the answers pooled. Its ``--log_samples`` files are prediction
    files ``splice score`` reads as they are, to the same numbers."""
    out, results, stdout = group_run
    results = results["results"]
    table = [[c.strip() for c in ln.strip("|").split("|")] for ln in stdout.splitlines()]
    meta = read_meta(demo_build)
    answer = splice_metric.parse_order(GROUP_ANSWER)
    pooled = splice_metric.score(
        [answer] * (3 * len(meta)), [list(meta[v].order) for v in sorted(meta)] * 3
    )
    for name in splice_metric.RATES:
        assert results["splice"][f"{name},none"] == pytest.approx(pooled[name]), name
        # the row, in lmms-eval's results table and again in its groups table
        rows = [cells for cells in table if cells[:1] == ["splice"] and name in cells]
        assert rows and all(f"{pooled[name]:.4f}" in row for row in rows), stdout[-3000:]
    for task in TASKS:  # lmms-eval's own sample log, scored by `splice score`
        (samples,) = out.rglob(f"*_samples_{task}.jsonl")
        scores = tmp_path / f"{task}.json"
        cmd = ["score", str(samples), "--data", str(demo_build), "--json", str(scores)]
        assert splice_main(cmd) == 0
        (run,) = json.loads(scores.read_text())["runs"]
        assert run["config"] == TASKS[task]  # the task's record names its config
        assert run["binary_accuracy"] == pytest.approx(results[task]["binary_accuracy,none"])
        assert run["invalid_rate"] == pytest.approx(results[task]["invalid_rate,none"])


@pytest.mark.parametrize(
    ("folder", "selected"), [("splice", False), (schema.DEFAULT_BUILD_DIR, True)]
)
def test_the_default_build_folder_does_not_hide_the_group(
    lmms, demo_build, tmp_path, folder, selected
):
    """lmms-eval reads a folder named like the task it is asked for as a folder of task
    files: a build at ./splice (the old default of `make demo`) left `--tasks splice` with
    no task at all ("No tasks specified"), so `make test` after `make demo` failed. The build
    at the default folder, in the folder lmms-eval runs in, is found by the task with no
    SPLICE_DATA, and the group is still selected and run."""
    home = tmp_path / "home"
    home.mkdir()
    (home / folder).symlink_to(demo_build, target_is_directory=True)
    env = {k: v for k, v in lmms_env(demo_build, tmp_path).items() if k != "SPLICE_DATA"}
    out = tmp_path / "out"
    command = [str(lmms.parent / "lmms-eval"), "eval", "--model", "dummy", "--tasks", "splice"]
    command += ["--include_path", str(TASK_DIR), "--limit", "2", "--output_path", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800, cwd=home)
    log = (proc.stdout + proc.stderr)[-4000:]
    results = list(out.rglob("*_results.json"))
    if not selected:  # the collision itself: lmms-eval took the build for task files
        assert "No tasks specified" in log and results == [], log
        return
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, log
    (results_file,) = results
    results = json.loads(results_file.read_text(encoding="utf-8"))
    assert "binary_accuracy,none" in results["results"]["splice"]
    for task, config in TASKS.items():
        assert results["configs"][task]["dataset_path"] == str(demo_build.resolve()), config
