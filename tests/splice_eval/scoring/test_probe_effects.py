"""Reading probes: each model's probed runs against its ``none`` run, with paired bootstrap
intervals by video and one sentence per model and probe, in ``splice score`` and
``splice report``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from splice_build.cli import main as splice_main
from splice_eval.builddata import read_meta
from splice_eval.predictions import Prediction, write_predictions
from splice_eval.scoring import probe_effects
from splice_eval.scoring.runs import Run, read_runs
from tests.support.fake_openai_server import FakeOpenAIServer, Reply, Request, count_clips
from tests.support.png_checks import assert_real_png

TRUTH = {f"v{i}": [1, 2, 3, 4] for i in range(40)}


def _run(orders: dict, probe: str) -> Run:
    return Run(orders, model="m", config="video", probe=probe)


def test_a_probe_that_changes_nothing_costs_zero_within_noise():
    same = _run(dict(TRUTH), "none")
    cmp = probe_effects.compare(_run(dict(TRUTH), "blind"), same, TRUTH)
    for c in cmp.changes:
        assert c.delta == 0 and c.lo == 0 and c.hi == 0
    text = probe_effects.sentence(cmp)
    assert text == (
        "m (video): blind costs 0.00 hamming (interval 0.00 to 0.00): this model's score hardly "
        "rests on what the clips show: the prompt alone does as well"
    )


def test_paired_interval_is_over_videos_and_sentence_names_a_real_loss():
    none = _run(dict(TRUTH), "none")
    # half the videos answered with two clips swapped: hamming 0.5 there, 1.0 elsewhere
    probed = {v: ([2, 1, 3, 4] if i % 2 else [1, 2, 3, 4]) for i, v in enumerate(TRUTH)}
    cmp = probe_effects.compare(_run(probed, "single-frame"), none, TRUTH)
    ham = cmp.change("hamming_accuracy")
    assert ham.none == 1.0 and ham.probed == pytest.approx(0.75)
    assert ham.delta == pytest.approx(-0.25)
    assert ham.lo < -0.25 < ham.hi < 0  # a loss for sure, with spread from the resampling
    # the bootstrap resamples paired differences: its bounds are means of -0.5s and 0s
    assert -0.5 <= ham.lo and ham.hi <= 0
    edit = cmp.change("edit_distance")
    assert edit.delta == pytest.approx(1.0)  # one swap = two edits, on half the videos
    text = probe_effects.sentence(cmp)
    assert text.startswith("m (video): single-frame costs 0.25 hamming (interval ")
    assert text.endswith(": this model uses motion within a clip")
    lo, hi = (float(x) for x in text.split("(interval ")[1].split(")")[0].split(" to "))
    assert lo == pytest.approx(-ham.hi, abs=0.006) and hi == pytest.approx(-ham.lo, abs=0.006)


def test_a_probe_that_scores_higher_is_said_to_gain():
    """Issue 30, wall 10: blind scoring higher read "blind costs -0.09 hamming"."""
    weak = {v: ([2, 1, 3, 4] if i % 3 == 0 else [1, 2, 3, 4]) for i, v in enumerate(TRUTH)}
    cmp = probe_effects.compare(_run(dict(TRUTH), "blind"), _run(weak, "none"), TRUTH)
    ham = cmp.change("hamming_accuracy")
    assert ham.delta > 0 and ham.lo > 0  # the blind run is better, beyond noise
    text = probe_effects.sentence(cmp)
    assert "costs" not in text and "-" not in text.split(": ", 1)[1]
    assert text.startswith(f"m (video): blind gains {ham.delta:.2f} hamming (interval ")
    lo, hi = (float(x) for x in text.split("(interval ")[1].split(")")[0].split(" to "))
    assert 0 < lo <= ham.delta <= hi
    assert text.endswith(probe_effects.GAIN_READING)
    edit = probe_effects.sentence(cmp, "edit_distance")  # lower is better: still a gain
    assert edit.startswith("m (video): blind gains ") and " -" not in edit


def test_paired_interval_of_a_constant_shift_has_no_spread():
    """Videos vary a lot, the difference does not: paired by video, the interval is tight
    (two runs' own intervals would each be about 0.08 wide here)."""
    rng = np.random.default_rng(3)
    base = rng.random(200)
    shifted = base - 0.01
    lo, hi = probe_effects.paired_interval(shifted - base, 500, np.random.default_rng(0))
    assert lo == pytest.approx(-0.01) and hi == pytest.approx(-0.01)


def test_runs_without_none_are_not_compared():
    runs = [_run(dict(TRUTH), "blind"), Run(dict(TRUTH), model="other", probe="none")]
    assert probe_effects.compare_runs(runs, TRUTH) == []


def test_read_runs_keeps_probes_apart(tmp_path):
    files = []
    for probe in ("none", "blind"):
        path = tmp_path / f"{probe}.jsonl"
        preds = [Prediction(v, "video", "m", None, o) for v, o in TRUTH.items()]
        write_predictions(path, preds, {"producer": "splice run", "probe": probe})
        files.append(path)
    plain = tmp_path / "other-tool.jsonl"
    write_predictions(plain, [Prediction("v0", "video", "x", None, [1, 2, 3, 4])])
    runs = read_runs([*files, plain], per_file=False)
    assert [(r.model, r.probe, len(r.orders)) for r in runs] == [
        ("m", "none", 40),
        ("m", "blind", 40),
        ("x", "none", 1),
    ]


# --- end to end: splice run with probes, then splice score and splice report ------------


def _identity(request: Request) -> Reply:
    n = count_clips(request)
    return Reply(content="<order>" + ", ".join(f"Video {k}" for k in range(1, n + 1)) + "</order>")


def _probe_run(demo_build, out, probe, script):
    with FakeOpenAIServer(script) as server:
        argv = ["run", "--endpoint", server.url, "--model", "m", "--config", "video"]
        argv += ["--data", str(demo_build), "--frames", "num_frames=2,long_side=32"]
        argv += ["--out", str(out), "--probe", probe]
        assert splice_main(argv) == 0


def test_score_and_report_put_probes_side_by_side(demo_build, tmp_path, capsys):
    meta = read_meta(demo_build)
    answers = {v: list(m.order) for v, m in meta.items()}
    # the none run answers each video right; the blind run answers with the identity order
    none = tmp_path / "none.jsonl"
    write_predictions(
        none,
        [Prediction(v, "video", "m", None, o) for v, o in answers.items()],
        {"producer": "splice run", "model": "m", "config": "video", "probe": "none"},
    )
    blind = tmp_path / "blind.jsonl"
    _probe_run(demo_build, blind, "blind", _identity)
    capsys.readouterr()
    assert splice_main(["score", str(none), str(blind), "--data", str(demo_build)]) == 0
    out = capsys.readouterr().out
    assert "blind.jsonl:m/video [probe blind]" in out
    assert "probes against none (probed - none, paired bootstrap 95% interval by video)" in out
    assert "m/video [probe blind]" in out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("m (video): blind costs ")]
    assert line.endswith(": this model uses what the clips show")

    report_dir = tmp_path / "report"
    argv = ["report", str(none), str(blind), "--data", str(demo_build), "--out", str(report_dir)]
    assert splice_main(argv) == 0
    md = (report_dir / "report.md").read_text()
    data = json.loads((report_dir / "report.json").read_text())
    (cmp,) = data["probes"]
    assert cmp["probe"] == "blind" and cmp["videos"] == len(meta)
    binary = next(c for c in cmp["changes"] if c["metric"] == "binary_accuracy")
    assert binary["none"] == 1.0
    identity_right = np.mean([o == sorted(o) for o in answers.values()])
    assert binary["probed"] == pytest.approx(identity_right)
    assert "## Probes: what each model's score rests on" in md
    assert f"| m | video | blind | 1.0000 → {identity_right:.4f} (" in md
    assert f"- {line}" in md
    assert "| m | video, probe blind |" in md  # the other tables name the probe
    assert "![what each probe costs](probes.png)" in md
    assert_real_png(report_dir / "probes.png")
    # Table 2's layout holds the unprobed run only
    assert [r["probe"] for r in data["runs"]] == ["none", "blind"]
