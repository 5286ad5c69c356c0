"""The house bars of the brief's style (issue 49 section 7): a module under 500 lines,
`splice_dataset.py` at most 450 (the schema and loader users read whole), a package folder at
most 12 modules (a new capability is a new room, not growth of an old one)."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import REPO

PACKAGES = ("build", "splice_eval", "splice_metric", "lmms_eval_tasks")
MODULE_LINES = 500
DATASET_LINES = 450
FOLDER_MODULES = 12


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def _sources() -> list[Path]:
    found = [REPO / "splice_dataset.py", REPO / "splice_formats.py"]
    for package in PACKAGES:
        found += [p for p in (REPO / package).rglob("*.py") if "templates" not in p.parts]
    return found


def test_splice_dataset_is_within_its_bar():
    assert _lines(REPO / "splice_dataset.py") <= DATASET_LINES


def test_every_module_is_under_500_lines():
    over = {p.relative_to(REPO).as_posix(): _lines(p) for p in _sources()}
    assert {p: n for p, n in over.items() if n >= MODULE_LINES} == {}


def test_every_package_folder_holds_at_most_12_modules():
    folders: dict[str, int] = {}
    for path in _sources():
        if path.parent != REPO and path.name != "__init__.py":
            key = path.parent.relative_to(REPO).as_posix()
            folders[key] = folders.get(key, 0) + 1
    assert {f: n for f, n in folders.items() if n > FOLDER_MODULES} == {}
