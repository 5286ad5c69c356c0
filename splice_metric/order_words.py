"""The words every reader of order answers shares: clip names, labels, positions, sentence
ends, and the masking of captions. Standard library only (a sibling of ``splice_metric.py``,
which names it among its relative imports, since evaluate copies only those).

Every scan runs on lower-cased text with case-sensitive patterns whose scans start at
literals (each word's look-behind after it), so that a reader takes time linear in the
answer's length."""

from __future__ import annotations

import re


def word_alternatives(*words: str, before: str = "a-z0-9") -> str:
    """A pattern for any of ``words`` not preceded by a character of ``before``, each word's
    look-behind after it, so that a scan starts at the words' letters and not at every
    character (shared with questions.py)."""
    return "|".join(rf"{word}(?<![{before}].{{{len(word)}}})" for word in words)


WORD = r"\w"
CLIP_WORD = rf"(?:{word_alternatives('random_part', 'video', 'clip', 'part', 'segment')})[\s_#:.-]*"
REFERENCE = re.compile(rf"{CLIP_WORD}(\d+|[a-z])(?![a-z0-9])")
NUMBERED_REFERENCE = re.compile(rf"{CLIP_WORD}\d")
LABEL_MAX = 18  # digits: a longer number is no clip label (and int() refuses 4,300)
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
# "the clips are presented as: Video 1, Video 2, Video 3": the order shown, not an answer
_SHOWN_WORDS = ("presented", "shown", "given", "provided", "input", "shuffled", "appear")
PRESENTED = re.compile(rf"(?:{word_alternatives(*_SHOWN_WORDS, before=WORD)})\b")


def same_kind(tokens: list[str]) -> list[int] | None:
    """Labels when the tokens are all numbers, or two or more letters among the first
    len(tokens) letters (so an echoed placeholder "Video X, Video Y" is not read as 24, 25,
    and a lone "A", a multiple-choice answer, is not an order)."""
    if tokens and all(t.isdecimal() and len(t) <= LABEL_MAX for t in tokens):
        return [int(t) for t in tokens]
    labels = [ord(t) - ord("a") + 1 for t in tokens if t.isalpha()]
    return labels if len(tokens) > 1 and len(labels) == len(tokens) >= max(labels) else None


def position(word: str, count: int) -> int:
    """The 1-based position a word gives ("3", "3rd", "third", "last" of ``count``), 0 when
    it gives none that int() can read."""
    if word in ORDINALS:
        return ORDINALS.index(word) + 1
    digits = word.rstrip("stndrh")
    return (
        count
        if word == "last"
        else int(digits)
        if digits.isdecimal() and len(digits) <= LABEL_MAX
        else 0
    )


def is_permutation(order: list[int] | None) -> bool:
    return bool(order) and sorted(order) == list(range(1, len(order) + 1))


# --- captions ---------------------------------------------------------------------------------

# a bracket after a clip: "Video 2 - [fry or grill]", "Video 3 (pump up the tire)"
_CAPTIONED = re.compile(
    rf"{CLIP_WORD}(?:\d+|[a-z])(?![a-z0-9])[*\"'`]*[ \t]*(?:[-–—:][ \t]*)?[\[(]"
)
_POS_WORDS = "|".join(ORDINALS)
# what a bracket after a clip may say instead of a caption: a position ("(2nd)", "(the second
# step)", "(position 2)", "(step 2)", "(last)"), read by the position reader
POSITION_ONLY = re.compile(
    rf"\s*(?:(?:at|in)\s+)?(?:the\s+)?(?:(?:position|place|step)\s*(?:no\.?\s*|#\s*)?)?"
    rf"(?:\d{{1,3}}(?:st|nd|rd|th)?|{_POS_WORDS}|last)(?:\s+(?:position|place|step|one|clip))?\s*"
)
CAPTION_MARK = "~"  # what a masked caption's characters become: no reader reads it


def mask_captions(text: str) -> str:
    """The text with each bracketed caption after a clip ("Video 2 - [fry or grill, Video
    4]") turned into ``~``, so that no word in it (an "or", a digit, a clip, a cue) is read
    by any reader: a caption never changes how the answer is read. A bracket that only
    gives a position ("Video 3 (2nd)") is kept for the position reader. Each bracket is
    scanned once; an unclosed one runs to its line's end."""
    out, pos = [], 0
    for ref in _CAPTIONED.finditer(text):
        if ref.start() < pos:  # inside a caption already masked
            continue
        opened = ref.end() - 1
        depth, end = 0, len(text)
        for at in range(opened, len(text)):
            depth += (text[at] in "[(") - (text[at] in ")]")
            if depth == 0 or text[at] == "\n":
                end = at
                break
        if POSITION_ONLY.fullmatch(text, opened + 1, end):
            out.append(text[pos:end])
        else:
            out += [text[pos : opened + 1], CAPTION_MARK * (end - opened - 1)]
        pos = end
    return "".join(out) + text[pos:]


# --- the words that may introduce a stated order -----------------------------------------------

# What a statement's head (its words from the clause's start to its labels) may say: the
# asking, the answer's name, its qualities, reasoning connectives, correction cues. Anything
# else there (another, alternatively, or, possibly, a position, a direction not below) is not
# understood, and the statement is no answer.
HEAD_WORDS = frozenset(
    """a all am an analysis and answer answers are arranged arrangement as at based be been
    believe best but careful carefully chronological chronologically clip clips clips' closer
    conclude conclusion confident consideration considering correct corrected correction
    determined do events fact final finally first fix follows following for from given go
    guess hence here here's hmm i i'd i'm i've in is it it's its let likely logical looking
    me most my new no now of ok okay on order ordering ordered orders our output overall
    predicted probable proper propose put re-examining reasoning reconsidering reflection
    response result revised right say second seems segments sequence should so solution sorted
    steps suggest sum summary that that's the their them then therefore these think this
    thought thus to true updated upon video videos wait was we will with would wrong yes
    incorrect mistake made sorry oops scratch""".split()
)
_HEAD_WORD = re.compile(r"[a-z][a-z'-]*")
# a direction the list is given in, read by the statement reader: latest first is reversed
REVERSED = re.compile(
    r"(?:\bfrom[ \t]+)?(?:\bthe[ \t]+)?\b(?:latest|last|end|newest|most[ \t]+recent)[ \t]*"
    r"(?:to|->|→|-)[ \t]*(?:the[ \t]+)?(?:earliest|first|start|beginning|oldest)\b"
    r"|\breverse(?:d)?(?:[ \t]+(?:chronological|temporal))?(?:[ \t]+order)?\b|\bbackwards?\b"
    r"|\bdescending\b|\bin[ \t]+reverse\b"
)
FORWARD = re.compile(
    r"(?:\bfrom[ \t]+)?(?:\bthe[ \t]+)?\b(?:earliest|first|start|beginning|oldest)[ \t]*"
    r"(?:to|->|→|-)[ \t]*(?:the[ \t]+)?(?:latest|last|end|finish|newest|most[ \t]+recent)\b"
)


_DIRECTION_WORDS = frozenset(
    """latest last end newest most recent earliest first start beginning oldest finish reverse
    reversed backward backwards descending from to the in order chronological temporal""".split()
)
_HEAD_MAX = 200  # characters: a head is a clause; its last ones are looked at (linear time)


def head_understood(head: str) -> bool:
    """Whether every word of a statement's head is one a stated answer may have (a
    direction phrase counts: the statement reader reads it)."""
    head = head[-_HEAD_MAX:]
    unknown = set(_HEAD_WORD.findall(head)) - HEAD_WORDS
    if not unknown or not unknown <= _DIRECTION_WORDS:
        return not unknown
    head = FORWARD.sub(" ", REVERSED.sub(" ", head))
    return all(word in HEAD_WORDS for word in _HEAD_WORD.findall(head))
