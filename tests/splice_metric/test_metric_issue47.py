"""Issue 47, sections 1 and 2, through the public surface: the metric as ``evaluate.load``
gives it from the checkout's ``splice_metric/`` folder (evaluate's copy of the parser and its
readers beside it). Each class of the issue: an answer is scored as the order or option it
commits to, or as unparsed; before the fix each was scored as another."""

from __future__ import annotations

import evaluate
import pytest

import splice_metric
from tests.splice_metric.coin_labels import labels

# section 1: the paper's own asked format (A.3), with COIN's labels holding " or " as captions
WITH_OR = [label for label in labels() if " or " in label]
ASKED = {
    "the issue's form": "Video 2 - [{}], Video 3 - [pump up the tire], Video 1 - [add ingredients]",
    "in tags": "<order>Video 2 - [{}], Video 3 - [pump up the tire], Video 1 - [add]</order>",
    "parentheses": "Video 2 ({}), Video 3 (pump up the tire), Video 1 (add ingredients)",
    "one a line": "Video 2 - [{}]\nVideo 3 - [pump up the tire]\nVideo 1 - [add ingredients]",
}


@pytest.fixture(scope="module")
def text_metric() -> evaluate.EvaluationModule:
    return evaluate.load(splice_metric.path(), "text")


def test_coin_has_the_labels_the_issue_counts() -> None:
    assert len(labels()) == 739
    assert len(WITH_OR) == 27 and "fry or roast or braise" in WITH_OR


@pytest.mark.parametrize("form", ASKED.values(), ids=ASKED)
def test_a_caption_holding_or_never_changes_the_reading(text_metric, form: str) -> None:
    """Was 0.93: the untagged forms read "or" in a caption as an offered alternative."""
    answers = [form.format(label) for label in WITH_OR]
    got = text_metric.compute(predictions=answers, references=[[2, 3, 1]] * len(answers))
    assert got["binary_accuracy"] == 1.0 and got["unparsed_rate"] == 0.0, got


# section 2: each answer commits to no order (an alternative, a hedge): unparsed
UNCOMMITTED = {
    "an alternative written with numbers": "Answer: 3, 1, 2. Alternatively: 1, 3, 2.",
    "a hedge after the tags": "<order>Video 3, Video 1, Video 2</order> However, another "
    "plausible order would be Video 1, Video 3, Video 2.",
}


@pytest.mark.parametrize("answer", UNCOMMITTED.values(), ids=UNCOMMITTED)
def test_two_candidate_orders_score_as_unparsed(text_metric, answer: str) -> None:
    got = text_metric.compute(predictions=[answer], references=[[1, 3, 2]])
    assert got["unparsed_rate"] == 1.0, got  # before: read as the second order offered


# section 2: words between or around the clips, read by the reader of their form (clip 3
# first, clip 1 second, clip 2 third); before, each was read in mention order or not at all
STATED = {
    "positions in words: 'is 2nd'": "Video 1 is 2nd, Video 2 is 3rd, Video 3 is 1st.",
    "positions in words: 'at position 2'": "Video 1 at position 2, Video 2 at position 3, "
    "Video 3 at position 1.",
    "positions in words: 'takes place second'": "Video 1 takes place second, Video 2 takes "
    "place third, Video 3 takes place first.",
    "positions in words: '(the second step)'": "Video 1 (the second step), Video 2 (the third "
    "step), Video 3 (the first step)",
    "a direction": "Order (latest to earliest): 2, 1, 3",
    "positions listed against a header": "Positions (Video 1, Video 2, Video 3): 2, 3, 1",
}
TAGGED = {f"{name}, in tags": f"<order>{text}</order>" for name, text in STATED.items()}
TAGGED.pop("a direction, in tags")  # a direction is a statement's, not a tag's


@pytest.mark.parametrize("answer", [*STATED.values(), *TAGGED.values()], ids=[*STATED, *TAGGED])
def test_words_around_the_clips_are_read_by_their_form(text_metric, answer: str) -> None:
    got = text_metric.compute(predictions=[answer], references=[[3, 1, 2]])
    assert got["binary_accuracy"] == 1.0, got


# section 2: options merely discussed never count
QUESTIONS = {
    "choice: an option discussed after the one chosen": (
        "choice",
        "I choose C. Option B would put Video 1 first, which is wrong.",
        3,
    ),
    "pairwise: a caption after the clip": ("pairwise", "Video 3 (shown first) happened second", 2),
    "choice: two answers, no correction": ("choice", "The answer is B. The answer is C.", None),
    "choice: a corrected answer": ("choice", "The answer is B. Wait, the answer is C.", 3),
}


@pytest.fixture(scope="module")
def question_metrics() -> dict[str, evaluate.EvaluationModule]:
    return {c: evaluate.load(splice_metric.path(), c) for c in splice_metric.QUESTION_CONFIGS}


@pytest.mark.parametrize(("config", "reply", "option"), QUESTIONS.values(), ids=QUESTIONS)
def test_only_a_committed_option_counts(question_metrics, config, reply, option) -> None:
    ref = {"option": option or 1, "num_options": 2 if config == "pairwise" else 4}
    got = question_metrics[config].compute(
        predictions=[reply], references=[{**ref, "labels": [3, 5]}]
    )
    if option is None:
        assert got["unparsed_rate"] == 1.0, got
    else:
        assert got["accuracy"] == 1.0, got
