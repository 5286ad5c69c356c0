"""Scoring of SPLICE's question formats (``splice_formats``): pairwise "which came first?"
and multiple choice over candidate orders, as the metric's ``pairwise`` and ``choice``
configs.

A sibling of ``splice_metric.py``, which imports it relatively so that ``evaluate.load``
copies it beside the metric script (evaluate copies a script's ``from .name import``
modules) and the Space ships both files. Standard library only.

Each question has ``num_options`` options and one right one; the answer is the 1-based
number of an option. Chance is exact per question (``1 / num_options``: 0.5 for a pair,
1/k for k candidate orders), so the expected accuracy of random answers is the mean of
those, ``chance`` in every result. A reply is read with ``parse_choice`` or
``parse_pairwise`` with the care of ``parse_order``: the last ``<answer>`` block if there
is one, else an answer cue ("the answer is ..."), else a reply that is only an answer;
anything ambiguous (two options named) is unparsed rather than guessed, and counted apart.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from .order_commitment import corrects
from .order_words import CAPTION_MARK, mask_captions, word_alternatives

# splice_formats' QUESTION_FORMATS and LETTERS: copied, since the metric stands alone
# (tests/test_splice_formats.py checks that they agree).
QUESTION_CONFIGS = ("pairwise", "choice")
LETTERS = "ABCDEFGH"

# Every scan below runs on an ASCII-lower-cased copy of the reply (same length, so its
# positions hold in the reply), case-sensitively, with each word's look-behind after it: the
# scans then start at the words' letters, so a reply of any length is read in linear time.
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_TAG_MARK = re.compile(r"<\s*(/?)\s*answer\s*>")
_CUE_WORD = word_alternatives("answer", "option", "choice", before=r"\w")
_CHOOSE = word_alternatives("choose", "pick", "select", "go with", "opt for", before=r"\w")
# where a reply commits to an option: "the answer is B", "Answer: B", "the correct option is
# C", "I choose C"; an option merely named ("Option B would put Video 1 first") is no answer
_CUE = re.compile(
    rf"(?:(?:{_CUE_WORD})s?\b\s*(?:is|would be|will be|should be|:|=)|(?:{_CHOOSE})\b)"
    r"\s*[:\-]?\s*([^.!?\n]{1,60})"  # to its sentence's end
)
_VERBS = ("happened", "happens", "came", "comes", "occurred", "occurs", "was", "is")
# "the second clip happened first": the statement's subject (60 characters at most, within
# its sentence, before the verb) is the answer
_VERB = word_alternatives(*_VERBS, before=r"\S")  # after a space, past a subject
_STATEMENT = re.compile(rf"(?:{_VERB})\s+(?:first|earlier)\b")
_SUBJECT_MAX = 60
_OPTION_NUMBER = re.compile(r"^\W*option\s*(\d+)\b", re.IGNORECASE)
_CLIP = re.compile(r"(?<![a-z0-9])(?:video|clip)[\s_#:.-]*(\d+)(?![0-9])", re.IGNORECASE)
_ORDINAL = re.compile(r"\b(first|second|1st|2nd)\b", re.IGNORECASE)
_SHORT = 40  # a reply this short with no tag or cue may be the answer itself
# "... happened first": the question's own word, not an ordinal naming a clip
_CAME_FIRST = re.compile(
    r"\b(?:happened|happens|came|comes|occurred|occurs|was|is|goes|went)\s+first\b", re.I
)


def _last_tag(low: str) -> tuple[int, int] | None:
    """Where the content of the last ``<answer>...</answer>`` is (an opening tag pairs with
    the next closing one), found in one pass."""
    last, opened = None, None
    for mark in _TAG_MARK.finditer(low):
        if not mark.group(1):
            opened = mark.end() if opened is None else opened
        elif opened is not None:
            last, opened = (opened, mark.start()), None
    return last


def _statements(low: str) -> list[tuple[int, int]]:
    """Where the subject of each "... happened first" statement is (what stands before its
    verb in its sentence, 60 characters at most)."""
    found = []
    for verb in _STATEMENT.finditer(low):
        before = max(0, verb.start() - 2 * _SUBJECT_MAX)  # a bounded look back: linear time
        end = before + len(low[before : verb.start()].rstrip())  # where the spaces start
        start = max(0, end - _SUBJECT_MAX)
        breaks = (low.rfind(mark, start, end) + 1 for mark in ".?!\n")  # its sentence's start
        start = max(start, *breaks)
        if start < end:
            found.append((start, end))
    return found


def _tags(low: str) -> list[tuple[int, int]]:
    """Where the content of each closed ``<answer>...</answer>`` is (an opening tag pairs
    with the next closing one), found in one pass."""
    found, opened = [], None
    for mark in _TAG_MARK.finditer(low):
        if not mark.group(1):
            opened = mark.end() if opened is None else opened
        elif opened is not None:
            found.append((opened, mark.start()))
            opened = None
    return found


def _committed(text: str, read: Callable[[str], int | None]) -> int | None:
    """The one option a reply commits to, or None. Where it commits: its tags when it has
    any, else each answer cue ("the answer is ...", "I choose ...") and "... happened first"
    statement, else the whole reply when it is short. Captions in brackets after a clip
    ("Video 3 (shown first)") are no part of it. The committed places must agree: a
    different option replaces the one before only after a correction cue ("wait"), as an
    order does (``order_commitment``)."""
    text = _without_captions(text)
    low = text.translate(_LOWER)
    places = tags = _tags(low)
    if not tags:
        places = [m.span(1) for m in _CUE.finditer(low)] + _statements(low)
    found = [(start, end, read(text[start:end])) for start, end in sorted(places)]
    # an answer tag read as no option is a refused answer; a cue with none after it, a remark
    found = [(start, end, option) for start, end, option in found if tags or option is not None]
    if not found:
        short = not places and len(text.strip()) <= _SHORT
        return read(text) if short else None
    option, last_end = found[0][2], found[0][1]
    for _, end, other in found[1:]:
        if other != option and not corrects(low[last_end:end], final=False):  # its own words too
            return None
        option, last_end = other, end
    return option


def _without_captions(text: str) -> str:
    """The reply without the brackets after a clip that only describe it ("Video 3 (shown
    first) happened second"), which must not change how it is read."""
    low = text.translate(_LOWER)
    masked = mask_captions(low)
    if masked == low:
        return text
    kept = "".join(m if m == CAPTION_MARK else t for t, m in zip(text, masked, strict=True))
    return _MASKED.sub("", kept)


_MASKED = re.compile(rf"[ \t]*[\[(]{CAPTION_MARK}+[\])]?")


def parse_choice(text: str | None, num_options: int) -> int | None:
    """The option (1-based) a reply to a multiple-choice question picks, or None.

    Reads a letter (``B``, ``(B)``, ``B.``, ``Option B``) or an option number (``2``,
    ``option 2``); a letter or number beyond ``num_options`` is read and left to the
    scorer to count as invalid."""
    if not isinstance(text, str):
        return None
    if _last_tag(text.translate(_LOWER)) is None and (judged := _verdicts(text)) is not None:
        return judged or None
    return _committed(text, _choice_in)


def _choice_in(block: str) -> int | None:
    if m := _OPTION_NUMBER.match(block):
        return int(m.group(1))
    letters = re.findall(r"(?<![A-Za-z])([A-H])(?![A-Za-z])", block)
    numbers = re.findall(r"(?<![\w.])(\d+)(?![\w.])", block)
    if (judged := _verdicts(block)) is not None:
        return judged or None
    head = re.match(r"^\W*([A-H])(?:\W|$)", block)
    if head and _ANOTHER.match(block, head.end(1)):  # "A or C", "B, C": no one choice
        return None
    if head:  # "B. Video 2, Video 1": the letter leads, the order after it is its text
        return LETTERS.index(head.group(1)) + 1
    if len(set(letters)) == 1 and not numbers:
        return LETTERS.index(letters[0]) + 1
    if not letters and len(set(numbers)) == 1 and not _CLIP.search(block):
        return int(numbers[0])
    return None


# "A or C", "B, C", "B/C": a second option offered beside the first
_ANOTHER = re.compile(
    r"(?:\s{1,3}(?:or|and|vs\.?)\s{1,3}|\s{0,3}[,/&]\s{0,3})(?:option\s?)?\(?[A-H](?![A-Za-z])"
)
# "A: wrong ... C: right": a verdict per option; the one judged right is the answer
_VERDICT = re.compile(
    r"(?<![A-Za-z])(?:[Oo]ption\s?)?\(?([A-H])\)?\s{0,3}(?:[:.)=]|[-–—]|\bis\b)\s{0,3}[*_]{0,2}"
    r"\s{0,3}(?P<no>(?:[Nn]ot|[Ii]n)\s?)?(?P<word>[Cc]orrect|[Rr]ight|[Tt]rue|[Ww]rong|[Ff]alse)\b"
)


def _verdicts(text: str) -> int | None:
    """The option judged right when two or more options get a verdict ("A: wrong", "C:
    correct", "B is incorrect"); 0 when not exactly one is; None with fewer verdicts."""
    judged: dict[str, bool] = {}
    for m in _VERDICT.finditer(text):
        right = m.group("word").lower() in ("correct", "right", "true") and not m.group("no")
        judged[m.group(1)] = judged.get(m.group(1), False) or right
    if len(judged) < 2:
        return None
    right = [letter for letter, ok in judged.items() if ok]
    return LETTERS.index(right[0]) + 1 if len(right) == 1 else 0


def parse_pairwise(text: str | None, labels: Sequence[int]) -> int | None:
    """Which of the two clips shown (1: the first shown, 2: the second) a reply says
    happened first, or None.

    Reads a clip label (``Video 5``, one of ``labels``, the row labels of the clips in the
    order shown), ``option N``, "first"/"second" (the clip shown first/second), or a bare
    number: a shown label when it is one, else 1 or 2 as an option number."""
    if not isinstance(text, str):
        return None
    shown = [int(x) for x in labels]
    return _committed(text, functools.partial(_pair_in, shown=shown))


def _pair_in(block: str, shown: list[int]) -> int | None:
    if m := _OPTION_NUMBER.match(block):
        return int(m.group(1))
    named = {int(x) for x in _CLIP.findall(block)}
    if named:
        later = _LATER.search(block)
        if len(named) != 1 or not named <= set(shown) or _NEGATION.search(block):
            return None  # "not Video 4": which came first is not said
        if later and not later.group("verb"):
            return None  # "Video 4 (second)": the clip shown second, or the later one?
        at = shown.index(named.pop()) + 1
        return 3 - at if later else at  # "Video 4 came second": the other one
    ordinals = {
        w.lower()[0] for w in _ORDINAL.findall(_CAME_FIRST.sub(" ", block))
    }  # "f"/"1" or "s"/"2"
    ordinals = {"1" if w in "f1" else "2" for w in ordinals}
    numbers = set(re.findall(r"(?<![\w.])(\d+)(?![\w.])", block))
    if len(ordinals) == 1 and not numbers:
        return int(ordinals.pop())
    if len(numbers) == 1 and not ordinals:
        value = int(numbers.pop())
        return shown.index(value) + 1 if value in shown else value
    return None


_CLIP_NAMED = r"(?<![a-z0-9])(?:video|clip)[\s_#:.-]{0,3}\d+"
_PAST_VERB = r"(?:happened|happens|came|comes|occurred|occurs|was|is|goes|went|did|does)"
# "not Video 4", "Video 4 did not happen first", "Video 4 isn't first"
_NEGATION = re.compile(
    rf"\b(?:not|never)\s{{1,3}}{_CLIP_NAMED}|{_CLIP_NAMED}\s{{1,3}}{_PAST_VERB}?(?:\s{{1,3}}not\b|n't\b)",
    re.IGNORECASE,
)
# "Video 4 happened later", "Video 4 comes second": the other clip came first
_LATER = re.compile(
    rf"{_CLIP_NAMED}\W{{0,3}}(?P<verb>{_PAST_VERB}\s{{1,3}})?(?:later|last|second|after|afterwards|next)\b",
    re.IGNORECASE,
)


def _reference(ref: Any, index: int) -> tuple[int, int, list[int]]:
    if not isinstance(ref, dict) or "option" not in ref or "num_options" not in ref:
        raise ValueError(
            f"reference {index}: expected {{'option': int, 'num_options': int}} (the "
            f"question's answer column), got {ref!r}"
        )
    option, count = int(ref["option"]), int(ref["num_options"])
    if not 1 <= option <= count:
        raise ValueError(f"reference {index}: option {option} is not in 1..{count}")
    return option, count, [int(x) for x in ref.get("labels") or []]


def read_answer(prediction: Any, config: str, count: int, labels: list[int]) -> int | None:
    """A prediction as an option number: an int as it is, text through the parser."""
    if isinstance(prediction, bool) or prediction is None:
        return None
    if isinstance(prediction, int):
        return prediction
    if config == "pairwise":
        return parse_pairwise(prediction, labels)
    return parse_choice(prediction, count)


def score_questions(
    predictions: Sequence[Any], references: Sequence[Any], config: str
) -> dict[str, Any]:
    """Accuracy of option answers, with exact chance, over every question.

    A prediction is an option number (1-based) or the model's text; an unread answer
    (``None``, text naming no single option) is unparsed, a number outside the options
    invalid; both count as wrong, and the rates say how many."""
    if config not in QUESTION_CONFIGS:
        raise ValueError(f"config {config!r} is not a question format {QUESTION_CONFIGS}")
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions for {len(references)} references")
    cells: dict[int, list[int]] = {}  # num_options -> [count, right, unparsed, invalid]
    for i, (pred, ref) in enumerate(zip(predictions, references, strict=True)):
        option, count, labels = _reference(ref, i)
        answer = read_answer(pred, config, count, labels)
        cell = cells.setdefault(count, [0, 0, 0, 0])
        cell[0] += 1
        cell[1] += answer == option
        cell[2] += answer is None
        cell[3] += answer is not None and not 1 <= answer <= count
    return {
        **_cell(list(cells.items())),
        "by_num_options": {k: _cell([(k, c)]) for k, c in sorted(cells.items())},
    }


def _cell(cells: list[tuple[int, list[int]]]) -> dict[str, Any]:
    total = sum(c[0] for _, c in cells)
    if not total:
        raise ValueError("no questions to score")
    right, unparsed, invalid = (sum(c[i] for _, c in cells) for i in (1, 2, 3))
    chance = sum(c[0] / k for k, c in cells) / total
    accuracy = right / total
    return {
        "count": total,
        "accuracy": accuracy,
        "chance": chance,  # the exact expected accuracy of uniformly random answers
        "stderr": math.sqrt(accuracy * (1 - accuracy) / total),
        "unparsed_rate": unparsed / total,
        "invalid_rate": (unparsed + invalid) / total,
    }


def answer_text(option: int, config: str, labels: Sequence[int] = ()) -> str:
    """An answer written as the question prompts ask for it (what baselines emit, so that
    it goes through the same parser as a model's)."""
    if config == "pairwise":
        return f"<answer>Video {labels[option - 1]}</answer>"
    return f"<answer>{LETTERS[option - 1]}</answer>"


def question_scorer(config: str) -> Callable[..., dict[str, Any]] | None:
    """`score_questions` for a question config, None for the order configs."""
    if config not in QUESTION_CONFIGS:
        return None
    return functools.partial(score_questions, config=config)


def metric_features(config: str, answers: Any, labels: Any) -> Any:
    """The evaluate features of a config: for the order configs ``answers`` and ``labels``
    (the metric's), for a question config text answers (an option number is stored as
    ``option N``) and the question's answer with the labels shown."""
    import datasets

    if config not in QUESTION_CONFIGS:
        return datasets.Features({"predictions": answers, "references": labels})
    return datasets.Features(
        {
            "predictions": datasets.Value("string"),
            "references": {
                "option": datasets.Value("int64"),
                "num_options": datasets.Value("int64"),
                "labels": datasets.List(datasets.Value("int64")),
            },
        }
    )


def storable(prediction: Any) -> str | None:
    """A prediction as the question configs store it: text as it is, a number as
    ``option N`` (which both parsers read as that option)."""
    if isinstance(prediction, int) and not isinstance(prediction, bool):
        return f"option {prediction}"
    return prediction if isinstance(prediction, str) else None
