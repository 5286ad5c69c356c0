"""``splice annotate space``: a folder that runs the annotation page as a Gradio Space.

The Space carries its own copy of the few modules the page needs (the app, the sheet
format, the error type), so its only requirement is Gradio at the pinned version. The
clips go in only with ``--public``: a package holds cuts of other people's YouTube videos,
and a Space's files are as public as the Space, so by default the Space reads the package
from its persistent storage (``SPLICE_PACKAGE``, default ``/data/package``) and the
organiser uploads it there. ``key.json`` is never copied.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from splice_build.errors import UserError

from .app import GRADIO_VERSION
from .layout import KEY_NAME, MODALITY_DIRS, SHEET_NAME
from .package import read_package

VENDORED = (
    "splice_build.atomic",
    "splice_build.errors",
    "splice_eval.human.sheets",
    "splice_eval.human.app",
    "splice_eval.human.app.layout",
    "splice_eval.human.app.form",
    "splice_eval.human.app.claims",
    "splice_eval.human.app.owners",
    "splice_eval.human.app.guard",
    "splice_eval.human.app.logins",
    "splice_eval.human.app.package",
    "splice_eval.human.app.store",
    "splice_eval.human.app.app",
    "splice_eval.human.app.cli",
)
PACKAGE_DIR = "package"

APP = '''\
"""The SPLICE annotation page as a Space (written by `splice annotate space`)."""

import os
import sys
from pathlib import Path

from splice_eval.human.app.app import launch
from splice_eval.human.app.cli import parse_passwords, space_warnings
from splice_eval.human.app.package import read_package
from splice_eval.human.app.store import AnswerStore

HERE = Path(__file__).resolve().parent
STORAGE = Path("/data")  # a Space's persistent storage, when it has one
default = HERE / "{package_dir}" if {public} else STORAGE / "package"
package = read_package(os.environ.get("SPLICE_PACKAGE", default))
answers = STORAGE / "answers" if STORAGE.is_dir() else HERE / "answers"
store = AnswerStore(os.environ.get("SPLICE_ANSWERS", answers))
secret = os.environ.get("SPLICE_PASSWORDS")
passwords = parse_passwords(secret, "SPLICE_PASSWORDS", sorted(package.tasks)) if secret else None
warnings = space_warnings(Path(store.folder), STORAGE, bool(passwords))
for warning in warnings:  # the Space's log; the page shows them too
    print(f"splice annotate space: WARNING: {{warning}}", file=sys.stderr, flush=True)
launch(
    package,
    store,
    host=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
    port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
    passwords=passwords,
    warnings=warnings,
)
'''

README = """\
---
title: SPLICE annotation
emoji: 🎬
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: {version}
app_file: app.py
python_version: "3.11"
pinned: false
---

# SPLICE human ordering protocol

Annotators open this Space, choose their name (or log in, when the `SPLICE_PASSWORDS`
secret holds `name:password` lines), watch each folder's shuffled parts and give every
part its position, or mark the folder unknown. Every submit is saved to `<name>.csv` in
`/data/answers/` (the Space's persistent storage; `answers/` beside `app.py` without
it), in the sheet format `splice annotate ingest` reads:

    splice annotate ingest answers/*.csv --key key.json --out human/

Without persistent storage (answers then go to a disk the Hub wipes when the Space
restarts) or without the `SPLICE_PASSWORDS` secret (anyone who can open the Space answers
under any name), the Space says so in its log and at the top of the page.

{clips}

The answer key (`key.json`) is not here and never should be: the organiser keeps it.
"""
PUBLIC = "The clips are in `package/` (written with `--public`): publish this Space only if "
PUBLIC += "you may publish them."
PRIVATE = """\
The clips are **not** in this folder: the package was treated as private (the default),
since its clips are cuts of other people's videos and a Space's files are as public as
the Space. Upload the annotator folders of `annotate export` (without `key.json`) to the
Space's persistent storage as `/data/package/`, or set `SPLICE_PACKAGE` to where they are.
Re-run `splice annotate space --public` to include them when you may publish them."""


def write_space(package_dir: str | Path, out: str | Path, public: bool = False) -> Path:
    """Write the Space; refuses an ``out`` that exists and is not empty."""
    package = read_package(package_dir)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"--out {out}: exists and is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)
    for name in VENDORED:
        _vendor(name, out)
    (out / "app.py").write_text(APP.format(package_dir=PACKAGE_DIR, public=public), "utf-8")
    (out / "requirements.txt").write_text(f"gradio=={GRADIO_VERSION}\n", "utf-8")
    text = README.format(version=GRADIO_VERSION, clips=PUBLIC if public else PRIVATE)
    (out / "README.md").write_text(text, "utf-8")
    if public:
        _copy_package(package.root, sorted(package.tasks), out / PACKAGE_DIR)
    return out


def _vendor(name: str, out: Path) -> None:
    module = importlib.import_module(name)
    source = Path(module.__file__)
    target = out.joinpath(*name.split("."))
    if source.name == "__init__.py":
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target / "__init__.py")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    for parent in target.parents:
        if parent == out:
            break
        (parent / "__init__.py").touch()
    shutil.copyfile(source, target.with_suffix(".py"))


def _copy_package(root: Path, annotators: list[str], target: Path) -> None:
    """The annotator folders: sheet, instructions and clips; never the key or answers."""
    single = (root / SHEET_NAME).is_file()
    for name in annotators:
        source = root if single else root / name
        dest = target / name
        dest.mkdir(parents=True)
        for item in source.iterdir():
            if item.name in MODALITY_DIRS.values():
                shutil.copytree(item, dest / item.name)
            elif item.is_file() and item.suffix in (".csv", ".md") and item.name != KEY_NAME:
                shutil.copyfile(item, dest / item.name)
