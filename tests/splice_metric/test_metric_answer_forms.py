"""Issue 40, parts 1 and 2, through the public surface: the metric as ``evaluate.load`` gives
it from the checkout's ``splice_metric/`` folder (evaluate's copy of the parser beside it)
scores each answer form as the order or option the answer commits to, or as unparsed."""

from __future__ import annotations

import evaluate
import pytest

import splice_metric

CAPTIONED = {  # part 1: answers that name each clip with its caption (read as nothing before)
    "dash and brackets": "Video 2 - [clean bathtub], Video 3 - [rinse the pot], Video 1 - [spray]",
    "colons": "Video 2: clean bathtub, Video 3: rinse the pot, Video 1: spray the window",
    "parentheses": "Video 2 (clean bathtub), Video 3 (rinse the pot), Video 1 (spray it)",
    "one a line": "Video 2 - clean bathtub\nVideo 3 - rinse the pot\nVideo 1 - spray it",
    "numbered list": "1. Video 2 - clean bathtub\n2. Video 3 - rinse the pot\n3. Video 1 - spray",
    "captions of free text": "Video 2 - [add Video 1's 3 cups: water, (hot) - fast], "
    "Video 3 - [rinse 1, 2], Video 1 - [spray: step 3]",
}
# part 2: each answer was read as a valid order it does not state; truth: what it states
MISREAD = {
    "list markers with ')'": ("1) Video 3\n2) Video 1\n3) Video 2", [3, 1, 2]),
    "ordinals in parentheses": ("Video 3 (2nd), Video 1 (1st), Video 2 (3rd)", [1, 3, 2]),
    "ordinals in words": ("second: Video 1, first: Video 3, third: Video 2", [3, 1, 2]),
    "a correction after the tags": (
        "<order>Video 1, Video 3, Video 2</order>\nWait, I made a mistake. The correct order "
        "is Video 3, Video 1, Video 2.",
        [3, 1, 2],
    ),
    "a correction after an answer": ("Answer: 1,3,2\nHmm, that's wrong: it's 3,1,2", [3, 1, 2]),
    "restated as presented, then ordered": (
        "The clips are presented as: Video 1, Video 2, Video 3.\n\n1. Video 3 - jack up the "
        "car\n2. Video 1 - remove the tire\n3. Video 2 - fit the new tire",
        [3, 1, 2],
    ),
    "a thinking draft, then the answer": (
        "<think>A draft: <order>Video 1, Video 2, Video 3</order>? No.</think>\nFinal answer: "
        "Video 3, Video 1, Video 2",
        [3, 1, 2],
    ),
}
UNCOMMITTED = {  # part 2: no one order committed to: unparsed, never the first one offered
    "restated as presented, then prose": "The clips are presented as: Video 1, Video 2, "
    "Video 3. Looking closer, Video 3 happens first, then Video 1, then Video 2.",
    "two candidate orders": "The order is Video 1, Video 2, Video 3. Alternatively, Video 2, "
    "Video 1, Video 3.",
    "an unclosed thinking draft": "<think>Maybe <order>Video 1, Video 2, Video 3</order>. "
    "Let me check the clips again",
}


@pytest.fixture(scope="module")
def text_metric() -> evaluate.EvaluationModule:
    return evaluate.load(splice_metric.path(), "text")


@pytest.mark.parametrize("answer", CAPTIONED.values(), ids=CAPTIONED)
def test_captioned_clips_read_as_the_order_named(text_metric, answer: str) -> None:
    got = text_metric.compute(predictions=[answer], references=[[2, 3, 1]])
    assert got["binary_accuracy"] == 1.0 and got["unparsed_rate"] == 0.0


@pytest.mark.parametrize(("answer", "truth"), MISREAD.values(), ids=MISREAD)
def test_an_answer_scores_as_the_order_it_states(text_metric, answer, truth) -> None:
    got = text_metric.compute(predictions=[answer], references=[truth])
    assert got["binary_accuracy"] == 1.0, got


@pytest.mark.parametrize("answer", UNCOMMITTED.values(), ids=UNCOMMITTED)
def test_an_uncommitted_answer_scores_as_unparsed(text_metric, answer: str) -> None:
    got = text_metric.compute(predictions=[answer], references=[[1, 2, 3]])
    assert got["unparsed_rate"] == 1.0, got


# the question formats: (reply, the question's answer as {option, num_options, labels}); an
# option of None: the reply commits to none, and is unparsed
QUESTIONS = {
    "choice: 'A or C'": ("choice", "The answer is A or C.", None),
    "choice: 'B, C'": ("choice", "B, C", None),
    "choice: a verdict per option": (
        "choice",
        "A: wrong, the tire is on already. B: wrong. C: correct, the car is lifted first. "
        "D: incorrect.",
        3,
    ),
    "pairwise: 'happened later'": ("pairwise", "Video 4 happened later", 1),
    "pairwise: 'comes second'": ("pairwise", "Video 4 comes second.", 1),
    "pairwise: 'not Video 4'": ("pairwise", "<answer>not Video 4</answer>", None),
}


@pytest.fixture(scope="module")
def question_metrics() -> dict[str, evaluate.EvaluationModule]:
    return {c: evaluate.load(splice_metric.path(), c) for c in splice_metric.QUESTION_CONFIGS}


@pytest.mark.parametrize(("config", "reply", "option"), QUESTIONS.values(), ids=QUESTIONS)
def test_a_reply_scores_as_the_one_option_it_commits_to(question_metrics, config, reply, option):
    ref = {"option": option or 2, "num_options": 2 if config == "pairwise" else 4}
    got = question_metrics[config].compute(
        predictions=[reply], references=[{**ref, "labels": [3, 4]}]
    )
    if option is None:
        assert got["unparsed_rate"] == 1.0, got  # before: read as the first option named
    else:
        assert got["accuracy"] == 1.0, got
