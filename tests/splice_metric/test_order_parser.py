"""parse_order: the forms the paper's prompts ask for and the usual deviations from them."""

from __future__ import annotations

import doctest
import itertools
import json

import pytest

from splice_metric import order_parser, parse_order
from tests.support.paths import DATA


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the prompt's own format (Appendix A.3)
        ("<order>Video 3, Video 1, Video 2</order>", [3, 1, 2]),
        ("'<order>Video 2, Video 1</order>'", [2, 1]),
        ("<ORDER> video 2 ,VIDEO 1 </Order>", [2, 1]),
        ("<order>Video3, Video1, Video2</order>", [3, 1, 2]),
        ("<order>Clip 2, Clip 3, Clip 1</order>", [2, 3, 1]),
        ("<order>random_part_3, random_part_1, random_part_2</order>", [3, 1, 2]),
        # bare numbers, brackets, arrows, line breaks
        ("<order>3, 1, 2</order>", [3, 1, 2]),
        ("<order>[2, 3, 4, 5, 1]</order>", [2, 3, 4, 5, 1]),
        ("<order>3 -> 1 -> 2</order>", [3, 1, 2]),
        ("<order>3 → 1 → 2</order>", [3, 1, 2]),
        ("<order>(3) > (1) > (2)</order>", [3, 1, 2]),
        ("<order>\n3\n1\n2\n</order>", [3, 1, 2]),
        ("<order>3 then 1 and 2</order>", [3, 1, 2]),
        ("<order>Video 3 -> Video 1 -> Video 2</order>", [3, 1, 2]),
        ("<order>**Video 2**, **Video 1**</order>", [2, 1]),
        # letters, as in the paper's Fig. 4 ("Clips order: c, a, d, b")
        ("<order>c, a, d, b</order>", [3, 1, 4, 2]),
        ("<order>C A D B</order>", [3, 1, 4, 2]),
        ("<order>Clip c, Clip a, Clip b</order>", [3, 1, 2]),
        # "Video N - [label]" lines: the caption text is not read as labels
        (
            "<order>\nVideo 2 - [cut 3 oranges into halves]\nVideo 1 - [squeeze the juice]\n"
            "Video 3 - [serve a glass]\n</order>",
            [2, 1, 3],
        ),
        ("<order>\n2 - cut the oranges\n1 - juice them\n</order>", [2, 1]),
        ("<order>\n- b: cut\n- a: juice\n</order>", [2, 1]),
        # prose around the tags; several blocks: the last one counts
        (
            "Looking at the clips, the first shows cutting. <order>Video 2, Video 1</order> "
            "I am fairly confident.",
            [2, 1],
        ),
        ("First guess <order>1, 2, 3</order>, corrected: <order>3, 2, 1</order>", [3, 2, 1]),
        ("<order>1, 2</order> and finally <order>2, 1", [2, 1]),  # unclosed last block
        # no tags: a plain sequence, an answer after a colon, or each clip named once
        ("[3, 1, 2]", [3, 1, 2]),
        ("3, 1, 2", [3, 1, 2]),
        ("c, a, b", [3, 1, 2]),
        ("The clips happen in this order.\nAnswer: 3, 1, 2", [3, 1, 2]),
        ("The correct order is Video 3, Video 1, Video 2.", [3, 1, 2]),
        # the official SPLICE scripts' fallbacks for malformed tags (utils/evaluation.py)
        ("<order>Video 2, Video 3, Video 1<order>", [2, 3, 1]),  # closing slash missing
        ("Answer: <order>Video 2, Video 1<order>\nDone.", [2, 1]),
        ("</order>Video 3, Video 1, Video 2</order>", [3, 1, 2]),  # opening tag as closing
        ("<order>Video 1, Video 2</order> then <order></order>", [1, 2]),  # empty last
        # JSON answers: an object with an "order" list (labels or numbers), a bare list,
        # inside or outside code fences and tags
        ('{"order": [2, 3, 1]}', [2, 3, 1]),
        ('{"order": ["Video 2", "Video 3", "Video 1"]}', [2, 3, 1]),
        ('{"Order": ["2", "1"]}', [2, 1]),
        ('{"order": ["b", "a", "c"]}', [2, 1, 3]),
        ('{"reasoning": "clip 1 shows the end", "order": [3, 1, 2]}', [3, 1, 2]),
        ('Here is my answer: {"order": [2, 1]} -- hope that helps', [2, 1]),
        ('{"answer": {"order": "Video 2, Video 1"}}', [2, 1]),
        ('```json\n{"order": [2, 3, 1]}\n```', [2, 3, 1]),
        ('Sure.\n```json\n{\n  "order": ["Video 3", "Video 1", "Video 2"]\n}\n```', [3, 1, 2]),
        ('```\n["Video 2", "Video 1"]\n```', [2, 1]),
        ('["Video 2", "Video 1"]', [2, 1]),
        ("[2, 3, 1]", [2, 3, 1]),
        ('<order>{"order": [2, 1]}</order>', [2, 1]),
        ('<order>["Video 3", "Video 2", "Video 1"]</order>', [3, 2, 1]),
        ('{"order": [1, 2]} no wait: {"order": [2, 1]}', [2, 1]),  # the last one counts
        # answers that are read but are not permutations (scored as invalid, not dropped)
        ('{"order": [2, 2]}', [2, 2]),
        ("<order>Video 1, Video 1, Video 2</order>", [1, 1, 2]),
        ("<order>Video 12, Video 3</order>", [12, 3]),
    ],
)
def test_parses(text: str, expected: list[int]) -> None:
    assert parse_order(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot determine the order.",
        "<order></order>",
        "<order>unk</order>",  # the human protocol's "unknown"
        "<order>1.5, 2</order>",  # not an integer label: never truncated to 1
        "<order>Video X, Video Y, Video Z</order>",  # the prompt's placeholders echoed
        "<order>1, b, 3</order>",  # numbers and letters mixed
        "Video 1 shows cutting, Video 2 juicing, so Video 1 comes before Video 2.",
        "1.5, 2",
        # prose and JSON without an order
        "The clips show someone cooking; I cannot say which comes first.",
        "As shown in [1], [2] the task is hard to order.",  # a list inside prose
        '{"order": []}',
        '{"order": [1.5, 2]}',  # not integer labels, as in text
        '{"order": [true, false]}',
        '{"order": ["first the cutting", "then the juice"]}',
        '{"answer": "I do not know"}',
        '```json\n{"explanation": "unclear"}\n```',
        "<order><order>",
        '{"order": "unknown"}',
        "<order>², 1</order>",  # a digit that is no decimal number (int() refuses it)
        # positions given to clips named by numbers and letters mixed: no one order (these
        # raised ValueError from a strict zip, breaking the promise never to raise)
        "Video 1: 3\nVideo a: 2",
        "<order>Video 1: first, Video b: second</order>",
        "Video a: 2\nVideo 2: 1\nVideo 3: 3",
    ],
)
def test_unparseable_is_none(text: str) -> None:
    assert parse_order(text) is None


@pytest.mark.parametrize("value", [None, 3, [1, 2], b"<order>1, 2</order>"])
def test_non_text_is_none(value: object) -> None:
    assert parse_order(value) is None  # type: ignore[arg-type]


# --- answers as models really give them (issue 20, defect 6): reasoning, then the final order

REASONING = (
    "Let me look at each clip. Video 1 shows the tire being lifted off the car. Video 2 shows "
    "the new tire being tightened. Video 3 shows the car being jacked up, which must come "
    "first. After Video 3, Video 1 removes the old tire, and Video 2 finishes the job.\n\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (REASONING + "The correct order is: Video 3, Video 1, Video 2.", [3, 1, 2]),
        (REASONING + "The correct order is Video 3, Video 1, Video 2. I am confident.", [3, 1, 2]),
        (REASONING + "So the order is Video 3 -> Video 1 -> Video 2", [3, 1, 2]),
        (REASONING + "Therefore, the answer is: **Video 3, Video 1, Video 2**", [3, 1, 2]),
        (REASONING + "Final answer: 3-1-2", [3, 1, 2]),
        (REASONING + "Final answer: 3 - 1 - 2.", [3, 1, 2]),
        (REASONING + "The chronological sequence is 3, 1, 2.", [3, 1, 2]),
        (
            REASONING + "The order should be: first Video 3, then Video 1, and finally Video 2.",
            [3, 1, 2],
        ),
        (REASONING + "Answer: [3, 1, 2]", [3, 1, 2]),
        (REASONING + "The correct order is: Clip 3, Clip 1, Clip 2, Clip 4.", [3, 1, 2, 4]),
        (REASONING + "The order is: c, a, b", [3, 1, 2]),
        # a stated order followed by a remark that states none
        (
            REASONING + "The correct order is 3, 1, 2. This order is consistent with the task.",
            [3, 1, 2],
        ),
        # the last stated order counts (reasoning often tries one first)
        ("At first the order seems to be 1, 2, 3. Looking again, the order is 3, 1, 2.", [3, 1, 2]),
        # the tags win over what comes before them
        (REASONING + "The order is 1, 2, 3. <order>Video 3, Video 1, Video 2</order>", [3, 1, 2]),
        # issue 40: an order stated after the tags corrects them (the last committed answer)
        ("<order>Video 2, Video 1</order>\nFinal answer: 1-2", [1, 2]),
        ("<order>3-1-2</order>", [3, 1, 2]),
        # bare forms
        ("Video 2 -> Video 1 -> Video 3", [2, 1, 3]),
        ("3, 1, 2", [3, 1, 2]),
        ("3-1-2", [3, 1, 2]),
        ("Final answer: 3-1-2", [3, 1, 2]),
    ],
)
def test_reads_the_final_stated_order(text: str, expected: list[int]) -> None:
    assert parse_order(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # two different final orders
        REASONING + "Final answer: 3, 1, 2\nFinal answer: 1, 3, 2",
        REASONING + "The final order is 3, 1, 2. Actually, the order is 1, 3, 2.",
        REASONING + "The order is either 3, 1, 2 or 1, 3, 2.",
        REASONING + "The answer is 3-1-2, though 1-3-2 is also possible.",
        # a list that is not a permutation
        REASONING + "The correct order is: Video 3, Video 1, Video 3.",
        REASONING + "Final answer: 3-1-4",
        REASONING + "The order is 1.",
        # no order stated at all
        REASONING + "The order is hard to tell from these clips.",
        "Step 2: cut 3 oranges. Step 1: wash them.",
    ],
)
def test_ambiguous_final_orders_stay_unparsed(text: str) -> None:
    assert parse_order(text) is None


# --- issue 31: a corpus of answers models give, read right or left unparsed --------------------

CORPUS = DATA / "answers_corpus.jsonl"
CORPUS_ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("row", CORPUS_ROWS, ids=[r["form"] for r in CORPUS_ROWS])
def test_corpus_of_real_answers(row: dict) -> None:
    """Each answer is read as the order it means or, where that cannot be told, unparsed:
    never as another order (position-per-clip forms, relational prose, corrections)."""
    expected = None if row["expected"] == "unparsed" else row["expected"]
    assert parse_order(row["answer"]) == expected


def test_corpus_covers_the_issue_forms() -> None:
    forms = " ".join(r["form"] for r in CORPUS_ROWS)
    for needed in ("position per clip", "relational", "correction", "lone letter", "empty"):
        assert needed in forms
    assert len(CORPUS_ROWS) >= 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [("A", None), ("B", None), ("a", None), ("<order>A</order>", None), ("A, B", [1, 2])],
)
def test_a_lone_letter_is_not_an_order(text: str, expected: list[int] | None) -> None:
    """Issue 30, wall 10: "A" was [1] while "B" was None; a lone letter is a choice."""
    assert parse_order(text) == expected


def test_position_words_for_every_clip_count() -> None:
    """The "Video k: first/second/..." form of every right answer reads as that answer."""
    for n in range(2, 8):
        truth = list(range(n, 0, -1))  # clip n first
        words = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh"]
        pairs = ", ".join(f"Video {clip}: {words[truth.index(clip)]}" for clip in range(1, n + 1))
        assert parse_order(f"<order>{pairs}</order>") == truth
        assert parse_order(pairs.replace(", ", "\n")) == truth


# --- issue 31, defect 8: degenerate answers end, and never raise ------------------------------

LOOP = ("Video 1: the person cuts. Answer: Step 2: then: Video 3: wait: " * 600)[:32_768]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 1_000,
        "[" * 100_000,
        "{" * 5_000,
        '{"order": ' * 3_000,
        '{"a": [' * 2_000,
        "```json\n" + "[" * 5_000 + "\n```",
        "<order>" + "[" * 5_000 + "</order>",
        LOOP,
        ":" * 200_000,
        ("Video 1: 3, " * 20_000)[:200_000],
        "x" * 200_000,
        "<order>" * 30_000,
        "```" + "a" * 200_000,
        "Final answer: 1, 2, 3. " * 9_000,
        "answer: 1 " * 20_000,  # cues with no sentence end: never sliced to the end
        # a label longer than int() reads (4,300 digits) raised ValueError
        "<order>" + "1" * 4_500 + "\n2</order>",
        "Video 1: " + "9" * 5_000 + ", Video 2: 1",
        "<order>Video " + "1" * 5_000 + ", Video 2</order>",
    ],
    ids=lambda t: f"{t[:12]!r}x{len(t)}",
)
def test_degenerate_answers_end_without_raising(text: str) -> None:
    """A thousand ``[`` raised RecursionError and a long looping answer took 20 s: every
    such answer is read (or not) at once. Time is measured in bench/parse.py, not here."""
    got = parse_order(text)
    assert got is None or all(isinstance(x, int) for x in got)


def test_a_long_loop_is_unparsed_and_a_repeated_order_is_read() -> None:
    assert parse_order(LOOP) is None
    assert parse_order("[" * 1_000) is None
    assert parse_order("Final answer: 3, 1, 2. " * 9_000) == [3, 1, 2]


def test_the_parsers_doctests_run() -> None:
    outcome = doctest.testmod(order_parser)
    assert outcome.attempted >= 7
    assert outcome.failed == 0


# a position given to a clip, in the forms the readers know, clips named both ways
POSITIONS = ["Video 1: 3", "Video 2: first", "Video 3 is in position 2", '"Video 1": "2nd"',
             "Video a: 2", "clip b: last", "Video c = third", "1: 2"]  # fmt: skip
WRAPPERS = ["{}", "<order>{}</order>", "{{{}}}", "The answer is {}.", "```\n{}\n```"]


def test_never_raises_on_any_two_positions_in_any_wrapper() -> None:
    """The promise never to raise, over every pair of position forms: clips named by a
    number and by a letter once raised ValueError from a strict zip."""
    for first, second in itertools.product(POSITIONS, repeat=2):
        for separator, wrapper in itertools.product([", ", "\n", " and ", "; "], WRAPPERS):
            text = wrapper.format(first + separator + second)
            got = parse_order(text)
            assert got is None or all(type(x) is int for x in got), text


# --- issue 40: where the new readers stop (each case pins a choice the property test leaves) --


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # clips described in the order shown, in sentences, and no order given: descriptions
        ("Video 1: The man lifts the car.\nVideo 2: He fits the tire.\nVideo 3: He drives.", None),
        ("- Video 3: jacking up\n- Video 1: removing the tire\n- Video 2: fitting it", [3, 1, 2]),
        # the same order said twice is one answer; one clip alone is no second candidate
        ("The correct order is Video 3, Video 1, Video 2, or 3-1-2.", [3, 1, 2]),
        (
            "<order>3, 1, 2</order> Alternatively, one might think Video 1 comes first, but no.",
            [3, 1, 2],
        ),  # fmt: skip
        ("Answer: 3, 1, 2. Or rather, 3, 2, 1.", None),  # two orders: no one committed
        # the shown order named before the answer's cue is no answer
        ("The videos are presented in order 1, 2, 3 but the correct order is 3, 1, 2.", [3, 1, 2]),
        ("The clips are shown as: Video 1, Video 2, Video 3.", None),
        # markers are positions, whatever their form
        ("1 - Video 3\n2 - Video 1\n3 - Video 2", [3, 1, 2]),
        (
            "**1. Video 3**: jacking up\n**2. Video 1**: removing\n**3. Video 2**: fitting",
            [3, 1, 2],
        ),
        ("3) Video 2\n1) Video 3\n2) Video 1", [3, 1, 2]),
        ("1) Video 3\n1) Video 1\n3) Video 2", None),  # a position twice
        ("I think it's 3, 1, 2.", [3, 1, 2]),
        # a caption that names a clip, unbracketed: not told from an item
        ("Video 2: rinse Video 4 pots, Video 1: spray", None),
        ("<think>draft</think>", None),  # nothing after the draft
    ],
)
def test_issue_40_readers_stop_where_the_answer_does(text: str, expected: list[int] | None) -> None:
    assert parse_order(text) == expected
