"""Regenerate ``coin_demo.json``, the demo's bundled annotations, from the real COIN file.

The demo renders a stand-in source video of each entry's full duration, so it wants short
videos; it also wants every domain and every clip count 2..7. The rule, deterministic:
domain number d (in the taxonomy's order) gets one video with 2 + (2d mod 6) steps and one
with 3 + (2d mod 6) steps (so each count 2..7 appears four times), each the shortest video
of that domain with that step count, a duration under MAX_DURATION s, every step at least
MIN_STEP s long and a task not already used. Entries are copied verbatim (same fields,
values and field order) as ``{"database": {video_id: entry}}``;
tests/build/demo/test_make_coin_demo.py checks that against the real file and reruns this
rule.

Usage: python build/demo/make_coin_demo.py COIN_partial_10070_official_subset.json [OUT]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MAX_DURATION = 120.0
MIN_STEP = 2.0
OUT = Path(__file__).with_name("coin_demo.json")


def pick(database: dict) -> dict:
    """The demo's entries (verbatim) chosen from a COIN ``database`` mapping."""
    from splice_build.stages import taxonomy

    tax = taxonomy.load()
    chosen: dict = {}
    for d, domain in enumerate(tax.domains):
        used_tasks: set[str] = set()
        for n in (2 + (2 * d) % 6, 3 + (2 * d) % 6):
            candidates = [
                (entry["duration"], vid)
                for vid, entry in database.items()
                if len(entry["annotation"]) == n
                and entry["duration"] < MAX_DURATION
                and tax.domain_of(entry["class"]) == domain
                and tax.resolve(entry["class"]) not in used_tasks
                and all(a["segment"][1] - a["segment"][0] >= MIN_STEP for a in entry["annotation"])
            ]
            if not candidates:
                raise ValueError(f"no demo candidate with {n} steps in domain {domain!r}")
            vid = min(candidates)[1]
            chosen[vid] = database[vid]
            used_tasks.add(tax.resolve(database[vid]["class"]))
    return {"database": dict(sorted(chosen.items()))}


def main(argv: list[str]) -> int:
    source = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else OUT
    demo = pick(json.loads(source.read_text(encoding="utf-8"))["database"])
    out.write_text(json.dumps(demo, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(demo['database'])} entries to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
