"""The lmms-eval task folder: its YAML, its functions on the demo build, and its loading
by lmms-eval's own task registry.

lmms-eval cannot live in the project's venv (it pins PyAV < 16, which the project's video
code is not built against, and it needs torch), so the registry test runs
tests/lmms_probe.py with the Python of a separate venv made by ``make lmms-venv``
(``.venv-lmms``; or set ``SPLICE_LMMS_PYTHON``). The other tests need no lmms-eval.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import datasets
import pytest
import yaml

import splice_dataset as schema
import splice_metric

REPO = Path(__file__).resolve().parents[1]
TASK_DIR = REPO / "lmms_eval_tasks" / "splice"
TASKS = {"splice_video": "video", "splice_video_text": "video_text", "splice_text": "text"}


class _FunctionTag:
    def __init__(self, name: str):
        self.name = name


class _Loader(yaml.SafeLoader):
    """PyYAML loader that keeps lmms-eval's ``!function module.name`` tags as names."""


_Loader.add_constructor(
    "!function", lambda loader, node: _FunctionTag(loader.construct_scalar(node))
)


def load_task_yaml(path: Path) -> dict:
    """A task YAML with its ``include`` merged, the way lmms-eval merges it."""
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    include = config.pop("include", None)
    if include is None:
        return config
    return {**load_task_yaml(path.parent / include), **config}


@pytest.fixture(scope="module")
def utils():
    spec = importlib.util.spec_from_file_location("splice_lmms_utils", TASK_DIR / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs(build: Path, config: str, utils) -> list[dict]:
    """Docs as lmms-eval gets them: load_dataset(path, name), then the task's process_docs."""
    ds = datasets.load_dataset(str(build), config, split=schema.SPLIT)
    return list(utils.process_docs(ds))


# --- YAML ---------------------------------------------------------------------------------


def test_task_yaml_is_complete(utils):
    group = yaml.load((TASK_DIR / "splice.yaml").read_text(), Loader=_Loader)
    assert group == {"group": "splice", "task": list(TASKS)}
    for task, config in TASKS.items():
        cfg = load_task_yaml(TASK_DIR / f"{task}.yaml")
        assert cfg["task"] == task and cfg["dataset_name"] == config
        assert cfg["test_split"] == schema.SPLIT and cfg["output_type"] == "generate_until"
        for key in ("process_docs", "doc_to_visual", "doc_to_text", "doc_to_messages"):
            assert isinstance(cfg[key], _FunctionTag), key
        # every !function names a function of utils.py
        tags = [v for v in cfg.values() if isinstance(v, _FunctionTag)]
        tags += [m["aggregation"] for m in cfg["metric_list"]]
        for tag in tags:
            module, name = tag.name.split(".")
            assert module == "utils" and callable(getattr(utils, name)), tag.name
        # one metric per metric of the SPLICE metric, aggregated by the metric
        names = [m["metric"] for m in cfg["metric_list"]]
        assert names == list(splice_metric.METRICS)
        for m in cfg["metric_list"]:
            assert m["aggregation"].name == f"utils.aggregate_{m['metric']}"
            lower_better = m["metric"] in ("edit_distance", "invalid_rate")
            assert m["higher_is_better"] is (not lower_better)


# --- functions on the demo build ---------------------------------------------------------------


def test_functions_on_demo_build(demo_build, utils, tmp_path, monkeypatch):
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(tmp_path / "clips"))
    for config in ("video", "video_text", "text"):
        rows = docs(demo_build, config, utils)
        assert rows
        records = []
        for doc in rows:
            assert utils.config_of(doc) == config
            prompt = schema.build_prompt(doc, config)
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
                assert len(visuals) == doc[schema.NUM_CLIPS]
                for label, (path, clip) in enumerate(
                    zip(visuals, doc[schema.CLIPS], strict=True), 1
                ):
                    path = Path(path)
                    assert path.name == schema.clip_file_name(doc[schema.VIDEO_ID], label)
                    assert path.read_bytes() == clip["bytes"]
                    # a second call reuses the file
                    before = path.stat().st_mtime_ns
                    assert utils.doc_to_visual(doc)[label - 1] == str(path)
                    assert path.stat().st_mtime_ns == before
                messages = utils.doc_to_messages(doc)
                content = messages[0]["content"]
                assert content[0] == {"type": "text", "text": prompt.text}
                assert [c["url"] for c in content if c["type"] == "video"] == visuals
            target = utils.doc_to_target(doc)
            assert splice_metric.parse_order(target) == list(doc[schema.ANSWER]["order"])
            records.append(utils.process_results(doc, [target]))
        per_metric = {m: [r[m] for r in records] for m in splice_metric.METRICS}
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
    expected = splice_metric.score(
        [splice_metric.parse_order(a) for a in answers],
        [list(d[schema.ANSWER]["order"]) for d in rows],
    )
    for name in splice_metric.METRICS:
        agg = getattr(utils, f"aggregate_{name}")
        assert agg(records) == pytest.approx(expected[name])


def test_config_of_rejects_a_foreign_doc(utils):
    with pytest.raises(KeyError, match="neither clips nor captions"):
        utils.config_of({"video_id": "abc"})


# --- lmms-eval's own registry ------------------------------------------------------------------


def lmms_python() -> Path | None:
    candidate = os.environ.get("SPLICE_LMMS_PYTHON") or REPO / ".venv-lmms" / "bin" / "python"
    path = Path(candidate)
    if not path.exists():
        return None
    probe = subprocess.run(
        [str(path), "-c", "import lmms_eval.tasks"], capture_output=True, text=True, timeout=300
    )
    return path if probe.returncode == 0 else None


def test_lmms_eval_registry_loads_and_runs_the_tasks(demo_build, utils, tmp_path):
    python = lmms_python()
    if python is None:
        if os.environ.get("SPLICE_REQUIRE_LMMS") == "1":  # `make test` builds .venv-lmms
            pytest.fail("lmms-eval's venv is missing or broken: run `make lmms-venv`")
        pytest.skip(
            "lmms-eval is not installed: it needs its own venv (PyAV<16, torch); "
            "run `make lmms-venv` or set SPLICE_LMMS_PYTHON"
        )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "SPLICE_CLIP_CACHE": str(tmp_path / "clips"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HF_HUB_OFFLINE": "1",
    }
    proc = subprocess.run(
        [str(python), str(REPO / "tests" / "lmms_probe.py"), str(TASK_DIR), str(demo_build)],
        capture_output=True,
        text=True,
        env=env,
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
