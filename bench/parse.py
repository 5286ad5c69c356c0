"""Speed of the answer parsers (`parse_order`, `parse_choice`, `parse_pairwise`) on degenerate
answers, against a baseline measured in the same run: one regular-expression pass over the
same text (``re.findall(r"\\w+", text)``), the least any reader of the text costs.
Each answer is also parsed at 16,000 and at 128,000 characters: the ratio of the two times
is about 8 in linear time and about 64 in quadratic time (issue 40 asks for it).

Need (issue 31, defect 8): parsing is linear in the answer's length. A 32,768-character
looping answer with many colons took 21-26 s and a 200 kB answer kept `splice run` busy past
150 s; each is read in well under a second now. Printed per answer: the parse time, its ratio
to the baseline pass, and the ratio of the time at twice the length to the time at the
length (about 2 for linear time, about 4 for quadratic).

Run: .venv/bin/python bench/parse.py [--size 200000]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from splice_metric import parse_choice, parse_order, parse_pairwise  # noqa: E402

# name -> a unit repeated to the wanted length
ANSWERS = {
    "looping colons": "Video 1: the person cuts. Answer: Step 2: then: Video 3: wait: ",
    "bare colons": ":",
    "open brackets": "[",
    "open braces": "{",
    "position pairs": "Video 1: 3, ",
    "stated orders": "Final answer: 3, 1, 2. ",
    "unclosed tags": "<order><answer>",
    "one long word": "x",
    # issue 40's readers: captioned items, markers, corrections, drafts, verdicts
    "captioned items": "Video 1 - [cut 3, Video 2: x], ",
    "unclosed captions": "Video 1 - [",
    "item lines": "1) Video 2 - cut: 3, then\n",
    "thinking tags": "<think></think>",
    "alternatives": "or 1, 2 alternatively Video 3 ",
    "presented cues": "shown as 1: 2, ",
    "verdicts": "A: wrong, B is correct ",
    "letter, spaces": "A" + " " * 63,
    # issue 47's readers: positions in words, headers, offered runs, captions, candidates
    "positions, words": "Video 1 takes place second, Video 2 (the 3rd step) ",
    "position headers": "Positions (Video 1, Video 2): 2, ",
    "offered runs": "1, 2 -> 3 or a, b. ",
    "captions with or": "Video 1 - [fry or grill], ",
    "corrections": "<order>1, 2</order> wait, the correct order is 2, 1. ",
    "option cues": "I choose C. Option B would put Video 1 first. ",
    "position sets": "Video 1: 3, Video 2: 1. Blah. ",
    "happened first": "x happened first ",
}
SMALL, LARGE = 16_000, 128_000  # characters: time linear in the length gives a ratio of 8


def _best(fn: Callable[[], object], repeat: int = 5) -> float:
    """The least CPU time of this process over ``repeat`` runs (the machine may be shared:
    time spent in other processes is not the parser's)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def _text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _parse_all(text: str) -> None:
    parse_order(text)
    parse_choice(text, 4)
    parse_pairwise(text, [1, 2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200_000, help="characters per answer")
    args = parser.parse_args()
    print(f"answers of {args.size:,} characters; baseline: one re.findall(r'\\w+') pass")
    print(
        f"{'answer':<18} {'parse s':>9} {'baseline s':>11} {'x baseline':>11} {'2x len':>7} "
        f"{'128k/16k':>9}"
    )
    worst, worst_growth = 0.0, 0.0
    for name, unit in ANSWERS.items():
        text, double = _text(unit, args.size), _text(unit, 2 * args.size)
        took = _best(lambda t=text: _parse_all(t))
        took_double = _best(lambda t=double: _parse_all(t))
        baseline = _best(lambda t=text: re.findall(r"\w+", t))
        short, long = _text(unit, SMALL), _text(unit, LARGE)
        small = _best(lambda t=short: _parse_all(t))
        large = _best(lambda t=long: _parse_all(t))
        growth = large / max(small, 1e-6)
        worst, worst_growth = max(worst, took), max(worst_growth, growth)
        ratio = took / max(baseline, 1e-6)
        print(
            f"{name:<18} {took:>9.4f} {baseline:>11.4f} {ratio:>11.1f} "
            f"{took_double / max(took, 1e-6):>7.2f} {growth:>9.1f}"
        )
    print(f"slowest answer: {worst:.3f} s (need: well under 1 s)")
    print(
        f"largest time ratio 128 kB / 16 kB: {worst_growth:.1f} (linear time: about 8; "
        "quadratic: about 64)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
