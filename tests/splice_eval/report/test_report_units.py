"""The report mixed fractions (the paper's table layouts) and percentages (by clip count, by
domain) without saying which; every table of rates now names its unit in its heading (issue
49 section 5)."""

from __future__ import annotations

import re

from tests.support.build_helpers import run_splice


def test_every_rate_table_names_its_unit(demo_build, tmp_path):
    args = ["--data", demo_build, "--config", "video_text"]
    assert run_splice("baseline", "random", *args, "--out", tmp_path / "r.jsonl").returncode == 0
    done = run_splice(
        "report", tmp_path / "r.jsonl", "--data", demo_build, "--out", tmp_path / "rep"
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "rep" / "report.md").read_text("utf-8")
    headings = re.findall(r"^## (.*accuracy.*|All metrics.*)$", text, re.M)
    assert len(headings) >= 4, headings
    for heading in headings:
        assert "(%)" in heading or "fractions" in heading, heading
    table2 = text.split("layout of Table 2")[1].split("\n## ")[0]
    assert re.search(r"\| 0\.\d{4} \|", table2)  # fractions, as its heading says
    clips = text.split("by number of clips")[1].split("\n## ")[0]
    assert re.search(r"\| \d{1,3}\.\d{2}", clips)  # percentages, as its heading says
