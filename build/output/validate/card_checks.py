"""The card against the shards: README.md parses, names the three configs with their
columns and data files, and its sizes, Table 1 and the shards' sha256 (recomputed) agree
with what the shards hold; an imported build's card and manifest agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from splice_build.output.card import TABLE1_HEADER, markdown_table, table1_rows
from splice_build.output.identity import BuildDigests, build_id
from splice_build.output.release_manifest import MANIFEST, ORIGIN, sha256_text
from splice_build.output.shards import WriteResult
from splice_build.output.stats import compute_stats
from splice_build.output.validate.problems import Problem
from splice_dataset import (
    CARD,
    DEFAULT_CONFIG,
    WRITTEN_CONFIGS,
    CardInfo,
    columns,
    data_files_pattern,
    read_card,
)


def recorded_tolerance(card: CardInfo) -> float | None:
    """The coverage tolerance the card says the build probed its sources with (None when
    it says none, or nothing readable)."""
    try:
        return float(card.splice_build["tolerance"])
    except (KeyError, TypeError, ValueError):
        return None


def check_card(root: Path, shards: WriteResult, card: CardInfo | None = None) -> list[Problem]:
    """Compare the card with what the shards hold, computed by the very ``WriteResult``
    methods and table formatting the card was rendered from (``card``: the card as
    `splice_dataset.read_card` gave it, if already read)."""
    card = card or read_card(root)
    if card.problem:
        return [Problem(CARD, card.problem)]
    data = card.data
    problems = check_origin(root, data.get("splice_build"))
    problems += _check_configs(data, shards.split)
    problems += check_fingerprint(data, shards)
    problems += _check_sizes(data, shards)
    problems += _check_table1(card.text, shards)
    return problems


def check_identity(card: CardInfo, computed: BuildDigests) -> list[Problem]:
    """The card's digests of the rows (``splice_build.shard_digests``, ``config_digests``,
    ``build_id``: see `identity`) against the ones the validation computed from the rows
    it read: a shard whose rows changed after the build is named, and so is a card whose
    identity is not its shards'."""
    if card.problem:
        return []
    built = card.splice_build
    if not card.build_id:
        return [Problem(CARD, "splice_build.build_id: missing, so nothing can name this build")]
    problems = []
    for field_name, found in (
        ("shard_digests", computed.shards),
        ("config_digests", computed.configs),
    ):
        recorded = built.get(field_name)
        recorded = recorded if isinstance(recorded, dict) else {}
        for name in sorted(set(recorded) | set(found)):
            want, got = recorded.get(name), found.get(name)
            if want == got:
                continue
            where = name if got is not None else CARD
            if want is None:
                what = f"not in the card's splice_build.{field_name}"
            elif got is None:
                what = f"splice_build.{field_name} names {name}, which holds no rows read"
            else:
                what = (
                    f"its rows' digest {got[:16]}... is not the card's splice_build."
                    f"{field_name} {str(want)[:16]}...: a row changed after the build"
                )
            problems.append(Problem(where, what))
    actual = build_id(computed.configs)
    if card.build_id != actual:
        problems.append(
            Problem(
                CARD,
                f"splice_build.build_id {card.build_id[:16]}... but the rows give {actual[:16]}...",
            )
        )
    return problems


def _check_configs(data: dict[str, Any], split: str) -> list[Problem]:
    """Each config in the YAML, with its data files, columns and default flag."""
    problems = []
    configs = {c.get("config_name"): c for c in data.get("configs") or []}
    for config in WRITTEN_CONFIGS:
        entry = configs.get(config)
        if entry is None:
            problems.append(Problem(CARD, f"configs: no {config!r} config"))
            continue
        files = entry.get("data_files") or []
        want = [{"split": split, "path": data_files_pattern(config, split)}]
        if files != want:
            problems.append(Problem(CARD, f"config {config}: data_files {files} != {want}"))
        if "columns" in entry and entry["columns"] != list(columns(config)):
            problems.append(Problem(CARD, f"config {config}: columns {entry.get('columns')}"))
        if bool(entry.get("default")) != (config == DEFAULT_CONFIG):
            problems.append(Problem(CARD, f"config {config}: wrong default flag"))
    return problems


def _check_sizes(data: dict[str, Any], shards: WriteResult) -> list[Problem]:
    """``dataset_info``: each config's split with the shards' rows and bytes."""
    problems = []
    split = shards.split
    infos = data.get("dataset_info") or []
    infos = {i.get("config_name"): i for i in (infos if isinstance(infos, list) else [infos])}
    for config in WRITTEN_CONFIGS:
        splits = {s.get("name"): s for s in (infos.get(config) or {}).get("splits") or []}
        info = splits.get(split)
        if info is None:
            problems.append(Problem(CARD, f"dataset_info: no {split} split for {config}"))
            continue
        num_rows = shards.num_examples(config)
        if info.get("num_examples") != num_rows:
            problems.append(
                Problem(
                    CARD,
                    f"dataset_info {config}: num_examples {info.get('num_examples')} but the "
                    f"shards hold {num_rows} rows",
                )
            )
        num_bytes = shards.num_bytes(config)
        if info.get("num_bytes") != num_bytes:
            problems.append(
                Problem(
                    CARD,
                    f"dataset_info {config}: num_bytes {info.get('num_bytes')} but the shards "
                    f"hold {num_bytes}",
                )
            )
    return problems


def _check_table1(text: str, shards: WriteResult) -> list[Problem]:
    """Table 1 (videos per number of clips) as the shards' statistics give it."""
    stats_rows = table1_rows(compute_stats(shards.videos))
    table = _parse_table(text, TABLE1_HEADER)
    if table is None:
        return [Problem(CARD, "no Table 1 (videos per number of clips)")]
    if table == stats_rows:
        return []
    problems = []
    found = {r[0]: r for r in table}
    for want in stats_rows:
        got = found.pop(want[0], None)
        if got != want:
            what = f"Table 1 row for {want[0]} clips is {got} but the shards give {want}"
            problems.append(Problem(CARD, what))
    for extra in found.values():
        problems.append(Problem(CARD, f"Table 1 has an extra row {extra}"))
    return problems


def _parse_table(text: str, header: tuple[str, ...]) -> list[tuple[str, ...]] | None:
    """Body rows of the first Markdown table with this header, or None if there is none."""
    lines = text.splitlines()
    want = markdown_table(header, ()).splitlines()[0]
    for i, line in enumerate(lines):
        if line.strip() == want:
            rows = []
            for body in lines[i + 2 :]:
                if not body.strip().startswith("|"):
                    break
                rows.append(tuple(c.strip() for c in body.strip().strip("|").split("|")))
            return rows
    return None


def check_origin(root: Path, splice_build: Any) -> list[Problem]:
    """An imported build's card and its manifest must agree (and a build cut from COIN's
    videos has no manifest), so the check of the clips cannot be switched silently."""
    meta = splice_build if isinstance(splice_build, dict) else {}
    path = root / MANIFEST
    if meta.get("origin") != ORIGIN:
        if path.exists():
            return [Problem(MANIFEST, "present, but the card does not say origin: release")]
        return []
    if not path.is_file():
        return [Problem(CARD, f"says origin: release, but there is no {MANIFEST}")]
    want = (meta.get("release") or {}).get("manifest_sha256")
    if sha256_text(path.read_text("utf-8")) != want:
        return [Problem(MANIFEST, f"sha256 differs from the card's manifest_sha256 {want}")]
    return []


def check_fingerprint(data: dict[str, Any], shards: WriteResult) -> list[Problem]:
    """The shards' sha256, recomputed, against the one the card recorded when it was
    built (in full under ``splice_build``, its first 16 digits in each description)."""
    actual = shards.fingerprint()
    problems = []
    recorded = (data.get("splice_build") or {}).get("shards_sha256")
    if recorded is not None and recorded != actual:
        problems.append(
            Problem(
                CARD,
                f"splice_build.shards_sha256 {str(recorded)[:16]}... but the shards' is "
                f"{actual[:16]}...: a shard changed after the build",
            )
        )
    described = 0
    for config in data.get("configs") or []:
        found = re.search(r"shards sha256 ([0-9a-f]+)", str(config.get("description") or ""))
        if found is None:
            continue
        described += 1
        if found[1] != actual[: len(found[1])] or len(found[1]) < 16:
            problems.append(
                Problem(
                    CARD,
                    f"config {config.get('config_name')}: description says shards sha256 "
                    f"{found[1]} but the shards' is {actual[:16]}...",
                )
            )
    if recorded is None and not described:
        problems.append(Problem(CARD, "records no sha256 of the shards to check"))
    return problems
