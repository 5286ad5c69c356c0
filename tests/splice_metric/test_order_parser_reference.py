"""parse_order against the authors' parsing rules (issue 40, part 1): on the corpus of answer
forms (tests/data/answers_corpus.jsonl), every form the authors' release reads as the order
meant, ours reads as that order too. The reference is tests/support/authors_parser.py, a
clean-room implementation of their ``utils/evaluation.py`` rules (see its docstring)."""

from __future__ import annotations

import json

import pytest

from splice_metric import parse_order
from tests.support.authors_parser import authors_order, order_block
from tests.support.paths import DATA

ROWS = [
    json.loads(line)
    for line in (DATA / "answers_corpus.jsonl").read_text(encoding="utf-8").splitlines()
]
# the forms with an order meant that the authors' rules read as it
READ_BY_THE_AUTHORS = [
    r
    for r in ROWS
    if r["expected"] != "unparsed"
    and authors_order(r["answer"], len(r["expected"])) == r["expected"]
]


@pytest.mark.parametrize("row", READ_BY_THE_AUTHORS, ids=[r["form"] for r in READ_BY_THE_AUTHORS])
def test_every_form_the_authors_read_right_we_read_right(row: dict) -> None:
    assert parse_order(row["answer"]) == row["expected"]


def test_the_comparison_covers_the_issue_forms() -> None:
    """Not a vacuous comparison: the captioned forms of the regression are among the forms
    the reference reads right, with the prompt's own form and the numbered lists."""
    forms = {r["form"] for r in READ_BY_THE_AUTHORS}
    for needed in ("captioned clips, dash and brackets", "captioned clips, colons",
                   "captioned clips, parentheses", "captioned clips, one a line",
                   "captioned clips, numbered list", "the prompt's own form",
                   "list markers with a closing parenthesis"):  # fmt: skip
        assert needed in forms
    assert len(forms) >= 15


@pytest.mark.parametrize(
    ("answer", "num_clips", "expected"),
    [
        ("x <order>Video 2, Video 1</order> <order>Video 1, Video 2</order>", 2, [2, 1]),
        ("<order>3, 1, 2<order>", 3, [3, 1, 2]),  # a missing slash
        ("</order>2 1</order>", 2, [2, 1]),  # a closing tag for the opening one
        ("<order>00:12 2, 1</order>", 2, [2, 1]),  # a time is no label
        ("Video 3 first, then video 1, then Video 3 again, then Video2", 3, [3, 1, 2]),
        ("<order>4, 1</order>", 3, [1]),  # labels outside the row's are dropped
        ("no tags, no clips", 3, None),
    ],
)
def test_the_reference_follows_the_authors_rules(answer, num_clips, expected) -> None:
    assert authors_order(answer, num_clips) == expected
    assert order_block("<ORDER>a</Order>") == "a"


def _clips(row: dict) -> int:
    return len(row["expected"]) if isinstance(row["expected"], list) else row.get("clips", 3)


def tally(read) -> dict[str, int]:
    """Over the corpus: ``misreads``, a valid order other than the one the answer commits to
    (for an answer that commits to none, any valid order: a guess); ``read_right``, the
    order committed to, or unparsed where there is none."""
    counts = {"misreads": 0, "read_right": 0}
    for row in ROWS:
        k, expected = _clips(row), row["expected"]
        got = read(row["answer"], k)
        wanted = None if expected == "unparsed" else expected
        valid = got is not None and sorted(got) == list(range(1, k + 1))
        counts["misreads"] += valid and got != wanted
        counts["read_right"] += got == wanted
    return counts


def test_no_misread_on_any_form_and_never_fewer_read_right_than_the_authors() -> None:
    """Issue 47: misreads 0 for ours on every form (the authors' among them), forms read
    right never fewer than theirs; the figures are printed for the report (pytest -s)."""
    ours = tally(lambda answer, k: parse_order(answer))
    theirs = tally(authors_order)
    print(f"\ncorpus of {len(ROWS)} answers: ours {ours}, the authors' {theirs}")
    assert ours["misreads"] == 0
    assert theirs["misreads"] > 0  # the corpus holds the forms the authors' rules misread
    assert ours["read_right"] >= theirs["read_right"]
    coin = [r for r in ROWS if r["form"].startswith("COIN labels")]
    assert len(coin) >= 30 and any(" or " in r["answer"] for r in coin)
