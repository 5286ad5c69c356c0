"""Runs INSIDE lmms-eval's environment (see tests/splice_eval/toolkits/test_lmms_task.py):
loads the SPLICE task folder with lmms-eval's own registry and task classes, on a built
folder, and prints what it saw as JSON.

lmms-eval pins PyAV < 16 and needs torch, so it cannot share the project's venv; the test
starts this script with lmms-eval's Python. Usage:
``SPLICE_DATA=BUILD_DIR python tests/support/lmms_probe.py TASK_FOLDER``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def flatten(task_dict: dict) -> dict[str, Any]:
    """get_task_dict nests tasks under their group object; collect the leaves by name."""
    out: dict[str, Any] = {}
    for key, value in task_dict.items():
        if isinstance(value, dict):
            out.update(flatten(value))
        else:
            out[str(key)] = value
    return out


def probe(task_folder: Path) -> dict[str, Any]:
    from lmms_eval.tasks import TaskManager, get_task_dict

    # The build comes from $SPLICE_DATA (the task's utils.dataset_path), set by the test.
    manager = TaskManager(include_path=str(task_folder), include_defaults=False)
    report: dict[str, Any] = {"all_tasks": manager.all_tasks, "groups": manager.all_groups}
    tasks = flatten(get_task_dict(["splice"], manager))
    report["tasks"] = {}
    for name, task in sorted(tasks.items()):
        docs = list(task.test_docs())
        perfect, wrong, first = [], [], None
        for doc in docs:
            visuals = task.doc_to_visual(doc)
            prompt = task.doc_to_text(doc)
            target = task.doc_to_target(doc)
            if first is None:
                first = {
                    "video_id": doc["video_id"],
                    "visuals": visuals,
                    "text": prompt,
                    "target": target,
                }
            perfect.append(task.process_results(doc, [target]))
            wrong.append(task.process_results(doc, ["Sorry, I am unable to decide."]))
        aggregations = task.aggregation()
        report["tasks"][name] = {
            "dataset_name": task.DATASET_NAME,
            "dataset_path": task.DATASET_PATH,
            "version": task.VERSION,
            "num_docs": len(docs),
            "first": first,
            "perfect": {m: f([r[m] for r in perfect]) for m, f in aggregations.items()},
            "wrong": {m: f([r[m] for r in wrong]) for m, f in aggregations.items()},
            "higher_is_better": task.higher_is_better(),
        }
    return report


if __name__ == "__main__":
    result = probe(Path(sys.argv[1]))
    print("LMMS_PROBE_JSON " + json.dumps(result))
