"""``splice export-task TOOLKIT --out DIR``: write the files a toolkit's pull request adds.

Each toolkit has its module (``lmms_eval``, ``vlmevalkit``); ``vendor`` copies the product's
modules they run. The files land under ``DIR`` at their paths in the toolkit's repository,
so ``DIR`` is what the pull request adds (``docs/upstream.md``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import splice_dataset as schema
from splice_build.atomic import atomic_path
from splice_build.errors import UserError, disk_error
from splice_eval.export.vendor import ExportedFile

TOOLKITS = ("lmms-eval", "vlmevalkit")


def files_for(toolkit: str, published: str = schema.PUBLISHED_ID) -> list[ExportedFile]:
    """The toolkit's exported files, in memory (the staleness test compares them)."""
    if toolkit == "lmms-eval":
        from splice_eval.export import lmms_eval

        return lmms_eval.export_files(published)
    if toolkit == "vlmevalkit":
        from splice_eval.export import vlmevalkit

        return vlmevalkit.export_files(published)
    raise UserError(f"export-task: unknown toolkit {toolkit!r} (one of {', '.join(TOOLKITS)})")


def write_files(files: list[ExportedFile], out: Path) -> list[Path]:
    """Each file under ``out`` (atomically: a reader never sees half a file)."""
    written = []
    for f in files:
        path = out / f.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                tmp.write_text(f.text, encoding="utf-8")
        except OSError as exc:
            raise disk_error(f"--out {out}", exc, "files written before it stay") from exc
        written.append(path)
    return written


def owned_folders(toolkit: str) -> tuple[str, ...]:
    """The folders of the toolkit's repository the export alone writes (a file there that a
    fresh export lacks is left over from an older one)."""
    from splice_eval.export import lmms_eval, vlmevalkit

    owned = {"lmms-eval": (lmms_eval.TASK_FOLDER,), "vlmevalkit": (vlmevalkit.LIB_FOLDER,)}
    return owned.get(toolkit, ())


def stale_files(files: list[ExportedFile], out: Path, owned: tuple[str, ...] = ()) -> list[str]:
    """The files of a fresh export that ``out`` lacks or holds with other text, then the
    files in its ``owned`` folders that a fresh export lacks, by their path (an export made
    before the product's parser, prompts or task changed). Python's caches are not files."""
    fresh = {f.path for f in files}
    left_over = [
        p.relative_to(out).as_posix()
        for folder in owned
        for p in sorted((out / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    stale = []
    for f in files:
        path = out / f.path
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != f.text:
            stale.append(f.path)
    return stale + [path for path in left_over if path not in fresh]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("toolkit", choices=TOOLKITS, help="the toolkit whose files to write")
    parser.add_argument(
        "--out", type=Path, required=True, help="folder to write them in, at their repo paths"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing: fail, naming the file, if --out differs from a fresh export",
    )


def run(args: argparse.Namespace) -> int:
    files = files_for(args.toolkit)
    if args.check:
        stale = stale_files(files, args.out, owned_folders(args.toolkit))
        if stale:
            raise UserError(
                f"{args.out / stale[0]} is stale (not what the "
                f"product generates now; {len(stale)} file(s) differ): rerun `splice "
                f"export-task {args.toolkit} --out {args.out}`"
            )
        print(f"export-task {args.toolkit}: {len(files)} files under {args.out} are current")
        return 0
    written = write_files(files, args.out)
    total = sum(p.stat().st_size for p in written)
    print(f"export-task {args.toolkit}: {len(written)} files, {total} bytes under {args.out}")
    return 0
