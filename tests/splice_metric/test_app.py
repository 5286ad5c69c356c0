"""The metric's Space as the Hub builds and serves it.

The Hub builds a Gradio Space from the card's YAML: a fresh environment with exactly
``gradio==<sdk_version>`` and the Space's ``requirements.txt``, then runs its ``app_file``.
``make space-venv`` builds that environment as ``.venv-space`` (or set
``SPLICE_SPACE_PYTHON``); the test uploads nothing: it copies the files ``splice
publish-metric`` would send into a folder, starts ``app.py`` there on 127.0.0.1, reads the
served page and scores through the widget's API. The card test needs no Space venv.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

import splice_metric
from splice_build.remote.upload_plan import (
    METRIC_ALLOW_PATTERNS,
    METRIC_IGNORE_PATTERNS,
    plan_upload,
)
from tests.support.paths import REPO
from tests.support.side_venvs import side_venv_python

METRIC_DIR = REPO / "splice_metric"
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def card() -> tuple[dict, str]:
    """(YAML header, Markdown body) of the metric's card."""
    text = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body


def test_card_code_blocks_have_no_blank_lines():
    """gradio 3 renders the card to HTML and then renders that HTML again as Markdown: the
    rendered article is one HTML block, which ends at the first blank line, and a blank
    line in a code block is the only one it has. The rest of the block is then read as
    Markdown (paragraphs, lost indentation). The served page is checked below."""
    _, body = card()
    blocks = FENCED.findall(body)
    assert len(blocks) >= 4
    for block in blocks:
        assert "\n\n" not in block, block


@pytest.fixture(scope="module")
def space() -> Path:
    return side_venv_python(
        ".venv-space", "SPLICE_SPACE_PYTHON", "SPLICE_REQUIRE_SPACE", "space-venv", "gradio"
    )


def test_space_venv_is_what_the_hub_installs(space):
    """gradio at the card's sdk_version, and every line of requirements.txt satisfied."""
    header, _ = card()
    requirements = [
        line.strip()
        for line in (METRIC_DIR / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    check = """
import json, sys
from importlib.metadata import version
from packaging.requirements import Requirement
wanted = json.loads(sys.argv[1])
bad = []
for line in wanted:
    req = Requirement(line)
    have = version(req.name)
    if not req.specifier.contains(have, prereleases=True):
        bad.append(f"{line}: have {have}")
print(json.dumps(bad))
"""
    wanted = [f"gradio=={header['sdk_version']}", *requirements]
    proc = subprocess.run(
        [str(space), "-c", check, json.dumps(wanted)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, payload: dict | None = None, timeout: float = 30) -> str:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read().decode("utf-8")


def served_config(page: str) -> dict:
    """gradio 3 ships the whole interface, the card's article included, in the page."""
    match = re.search(r"window\.gradio_config = (\{.*?\});\s*</script>", page, re.S)
    assert match, page[:2000]
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def served(space, tmp_path_factory):
    """(base URL, page HTML) of app.py running in a Space folder; stopped afterwards."""
    root = tmp_path_factory.mktemp("space")
    folder = root / "splice_metric"  # the Space repo: the files publish-metric uploads
    for f in plan_upload(METRIC_DIR, METRIC_ALLOW_PATTERNS, METRIC_IGNORE_PATTERNS):
        (folder / f.path_in_repo).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(METRIC_DIR / f.path_in_repo, folder / f.path_in_repo)
    header, _ = card()
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(root / "hf-home"),
    }
    log = (root / "app.log").open("w")
    proc = subprocess.Popen(
        [str(space), header.get("app_file", "app.py")],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # generous: gradio's import alone takes a while here
        page = None
        while page is None:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited {proc.returncode}:\n" + (root / "app.log").read_text())
            if time.monotonic() > deadline:
                pytest.fail("app.py did not serve in 300 s:\n" + (root / "app.log").read_text())
            try:
                page = http(base + "/", timeout=10)
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        yield base, page
    finally:
        proc.kill()
        proc.wait(timeout=60)
        log.close()


def test_space_serves_the_card_with_whole_code_blocks(served):
    _, page = served
    config = served_config(page)
    article = next(
        c["props"]["value"]
        for c in config["components"]
        if c["type"] == "markdown" and "How to Use" in (c["props"].get("value") or "")
    )
    served_blocks = [
        html.unescape(b) for b in re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", article, re.S)
    ]
    _, body = card()
    # every block of the card, verbatim (indentation and all) in one <pre> of the page
    assert served_blocks == FENCED.findall(body)
    assert not any("<p>" in b for b in served_blocks)


def test_space_scores_through_the_widget_api(served):
    base, _ = served
    predictions = [[3, 1, 2], [2, 1], [1, 1, 2], [4, 1, 3, 2]]
    references = [[3, 1, 2], [1, 2], [1, 2, 3], [4, 1, 2, 3]]
    # the widget's Dataframe: one row per example, JSON lists as text
    rows = zip(predictions, references, strict=True)
    table = {
        "headers": ["predictions", "references"],
        "data": [[json.dumps(p), json.dumps(r)] for p, r in rows],
    }
    answer = json.loads(http(base + "/run/predict", {"data": [table]}, timeout=120))
    shown = ast.literal_eval(answer["data"][0])  # the Textbox shows the result dict
    expected = splice_metric.score(predictions, references)
    assert shown["count"] == 4
    for name in splice_metric.METRICS:
        assert shown[name] == pytest.approx(expected[name]), name
    assert shown["invalid_rate"] == pytest.approx(0.25)
    assert set(shown["by_num_clips"]) == {2, 3, 4}
