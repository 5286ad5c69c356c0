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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_eval.leaderboard import index, store, submission
from splice_eval.leaderboard.meta import read_meta
from splice_eval.leaderboard.records import MODEL, Provenance

PREDICTIONS_MAX = 256 * 1024 * 1024  # bytes of one submitted prediction file
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".xlsx")


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
    if size > PREDICTIONS_MAX:
        raise UserError(f"{path}: {size} bytes, more than the {PREDICTIONS_MAX} allowed")


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
    suffixes the reader knows them by."""
    with tempfile.TemporaryDirectory(prefix="splice-board-") as tmp:
        out = []
        for name in names:
            if "/" in name or not name.endswith(".gz") or name.startswith("."):
                raise UserError(f"{folder}: stored file name {name!r} is not allowed")
            target = Path(tmp) / name.removesuffix(".gz")
            with gzip.open(folder / name, "rb") as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            out.append(target)
        yield out


def _existing(board: Path) -> list[dict[str, Any]]:
    cfg = store.read_config(board)
    return index.read_index(board, cfg)["entries"]


def _same_run(
    existing: list[dict[str, Any]], score: Mapping[str, Any], replacing: str | None
) -> str | None:
    """The slug of an entry with the same model, config, settings and submitter."""
    prov = Provenance(**score["provenance"])
    wanted = {submission.settings_key(prov, c) for c in score["configs"]}
    for e in existing:
        if e.get("error") or e["kind"] != MODEL or e["slug"] == replacing:
            continue
        other = Provenance(**e["provenance"])
        if other.submitter != prov.submitter:
            continue
        if submission.settings_key(other, e["config"]) in wanted:
            return e["slug"]
    return None


def _free_slug(board: Path, name: str) -> str:
    base = store.slug_of(name)
    slug, k = base, 1
    while (board / store.ENTRIES / slug).exists():
        k += 1
        slug = f"{base[:75]}-{k}"
    return slug


def add(
    board: Path,
    files: Sequence[Path],
    *,
    meta: Path | None = None,
    name: str | None = None,
    allow_partial: bool = False,
    replace: bool = False,
    kind: str = MODEL,
) -> tuple[str, dict[str, Any]]:
    """Score and add one submission (its files: one model); the entry's slug and score."""
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
        )
        score["allow_partial"] = allow_partial
        twin = _same_run(_existing(board), score, None)
        if twin is not None and not replace:
            raise UserError(
                f"board {board} already holds entry {twin!r} of model "
                f"{score['provenance']['model']!r} with the same config and settings; pass "
                "--replace to replace it"
            )
        slug = twin if twin is not None else _free_slug(board, score["name"])
        with store.staging(board) as staged:
            folder = staged / "entry"
            folder.mkdir()
            score["prediction_files"] = [
                keep_compressed(p, folder, k) for k, p in enumerate(files, 1)
            ]
            if meta is not None:
                shutil.copyfile(meta, folder / store.META_FILE)
            store.write_json(folder / store.SCORE_FILE, score)
            _commit(board, cfg, folder, slug)
    return slug, score


def _commit(board: Path, cfg: Any, folder: Path, slug: str) -> None:
    """Move the staged entry in and index the board; when indexing fails, put the board
    back as it was."""
    target = store.entry_dir(board, slug)
    backup = None
    if target.exists():
        backup = target.with_name(f".backup-{slug}-{os.getpid()}")
        os.rename(target, backup)
    os.rename(folder, target)
    try:
        index.rebuild(board, cfg)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        if backup is not None:
            os.rename(backup, target)
        with contextlib.suppress(Exception):
            index.rebuild(board, cfg)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


def rescore(board: Path, *, progress: bool = True) -> list[str]:
    """Every entry with prediction files scored again with the installed metric, one at a
    time (memory stays that of one entry); what changed, as lines."""
    from dataclasses import replace as dc_replace

    from tqdm import tqdm

    from splice_metric import metric_version

    changed: list[str] = []
    with store.board_lock(board):
        cfg = store.read_config(board)
        videos = store.read_videos(board)
        slugs = store.entry_slugs(board)
        bar = tqdm(slugs, desc="rescore", unit="entry", disable=not progress, file=sys.stderr)
        for slug in bar:
            folder = board / store.ENTRIES / slug
            try:
                old = store.read_json(folder / store.SCORE_FILE)
            except (OSError, ValueError) as exc:
                changed.append(f"{slug}: score.json unreadable, left as it is ({exc})")
                continue
            names = old.get("prediction_files") or []
            if old.get("source") == "random_exact":  # the metric's expectation, again
                from splice_eval.leaderboard.references import random_exact

                new = random_exact(videos, cfg)
                changed += _differences(slug, old, new)
                store.write_json(folder / store.SCORE_FILE, new)
                continue
            if not names:
                continue  # a reported row: the authors' figures are not re-scored
            submitted = (
                read_meta(folder / store.META_FILE) if (folder / store.META_FILE).exists() else {}
            )
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
            for key in ("tier",):
                new[key] = old.get(key, new[key])
            changed += _differences(slug, old, new)
            store.write_json(folder / store.SCORE_FILE, new)
        version = metric_version()
        if cfg.metric_version != version:
            changed.append(f"board: metric version {cfg.metric_version} -> {version}")
        cfg = dc_replace(cfg, metric_version=version)
        store.write_config(board, cfg)
        index.rebuild(board, cfg)
    return changed


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
