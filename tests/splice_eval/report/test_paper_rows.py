"""The paper's published rows: the constants against the paper's figures (written out here,
independently, from the paper's tables), and ``splice report --paper`` on the demo build."""

from __future__ import annotations

import json

import pytest

from splice_build.cli import main as splice_main
from splice_eval.predictions import Prediction, read_predictions, write_predictions
from splice_eval.report import paper

# Ballout et al., SPLICE, Table 2 (Vision Only binary/hamming, Vision+Text binary/hamming,
# Text binary/hamming; None is the paper's dash).
PAPER_TABLE_2 = """
Random 0.2114 0.3385 0.2114 0.3385 - -
Human 0.8486 0.8855 0.8332 0.8904 - -
Qwen2-VL-7B 0.3091 0.4432 0.4354 0.5683 0.3318 0.4924
Qwen2-VL-72B 0.2990 0.4170 0.5708 0.6820 0.5402 0.6907
Gemini-1.5-Flash 0.4599 0.5825 0.5936 0.7115 0.4642 0.6029
Gemini-2.0-Flash-Exp 0.5108 0.6188 0.6939 0.7931 0.5271 0.6652
InternVL2.5-78B 0.2899 0.4243 0.4856 0.6046 0.4768 0.6062
LLaVA-OneVision-72B 0.2260 0.3514 0.4256 0.5597 0.4210 0.5545
"""
# Table 5 (Appendix A.1): Vision Only binary/hamming/LCS/edit, then Vision+Text.
PAPER_TABLE_5 = """
Random 0.2114 0.3385 0.6554 2.0970 0.2114 0.3385 0.6554 2.0970
Human 0.8486 0.8855 0.9359 0.4105 0.8332 0.8904 0.9337 0.3875
Qwen2-VL-7B 0.3091 0.4432 0.7130 1.7891 0.4354 0.5683 0.7896 1.4377
Qwen2-VL-72B 0.2990 0.4170 0.7011 1.8465 0.5708 0.6820 0.8483 1.0677
Gemini-1.5-Flash 0.4599 0.5825 0.7980 1.3458 0.5936 0.7115 0.8633 0.9734
Gemini-2.0-Flash-Exp 0.5108 0.6188 0.7927 1.2511 0.6939 0.7931 0.9030 0.7788
InternVL2.5-78B 0.2899 0.4243 0.7050 1.8364 0.4856 0.6046 0.7694 1.3602
LlavaOnevision-72B 0.2260 0.3514 0.6615 2.0636 0.4256 0.5597 0.7866 1.4312
"""
# Section 7.5, Table 3: change/replace (328 videos), other (157 videos), accuracy %.
PAPER_TABLE_3 = """
Random 15.02 22.68
Human 88.11 86.62
Gemini-1.5-Flash 26.22 54.14
Gemini-2.0-Flash-Exp 26.83 53.50
Qwen2-VL-72B 21.04 33.12
"""
# Section 7.5, Table 4: change/replace 844, make 765, everyday 342, technical 300, spatial 138.
PAPER_TABLE_4 = """
Random 18.02 19.14 23.26 22.49 19.19
Human 84.95 86.01 85.38 80.00 76.09
Gemini-1.5-Flash 28.44 61.18 56.14 44.33 24.64
Gemini-2.0-Flash-Exp 32.11 68.37 59.65 47.00 36.96
Qwen2-VL-72B 20.38 36.86 36.55 32.00 21.01
"""
# Section 7.5 text: first and last clips predicted adjacent, videos with 4+ clips.
PAPER_ADJACENCY = {"Gemini-2.0": 57.36, "Human": 2.45, "Random": 27.29}


def _parse(text: str) -> tuple:
    rows = []
    for line in text.strip().splitlines():
        name, *cells = line.split()
        rows.append((name, tuple(None if c == "-" else float(c) for c in cells)))
    return tuple(rows)


def test_table_2_and_5_constants_are_the_papers():
    assert paper.TABLE_2.table == "Table 2" and paper.TABLE_5.table == "Table 5"
    assert paper.TABLE_2.rows == _parse(PAPER_TABLE_2)
    assert paper.TABLE_5.rows == _parse(PAPER_TABLE_5)
    assert [c for c, _m in paper.TABLE_2.columns] == ["video"] * 2 + ["video_text"] * 2 + [
        "text"
    ] * 2
    assert [m for _c, m in paper.TABLE_5.columns][:4] == [
        "binary_accuracy",
        "hamming_accuracy",
        "lcs_ratio",
        "edit_distance",
    ]


def test_table_3_and_4_constants_are_the_papers():
    assert paper.TABLE_3.table == "Table 3" and paper.TABLE_4.table == "Table 4"
    assert paper.TABLE_3.rows == _parse(PAPER_TABLE_3)
    assert paper.TABLE_4.rows == _parse(PAPER_TABLE_4)
    assert paper.TABLE_3.groups == (("electrical_change_replace", 328), ("electrical_other", 157))
    assert [n for _g, n in paper.TABLE_4.groups] == [844, 765, 342, 300, 138]


def test_section_7_5_adjacency_constants_are_the_papers():
    assert {f.who: f.adjacent_pct for f in paper.ADJACENCY} == PAPER_ADJACENCY
    assert {f.section for f in paper.ADJACENCY} == {"Section 7.5"}


def test_group_names_are_those_of_the_group_file():
    from splice_eval.report.report import reasoning_groups

    by_name = {g["name"]: g for g in reasoning_groups()}
    for table in paper.GROUP_TABLES:
        for name, count in table.groups:
            assert by_name[name]["table"] == table.table
            assert by_name[name]["paper_videos"] == count


def test_model_names_match_across_spellings():
    assert paper.model_key("gemini-2.0-flash-exp") == paper.model_key("Gemini-2.0-Flash-Exp")
    assert paper.model_key("LLaVA-OneVision-72B") == paper.model_key("LlavaOnevision-72B")
    assert paper.model_key("Qwen2-VL-7B-Instruct") == paper.model_key("Qwen2-VL-7B")
    assert paper.model_key("Qwen2-VL-7B") != paper.model_key("Qwen2-VL-72B")


def _renamed(src, dst, model):
    preds = [
        Prediction(p.video_id, p.config, model, p.raw_output, p.order)
        for p in read_predictions(src)
    ]
    write_predictions(dst, preds)
    return dst


def test_report_paper_on_demo_build(demo_build, tmp_path):
    base = tmp_path / "identity.jsonl"
    cmd = ["baseline", "identity", "--data", str(demo_build), "--config", "video"]
    assert splice_main([*cmd, "--out", str(base)]) == 0
    gemini = _renamed(base, tmp_path / "gemini.jsonl", "gemini-2.0-flash-exp")
    out = tmp_path / "report"
    args = ["report", str(gemini), "--data", str(demo_build), "--out", str(out)]
    assert splice_main([*args, "--paper"]) == 0
    md = (out / "report.md").read_text()
    for heading in ("### Table 2:", "### Table 5:", "### Table 3:", "### Table 4:"):
        assert heading in md
    assert "### Section 7.5: first and last clips adjacent" in md
    note = "(paper: the authors' release and frame settings)"
    assert f"| Gemini-2.0-Flash-Exp {note} | 0.5108 | 0.6188 | 0.6939 |" in md
    assert f"| Human {note} | 0.8486 | 0.8855 | 0.8332 | 0.8904 | – | – |" in md
    assert f"| Gemini-2.0 (Section 7.5, {note[1:-1]}) | 57.36 |" in md
    # the user's run matched by name: its own score and the difference, Table 2's layout
    data = json.loads((out / "report.json").read_text())
    (run,) = data["runs"]
    mine = run["overall"]["binary_accuracy"]["mean"]
    assert f"| gemini-2.0-flash-exp, yours | {mine:.4f} |" in md
    assert f"| gemini-2.0-flash-exp − paper | {mine - 0.5108:+.4f} |" in md
    adj = 100 * run["adjacency"]["adjacent_rate"]
    assert f"| gemini-2.0-flash-exp, yours | {adj:.2f} | {adj - 57.36:+.2f} |" in md
    groups = {g["group"]: g for g in run["reasoning_groups"]}
    cr = groups["change_replace"]
    if cr["videos"]:
        assert f"{100 * cr['binary']:.2f}" in md

    # without --paper the report has none of it
    plain = tmp_path / "plain"
    assert splice_main(["report", str(gemini), "--data", str(demo_build), "--out", str(plain)]) == 0
    assert note not in (plain / "report.md").read_text()


@pytest.mark.parametrize("table", [paper.TABLE_2, paper.TABLE_5])
def test_metric_rows_have_one_value_per_column(table):
    assert all(len(values) == len(table.columns) for _name, values in table.rows)


def test_report_paper_matches_hub_names_and_aliases_and_says_when_none(
    demo_build, tmp_path, capsys
):
    """Wall 2 (issue 30): the README's own ``Qwen/Qwen2-VL-7B-Instruct`` was reduced to
    ``qwenqwen2vl7b`` and matched no paper row, silently. The organisation prefix is not part
    of the model's name; ``--paper-alias RUN=ROW`` names the row of any other run; a run that
    matches no row is said, in one line."""
    base = tmp_path / "identity.jsonl"
    cmd = ["baseline", "identity", "--data", str(demo_build), "--config", "video"]
    assert splice_main([*cmd, "--out", str(base)]) == 0
    hub = _renamed(base, tmp_path / "qwen.jsonl", "Qwen/Qwen2-VL-7B-Instruct")
    tuned = _renamed(base, tmp_path / "tuned.jsonl", "lab/my-tuned-vlm")
    out = tmp_path / "report"
    args = ["report", str(hub), str(tuned), "--data", str(demo_build), "--out", str(out)]
    capsys.readouterr()
    assert splice_main([*args, "--paper"]) == 0
    printed = capsys.readouterr().out
    md = (out / "report.md").read_text()
    assert "| Qwen/Qwen2-VL-7B-Instruct, yours |" in md
    assert "| Qwen/Qwen2-VL-7B-Instruct − paper |" in md
    assert "lab/my-tuned-vlm, yours" not in md
    (line,) = [x for x in printed.splitlines() if "no paper row" in x]
    assert "lab/my-tuned-vlm" in line and "--paper-alias" in line and "Qwen/Qwen2" not in line

    aliased = tmp_path / "aliased"
    assert (
        splice_main(
            [*args[:-1], str(aliased), "--paper", "--paper-alias", "lab/my-tuned-vlm=Qwen2-VL-72B"]
        )
        == 0
    )
    md = (aliased / "report.md").read_text()
    assert "| lab/my-tuned-vlm, yours |" in md and "| lab/my-tuned-vlm − paper |" in md
    assert "no paper row" not in capsys.readouterr().out

    bad = ["--paper", "--paper-alias", "lab/my-tuned-vlm=GPT-9"]
    assert splice_main([*args[:-1], str(tmp_path / "bad"), *bad]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--paper-alias" in err and "GPT-9" in err
