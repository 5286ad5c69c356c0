"""``splice export-task TOOLKIT --dataset NAME/ID --out DIR``: write the files a toolkit's pull
request adds.

Each toolkit has its module (``lmms_eval``, ``vlmevalkit``); ``vendor`` copies the product's
modules they run. The files land under ``DIR`` at their paths in the toolkit's repository,
so ``DIR`` is what the pull request adds (``docs/upstream.md``). A ``.patch`` among them is a
change to the toolkit's own files, applied in its checkout (``git apply``), not a file of it.

The files name the dataset a toolkit user loads: the Hub id given by ``--dataset``, written
in place of the docs' placeholder (``ORG/splice``) wherever a copied file names it, as
``splice publish`` fills a card. ``splice publish`` keeps no record of where a build went, so
there is no default; an export that would still name a placeholder is refused."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import splice_dataset as schema
from splice_build.atomic import atomic_path
from splice_build.errors import UserError, disk_error
from splice_eval.export.vendor import ExportedFile

TOOLKITS = ("lmms-eval", "vlmevalkit")
# Any of the docs' placeholder ids (``ORG/splice``, ``ORG/splice_metric``, the code's URL).
_PLACEHOLDER = re.compile(r"(?<![\w.-])ORG/splice[\w.-]*")


def targets() -> dict[str, str]:
    """The toolkit release each export is written for and tested against."""
    from splice_eval.export import lmms_eval, vlmevalkit

    return {"lmms-eval": lmms_eval.TARGET, "vlmevalkit": vlmevalkit.TARGET}


def dataset_id(given: str | None) -> str:
    """``--dataset`` checked: a Hub id ``NAME/ID`` that is not the docs' placeholder."""
    if not given:
        raise UserError(
            "pass --dataset NAME/ID, the Hub id the dataset is published under "
            "(the exported files load and cite it; `splice publish` records none to default "
            "to, and an export naming the placeholder ORG/splice is refused)"
        )
    if not schema.HUB_ID_RE.match(given):
        raise UserError(f"--dataset {given!r}: expected a Hub dataset id NAME/ID")
    if given.split("/")[0] == "ORG":
        raise UserError(
            f"--dataset {given}: ORG/... is the docs' placeholder, not a published dataset; "
            "pass the Hub id the dataset is published under"
        )
    return given


def files_for(toolkit: str, dataset: str) -> list[ExportedFile]:
    """The toolkit's exported files, in memory (the staleness test compares them), naming
    ``dataset`` wherever the product's files name the placeholder; a UserError naming the
    file if any still names one."""
    dataset = dataset_id(dataset)
    if toolkit == "lmms-eval":
        from splice_eval.export import lmms_eval

        files = lmms_eval.export_files(dataset)
    elif toolkit == "vlmevalkit":
        from splice_eval.export import vlmevalkit

        files = vlmevalkit.export_files(dataset)
    else:
        raise UserError(f"export-task: unknown toolkit {toolkit!r} (one of {', '.join(TOOLKITS)})")
    from splice_build.remote.hub_ids import HubIds, fill, sibling
    from splice_eval.export.style import toolkit_python

    ids = HubIds(dataset, sibling(dataset, "splice_metric"))
    filled = [ExportedFile(f.path, fill(f.text, ids)[0]) for f in files]
    filled = [
        ExportedFile(f.path, toolkit_python(toolkit, f.text)) if f.path.endswith(".py") else f
        for f in filled
    ]
    for f in filled:
        left = _PLACEHOLDER.search(f.text)
        if left:
            raise UserError(
                f"export-task {toolkit}: {f.path} would still name the placeholder "
                f"{left.group(0)}; nothing was written"
            )
    return filled


def _refuse_non_folder(out: Path) -> None:
    """``--out`` (or a folder on its way) that is a file: one line, before any write."""
    for path in (out, *out.parents):
        if path.exists():
            if not path.is_dir():
                raise UserError(
                    f"--out {out}: {path} is a file, not a folder (give the folder of the "
                    "toolkit's checkout, or a new folder)"
                )
            return


def write_files(files: list[ExportedFile], out: Path) -> list[Path]:
    """Each file under ``out`` (atomically: a reader never sees half a file)."""
    _refuse_non_folder(out)
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
    fresh export lacks is not part of the export)."""
    from splice_eval.export import lmms_eval, vlmevalkit

    owned = {"lmms-eval": (lmms_eval.TASK_FOLDER,), "vlmevalkit": (vlmevalkit.LIB_FOLDER,)}
    return owned.get(toolkit, ())


def patch_applied(patch: str, out: Path) -> bool:
    """Whether every hunk of ``patch`` is applied under ``out``: the new side of each hunk
    (its context and added lines) stands in its file."""
    target, hunks, lines = None, [], None
    for line in patch.splitlines():
        if line.startswith("+++ b/"):
            target = line[len("+++ b/") :]
        elif line.startswith("@@"):
            lines = []
            hunks.append((target, lines))
        elif lines is not None and line[:1] in (" ", "+"):
            lines.append(line[1:])
    for name, new_side in hunks:
        try:
            text = (out / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        if "\n".join(new_side) + "\n" not in text:
            return False
    return bool(hunks)


@dataclass(frozen=True)
class CheckResult:
    """What ``--check`` found under ``--out``, each by its path there."""

    stale: list[str]  # a file of the export with other text (or missing): a rerun rewrites it
    unapplied: list[str]  # a patch removed from --out whose change the toolkit's files lack
    foreign: list[str]  # a file in a folder the export owns that the export does not write


def check_export(files: list[ExportedFile], out: Path, owned: tuple[str, ...] = ()) -> CheckResult:
    """``out`` against a fresh export: the export's files it lacks or holds with other text
    (an export made before the product's parser, prompts or task changed); the patches
    neither there as exported nor applied (a patch file may be removed once applied); the files in
    its ``owned`` folders that a fresh export does not write. Python's caches are no files."""
    fresh = {f.path for f in files}
    foreign = [
        p.relative_to(out).as_posix()
        for folder in owned
        for p in sorted((out / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    stale, unapplied = [], []
    for f in files:
        if f.path.endswith(".patch") and not (out / f.path).exists():
            if not patch_applied(f.text, out):  # removed once applied, as docs/upstream.md does
                unapplied.append(f.path)
            continue
        try:
            current = (out / f.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != f.text:
            stale.append(f.path)
    return CheckResult(stale, unapplied, [p for p in foreign if p not in fresh])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    versions = "; ".join(f"{name}: {target}" for name, target in targets().items())
    parser.add_argument(
        "toolkit",
        choices=TOOLKITS,
        help=f"the toolkit whose files to write (each export targets one release: {versions})",
    )
    parser.add_argument(
        "--dataset",
        metavar="NAME/ID",
        help="the Hub id of the published dataset, which the exported files load and cite "
        "(required: `splice publish` records none; the placeholder ORG/splice is refused)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="folder to write them in, at their repo paths"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing: fail, naming the file, if --out differs from a fresh export",
    )


def _check(args: argparse.Namespace, files: list[ExportedFile]) -> int:
    out, toolkit = args.out, args.toolkit
    if not out.is_dir():
        what = "is a file, not a folder" if out.exists() else "no such folder"
        raise UserError(
            f"--out {out}: {what}; nothing was exported there to check (export with "
            f"`splice export-task {toolkit} --dataset {args.dataset} --out {out}` first)"
        )
    found = check_export(files, out, owned_folders(toolkit))
    rerun = f"`splice export-task {toolkit} --dataset {args.dataset} --out {out}`"
    problems = []
    if found.stale:
        problems.append(
            f"{out / found.stale[0]} is stale (not what the product generates now; "
            f"{len(found.stale)} file(s) differ): rerun {rerun}"
        )
    if found.unapplied:
        problems.append(
            f"{out / found.unapplied[0]} is not applied in {out} (its change is missing from "
            f"the toolkit's files): rerun {rerun}, then `git apply` it there"
        )
    if found.foreign:
        problems.append(
            f"{out / found.foreign[0]} is not part of the export ({len(found.foreign)} "
            f"file(s) in {', '.join(owned_folders(toolkit))} that the export does not write, "
            "and a rerun leaves): remove it or move it out of that folder"
        )
    if problems:
        raise UserError("; ".join(problems))
    print(f"export-task {toolkit}: {len(files)} files under {out} are current")
    return 0


def run(args: argparse.Namespace) -> int:
    files = files_for(args.toolkit, args.dataset)
    if args.check:
        return _check(args, files)
    written = write_files(files, args.out)
    total = sum(p.stat().st_size for p in written)
    print(
        f"export-task {args.toolkit} (for {targets()[args.toolkit]}, dataset {args.dataset}): "
        f"{len(written)} files, {total} bytes under {args.out}"
    )
    return 0
