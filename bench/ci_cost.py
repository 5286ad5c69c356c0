"""What `make test` costs (issue 41): the disk each environment it builds takes, their total
against the 10 GB budget, and the slowest tests of the last run with their share of its time.

`make test` writes its per-test durations to ``.pytest-report.xml`` (pytest's JUnit XML);
`make ci-cost` runs this script on it. Without a report only the disk is printed.

    python bench/ci_cost.py [--report .pytest-report.xml] [--top 20]
"""

from __future__ import annotations

import argparse
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# What `make test` builds (the Makefile says what each holds); the last two are the venvs
# .venv-torch and .venv-models replaced, shown when an old clone still has them.
ENVIRONMENTS = (".venv", ".venv-torch", ".venv-models", ".venv-space", ".venv-floor")
REPLACED = (".venv-lmms", ".venv-vlmeval")
BUDGET = 10 * 1000**3  # bytes: issue 41's 10 GB for every environment together
GB = 1000**3


def disk_used(folder: Path) -> int:
    """Bytes on disk under ``folder`` as ``du`` counts them: allocated blocks, each file
    once (hard links), symbolic links not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            st = os.lstat(os.path.join(root, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


@dataclass(frozen=True)
class CaseTime:
    name: str
    seconds: float


def case_times(report: Path) -> list[CaseTime]:
    """Every test case of a JUnit XML report with its time (setup, call and teardown)."""
    cases = ET.parse(report).getroot().iter("testcase")
    return [
        CaseTime(f"{c.get('classname', '')}::{c.get('name', '')}", float(c.get("time") or 0))
        for c in cases
    ]


def print_disk(repo: Path) -> None:
    print("disk used by each environment `make test` builds:")
    total = 0
    for name in ENVIRONMENTS + REPLACED:
        folder = repo / name
        if not folder.is_dir():
            if name in ENVIRONMENTS:
                print(f"  {name:14} (not built)")
            continue
        used = disk_used(folder)
        total += used
        note = "  (replaced by .venv-torch + .venv-models: remove it)" if name in REPLACED else ""
        print(f"  {name:14} {used / GB:6.2f} GB{note}")
    print(
        f"  {'total':14} {total / GB:6.2f} GB  (budget {BUDGET / GB:.0f} GB: {total / BUDGET:.0%})"
    )


def print_slowest(report: Path, top: int) -> None:
    times = sorted(case_times(report), key=lambda t: t.seconds, reverse=True)
    whole = sum(t.seconds for t in times)
    print(f"\n{len(times)} tests, {whole / 60:.1f} min of test time in {report.name}")
    print("(summed over the workers; the run's wall time is about this over their number)")
    print(f"the slowest {min(top, len(times))}:")
    for t in times[:top]:
        print(f"  {t.seconds:8.1f} s  {t.seconds / whole:5.1%}  {t.name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, default=REPO / ".pytest-report.xml")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print_disk(REPO)
    if args.report.is_file():
        print_slowest(args.report, args.top)
    else:
        print(f"\nno test report at {args.report}: `make test` writes it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
