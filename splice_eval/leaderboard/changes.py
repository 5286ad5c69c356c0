"""The board's changes: adding a submission and re-scoring every entry, each under the
board's lock and leaving the board as it was when it fails (``store``'s staging folder;
the entry moved in, then the index rebuilt, the move undone if that fails).

A submission's prediction files are kept as submitted, gzip-compressed, beside the
``meta.yaml`` as submitted and the ``score.json`` the scorer wrote.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from splice_build.errors import UserError, size_words
from splice_eval.leaderboard import index, store, submission
from splice_eval.leaderboard.columns import DEFAULT_METRIC, METRICS
from splice_eval.leaderboard.meta import read_meta
from splice_eval.leaderboard.records import MODEL, Provenance

# Bytes of one submitted prediction file the board keeps (it stores each, compressed): the
# one limit docs/leaderboard.md states. A format read whole is bounded by its reader's
# own limit, imported here (``prediction_files``), never copied.
PREDICTIONS_MAX = 256 * 1024 * 1024
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".xlsx")
NOT_RESCORED = "not rescored, left as it is"  # rescore's line for an entry it could not read


def size_limit(suffix: str) -> int:
    """The largest prediction file of this suffix the board takes: a ``.json`` list is read
    whole, so its reader's bound; the other formats stream (an .xlsx's parts are bounded
    where it is read), so the board's own."""
    from splice_eval.prediction_files import MAX_TABLE_BYTES

    return min(PREDICTIONS_MAX, MAX_TABLE_BYTES) if suffix == ".json" else PREDICTIONS_MAX


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(
            f"{path}: a prediction file must end in one of {', '.join(SUFFIXES)} (the formats "
            "splice score reads)"
        )
    return suffix


def _check_size(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"prediction file {path}: {exc.strerror or exc}") from None
    if not path.is_file():
        raise UserError(f"prediction file {path} is not a file")
    limit = size_limit(_suffix(path))
    if size > limit:
        raise UserError(
            f"prediction file {path}: {size_words(size)}, over the {size_words(limit)} a "
            f"board takes of a {_suffix(path)} file"
        )


def stored_name(k: int, path: Path) -> str:
    return f"{store.PREDICTIONS_STEM}-{k}{_suffix(path)}.gz"


def keep_compressed(path: Path, folder: Path, k: int) -> str:
    name = stored_name(k, path)
    with path.open("rb") as src, gzip.open(folder / name, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return name


@contextlib.contextmanager
def readable_copies(folder: Path, names: Sequence[str]) -> Iterator[list[Path]]:
    """An entry's stored prediction files decompressed to a temporary folder, with the
    suffixes the reader knows them by; a damaged one (truncated, not gzip) refused naming
    the entry and the file."""
    with tempfile.TemporaryDirectory(prefix="splice-board-") as tmp:
        out = []
        for name in names:
            if "/" in name or not name.endswith(".gz") or name.startswith("."):
                raise UserError(f"{folder}: stored file name {name!r} is not allowed")
            target = Path(tmp) / name.removesuffix(".gz")
            try:
                with gzip.open(folder / name, "rb") as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except (OSError, EOFError, zlib.error) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise UserError(
                    f"entry {folder.name}: stored prediction file {name} is damaged ({reason})"
                ) from None
            out.append(target)
        yield out


def _existing(board: Path) -> list[dict[str, Any]]:
    cfg = store.read_config(board)
    return index.read_index(board, cfg)["entries"]


def _same_runs(existing: list[dict[str, Any]], score: Mapping[str, Any]) -> list[str]:
    """The slugs of entries with the same model, config, settings and submitter (compared
    case-insensitively): the board's duplicates of this submission. Every entry scored
    from files counts, whatever its kind or name."""
    prov = Provenance(**score["provenance"])
    wanted = {submission.settings_key(prov, c) for c in score["configs"]}
    out: list[str] = []
    for e in existing:
        if e.get("error") or not e.get("prediction_file") or e["slug"] in out:
            continue
        other = Provenance(**e["provenance"])
        if other.submitter.casefold() != prov.submitter.casefold():
            continue
        if submission.settings_key(other, e["config"]) in wanted:
            out.append(e["slug"])
    return out


def _free_slug(board: Path, name: str) -> str:
    base = store.slug_of(name)
    slug, k = base, 1
    while (board / store.ENTRIES / slug).exists():
        k += 1
        slug = f"{base[:75]}-{k}"
    return slug


def _entry_name(
    existing: list[dict[str, Any]], score: Mapping[str, Any], given: str | None, going: list[str]
) -> str:
    """The entry's name, never one another entry has (compared case-insensitively), so two
    entries are told apart in every view: the name given (refused when taken), else the
    model's, followed by the submitter and date when another entry has it."""
    taken = {str(e["name"]).casefold(): e["slug"] for e in existing if e["slug"] not in going}
    wanted = given or str(score["name"])
    if wanted.casefold() not in taken:
        return wanted
    if given:
        raise UserError(
            f"--name {given!r}: entry {taken[given.casefold()]!r} already has this name; pick "
            "another, so the two can be told apart"
        )
    prov = score["provenance"]
    suffix = ", ".join(filter(None, (prov.get("submitter"), prov.get("date"))))
    if suffix and f"{wanted} ({suffix})".casefold() not in taken:
        return f"{wanted} ({suffix})"
    raise UserError(
        f"an entry named {wanted!r} is already on the board, and its submitter and date do "
        "not tell this one apart: pass --name"
    )


def _summary(board: Path, slug: str) -> dict[str, Any]:
    """What an entry holds, for the audit line and the messages: its name, model,
    submitter, date, configs with their headline metric, extra columns and files."""
    score = store.read_json(store.entry_dir(board, slug) / store.SCORE_FILE)
    prov = score.get("provenance", {})
    configs = score.get("configs", {})
    return {
        "slug": slug,
        "name": score.get("name", slug),
        "model": prov.get("model", ""),
        "submitter": prov.get("submitter", ""),
        "date": prov.get("date", ""),
        "configs": {
            c: b.get("metrics", {}).get(DEFAULT_METRIC, {}).get("value") for c, b in configs.items()
        },
        "columns": sorted(
            f"{c}.{m}"
            for c, b in configs.items()
            for m in b.get("metrics", {})
            if m not in METRICS and ":" not in m  # the four metrics go with the config
        ),
        "files": list(score.get("prediction_files") or []),
    }


def _summary_of_any(board: Path, slug: str) -> dict[str, Any]:
    """``_summary``, or the slug alone for a score.json that cannot be read."""
    try:
        return _summary(board, slug)
    except (OSError, ValueError, AttributeError, TypeError):
        empty: dict[str, Any] = {"configs": {}, "columns": [], "files": []}
        return {"slug": slug, "name": slug, "model": "", "submitter": "", "date": ""} | empty


def describe(summary: Mapping[str, Any]) -> str:
    configs = ", ".join(
        f"{c} {DEFAULT_METRIC} {'none' if v is None else f'{v:.4f}'}"
        for c, v in summary["configs"].items()
    )
    extra = f"; columns {', '.join(summary['columns'])}" if summary["columns"] else ""
    files = ", ".join(summary["files"]) or "none"
    who = ", ".join(filter(None, (summary["submitter"], summary["date"]))) or "no submitter"
    return (
        f"{summary['slug']} ({summary['name']!r}, model {summary['model']!r}, {who}): "
        f"{configs or 'no configs'}{extra}; files {files}"
    )


def _audit(board: Path, action: str, summary: Mapping[str, Any], by: str) -> None:
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.append_audit(board, {"time": when, "action": action, "by": by, **summary})


def _lost(olds: Sequence[Mapping[str, Any]], score: Mapping[str, Any]) -> list[str]:
    """What replacing ``olds`` by ``score`` would take off the board: configs and extra
    columns (probes, question formats) the old entries have and the new one has not."""
    new_configs = score["configs"]
    lost = []
    for old in olds:
        lost += [c for c in old["configs"] if c not in new_configs]
        for column in old["columns"]:
            config, _, metric = column.partition(".")
            if config in new_configs and metric not in new_configs[config]["metrics"]:
                lost.append(column)
    return sorted(set(lost))


def add(
    board: Path,
    files: Sequence[Path],
    *,
    meta: Path | None = None,
    name: str | None = None,
    allow_partial: bool = False,
    replace: bool = False,
    remove: Sequence[str] = (),
    allow_invalid: bool = False,
    kind: str = MODEL,
) -> tuple[str, dict[str, Any]]:
    """Score and add one submission (its files: one model); the entry's slug and score
    (``score["replaced"]``: lines saying what a replacement replaced and removed).

    An entry of the same model, config, settings and submitter is refused, unless
    ``replace``: then every such entry goes (a copy added before the rule held too), and
    when that would take configs or columns off the board that the new files do not
    bring back, each must be named in ``remove``."""
    for path in files:
        _suffix(path)
        _check_size(path)
    submitted = read_meta(meta) if meta is not None else {}
    with store.board_lock(board):
        cfg = store.read_config(board)
        videos = store.read_videos(board)
        score = submission.score_files(
            files,
            [str(f) for f in files],
            videos,
            cfg,
            board,
            submitted=submitted,
            allow_partial=allow_partial,
            name=name,
            kind=kind,
            meta_name=str(meta or store.META_FILE),
            allow_invalid=allow_invalid or kind != MODEL,
        )
        score["allow_partial"] = allow_partial
        existing = _existing(board)
        twins = _same_runs(existing, score)
        if twins and not replace:
            raise UserError(
                f"board {board} already holds entry {twins[0]!r} of model "
                f"{score['provenance']['model']!r} with the same config, settings and "
                "submitter; pass --replace to replace it"
            )
        score["name"] = _entry_name(existing, score, name, twins)
        olds = [_summary(board, t) for t in twins]
        lost = _lost(olds, score)
        unasked = [item for item in lost if item not in remove]
        if unasked:
            raise UserError(
                f"--replace would remove {', '.join(unasked)} of entry {twins[0]!r}, which the "
                f"new files do not bring back; name each to remove it "
                f"({' '.join(f'--remove {i}' for i in unasked)}), or add its files too"
            )
        stray = [item for item in remove if item not in lost]
        if stray:
            raise UserError(f"--remove {stray[0]}: the replacement would not remove it")
        score["replaced"] = [f"replaces {describe(o)}" for o in olds]
        if lost:
            score["replaced"].append(f"removes {', '.join(lost)} (asked for with --remove)")
        if replace and not twins:
            score["replaced"].append("--replace: no entry of the same run to replace; added")
        slug = twins[0] if twins else _free_slug(board, score["name"])
        with store.staging(board) as staged:
            folder = staged / "entry"
            folder.mkdir()
            score["prediction_files"] = [
                keep_compressed(p, folder, k) for k, p in enumerate(files, 1)
            ]
            if meta is not None:
                shutil.copyfile(meta, folder / store.META_FILE)
            store.write_json(folder / store.SCORE_FILE, {**score, "replaced": None})
            _commit(board, cfg, folder, slug, gone=twins[1:])
        for old in olds:
            _audit(board, "replaced", old | {"lost": lost}, f"add --replace ({slug})")
    return slug, score


def remove_entry(board: Path, name: str) -> dict[str, Any]:
    """Take one entry off the board, named by its slug or its name (refused when the name
    is several entries'); what went, also written as a line of ``audit.jsonl``."""
    with store.board_lock(board):
        cfg = store.read_config(board)
        existing = _existing(board)
        slugs = store.entry_slugs(board)
        if name in slugs:
            slug = name
        else:
            named = sorted(
                {e["slug"] for e in existing if str(e["name"]).casefold() == name.casefold()}
            )
            if len(named) > 1:
                raise UserError(
                    f"{name!r} names {len(named)} entries ({', '.join(named)}): give the slug"
                )
            if not named:
                raise UserError(
                    f"board {board} has no entry named {name!r} (`splice leaderboard show "
                    f"--board {board}` lists them; the slug column names each folder)"
                )
            slug = named[0]
        summary = _summary_of_any(board, slug)
        _commit(board, cfg, None, slug)
        _audit(board, "removed", summary, "splice leaderboard remove")
    return summary


def _commit(
    board: Path, cfg: Any, folder: Path | None, slug: str, gone: Sequence[str] = ()
) -> None:
    """Move the staged entry in (``folder``; None: the entry at ``slug`` is removed), take
    the entries ``gone`` out, and index the board; when indexing fails, put the board back
    as it was."""
    backups: list[tuple[Path, Path]] = []
    for name in (slug, *gone):
        target = store.entry_dir(board, name)
        if target.exists():
            backup = target.with_name(f".backup-{name}-{os.getpid()}")
            os.rename(target, backup)
            backups.append((backup, target))
    target = store.entry_dir(board, slug)
    if folder is not None:
        os.rename(folder, target)
    try:
        index.rebuild(board, cfg)
    except BaseException:
        if folder is not None:
            shutil.rmtree(target, ignore_errors=True)
        for backup, where in backups:
            os.rename(backup, where)
        with contextlib.suppress(Exception):
            index.rebuild(board, cfg)
        raise
    for backup, _ in backups:
        shutil.rmtree(backup, ignore_errors=True)


def rescore(board: Path, *, progress: bool = True) -> list[str]:
    """Every entry scored again from its stored files with the installed metric, one at a
    time (memory stays that of one entry); what changed, as lines.

    Only files make a score: the paper's rows are written again as ``init`` writes them,
    ``random (exact)`` computed again, and any other entry without prediction files (a
    forged score.json, a reported row that is not the paper's) removed, with an audit
    line. An entry whose stored file is damaged is named and left as it is."""
    from dataclasses import replace as dc_replace

    from tqdm import tqdm

    from splice_eval.leaderboard.references import paper_scores, random_exact
    from splice_metric import metric_version

    changed: list[str] = []
    papers = {"paper-" + store.slug_of(p["provenance"]["model"]): p for p in paper_scores()}
    with store.board_lock(board):
        cfg = store.read_config(board)
        videos = store.read_videos(board)
        slugs = store.entry_slugs(board)
        bar = tqdm(slugs, desc="rescore", unit="entry", disable=not progress, file=sys.stderr)
        for slug in bar:
            folder = board / store.ENTRIES / slug
            try:
                old = store.read_json(folder / store.SCORE_FILE)
                names = list(old.get("prediction_files") or [])
            except (OSError, ValueError, AttributeError) as exc:
                changed.append(f"{slug}: score.json unreadable, left as it is ({exc})")
                continue
            if slug in papers and not names:
                new = papers[slug]  # the authors' figures, as init writes them
            elif slug == index.RANDOM_EXACT and not names:
                new = random_exact(videos, cfg)  # the metric's expectation, again
            elif not names:
                summary = _summary_of_any(board, slug)
                shutil.rmtree(folder)
                _audit(board, "removed", summary, "rescore (no prediction files)")
                changed.append(
                    f"{slug}: removed: no prediction files to score (only init makes rows "
                    "without them: the paper's and random (exact))"
                )
                continue
            else:
                try:
                    new = _scored_again(board, folder, names, old, videos, cfg)
                except UserError as exc:
                    changed.append(f"{slug}: {NOT_RESCORED}: {exc}")
                    continue
            changed += _differences(slug, old, new)
            store.write_json(folder / store.SCORE_FILE, new)
        version = metric_version()
        if cfg.metric_version != version:
            changed.append(f"board: metric version {cfg.metric_version} -> {version}")
        cfg = dc_replace(cfg, metric_version=version)
        store.write_config(board, cfg)
        index.rebuild(board, cfg)
    return changed


def _scored_again(
    board: Path, folder: Path, names: list[str], old: Mapping[str, Any], videos: Any, cfg: Any
) -> dict[str, Any]:
    submitted = read_meta(folder / store.META_FILE) if (folder / store.META_FILE).exists() else {}
    with readable_copies(folder, names) as copies:
        new = submission.score_files(
            copies,
            names,
            videos,
            cfg,
            board,
            submitted=submitted,
            allow_partial=bool(old.get("allow_partial", True)),
            name=old.get("name"),
            kind=old.get("kind", MODEL),
        )
    new["prediction_files"] = names
    new["allow_partial"] = old.get("allow_partial", False)
    return new


def _differences(slug: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    lines = []
    for config, block in new["configs"].items():
        before = old.get("configs", {}).get(config, {}).get("metrics", {})
        for metric, value in block["metrics"].items():
            was = before.get(metric, {}).get("value")
            if was is None or abs(was - value["value"]) > 1e-12:
                was_text = "none" if was is None else f"{was:.4f}"
                lines.append(f"{slug} {config} {metric}: {was_text} -> {value['value']:.4f}")
    return lines
