"""The metric's option parsers (``splice_metric.questions``) and ``score_questions``,
against replies written by hand, with an independent count of the expected scores."""

from __future__ import annotations

import evaluate
import pytest

import splice_metric
from splice_metric import parse_choice, parse_pairwise, score_questions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<answer>B</answer>", 2),
        ("<answer> (c) </answer>", None),  # lower case is not a letter answer
        ("Thinking... <answer>A</answer> no wait <answer>D</answer>", 4),
        ("<answer>C. Video 2, Video 1, Video 3</answer>", 3),
        ("The answer is B.", 2),
        ("I choose option 3", 3),
        ("Option C", 3),
        ("2", 2),
        ("B", 2),
        ("<answer>Video 2, Video 1</answer>", None),  # an order, not a letter
        ("Either A or B, hard to say", None),
        # issue 40: one option committed to, or none
        ("A or C", None),
        ("The answer is B, C", None),
        ("The answer is B, since A and C show the end.", 2),  # other letters in its reason
        ("A: wrong. B: incorrect. C: correct. D: not right.", 3),
        ("A: right. B: wrong. C: right.", None),  # two judged right
        ("Reasoning: A: wrong, B: wrong, D: correct. <answer>B</answer>", 2),  # the tag wins
        ("A video has been cut into clips and the order seems unclear to me overall.", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_choice(text, expected):
    assert parse_choice(text, 4) == expected


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("<answer>Video 5</answer>", [3, 5], 2),
        ("<answer>Video 3</answer>", [3, 5], 1),
        ("<answer>Video 4</answer>", [3, 5], None),  # not a clip shown
        ("<answer>first</answer>", [3, 5], 1),
        ("The clip shown second happened first.", [3, 5], 2),
        ("The first clip happened first.", [3, 5], 1),
        ("Video 5 happened first, then Video 3.", [3, 5], 2),
        ("<answer>1</answer>", [2, 1], 2),  # a bare number that is a shown label is the label
        ("<answer>1</answer>", [3, 5], 1),  # else the option number
        ("option 2", [2, 1], 2),  # "option N" is always the option
        ("Video 3 or Video 5, both plausible", [3, 5], None),
        # issue 40: the other clip, or unparsed; never the clip named as first
        ("Video 5 happened later.", [3, 5], 1),
        ("<answer>Video 3 comes second</answer>", [3, 5], 2),
        ("not Video 5", [3, 5], None),
        ("Video 5 did not happen first", [3, 5], None),
        ("Video 5 (second)", [3, 5], None),  # the clip shown second, or the later one?
        ("The answer is Video 3; I am not fully sure", [3, 5], 1),
        ("It is hard to say which of the clips came before the other one here.", [3, 5], None),
        (None, [3, 5], None),
    ],
)
def test_parse_pairwise(text, labels, expected):
    assert parse_pairwise(text, labels) == expected


def test_score_questions_counts_wrong_unparsed_and_invalid_apart():
    refs = [
        {"option": 2, "num_options": 4},
        {"option": 1, "num_options": 4},
        {"option": 2, "num_options": 2},
        {"option": 1, "num_options": 4},
    ]
    result = score_questions([2, "<answer>A</answer>", None, 7], refs, config="choice")
    assert result["accuracy"] == 0.5
    assert result["unparsed_rate"] == 0.25 and result["invalid_rate"] == 0.5
    assert result["chance"] == pytest.approx((0.25 * 3 + 0.5) / 4)
    assert result["by_num_options"][2]["count"] == 1
    with pytest.raises(ValueError, match="reference 0"):
        score_questions([1], [[1, 2]], config="choice")


@pytest.mark.parametrize("config", splice_metric.QUESTION_CONFIGS)
def test_evaluate_loads_the_question_configs(config):
    metric = evaluate.load(splice_metric.path(), config)
    refs = [{"option": 1, "num_options": 2, "labels": [4, 2]}] * 2
    answers = ["<answer>Video 4</answer>", 2] if config == "pairwise" else ["<answer>A</answer>", 2]
    result = metric.compute(predictions=answers, references=refs)
    assert result["accuracy"] == 0.5 and result["chance"] == 0.5 and result["count"] == 2


# --- issue 31, defect 8: degenerate replies end at once and never raise ------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        ("The answer is: " * 20_000)[:200_000],
        "a" * 200_000,
        "x happened first " * 12_000,
        "option " * 30_000,
        "<answer>" * 30_000,
        " " * 200_000 + "happened first",
        "<answer>" + "Video 1 came first " * 10_000 + "</answer>",
    ],
    ids=lambda t: f"{t[:10]!r}x{len(t)}",
)
def test_degenerate_replies_end_without_raising(text):
    """The option parsers scanned every start of a long reply for a 60-character subject
    (seconds per 200 kB reply); they are linear now. Time is in bench/parse.py."""
    assert parse_choice(text, 4) in (None, 1, 2, 3, 4)
    assert parse_pairwise(text, [1, 2]) in (None, 1, 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<answer>A</answer> <answer>B", 1),  # an unclosed last tag: the last closed one
        ("Then the ANSWER IS C", 3),
        ("Well.\nClip 5 came  first", 2),
    ],
)
def test_tags_cues_and_statements_as_before(text, expected):
    labels = [3, 5]
    got = parse_pairwise(text, labels) if "Clip" in text else parse_choice(text, 4)
    assert got == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # issue 47: only a committed option counts, and committed places must agree
        ("I choose C. Option B would put Video 1 first, which is wrong.", 3),
        ("The answer is B. The answer is C.", None),
        ("The answer is B. Wait, the answer is C.", 3),
        ("<answer>A</answer> then <answer>not sure</answer>", None),  # the last tag refused
        ("Option B is correct.", 2),
    ],
)
def test_parse_choice_reads_only_a_committed_option(text, expected):
    assert parse_choice(text, 4) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Video 3 (shown first) happened second", 2),  # a caption is no part of the reply
        ("Video 5 happened first? No wait, Video 3 happened first.", 1),
        ("Video 5 happened first. Video 3 happened first.", None),
        ("<answer>Video 5 (the clip with the jack)</answer>", 2),
    ],
)
def test_parse_pairwise_reads_only_a_committed_option(text, expected):
    assert parse_pairwise(text, [3, 5]) == expected
