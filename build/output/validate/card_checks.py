"""The card against the shards: README.md parses, names the three configs with their
columns and data files, and its sizes, Table 1 and the shards' sha256 (recomputed) agree
with what the shards hold; an imported build's card and manifest agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from splice_build.output.card import (
    STAND_IN_TAG,
    TABLE1_HEADER,
    TABLE6_HEADER,
    domain_table,
    markdown_table,
    stand_in_notice,
    stats_summary,
    table1_rows,
    table6_rows,
)
from splice_build.output.card_reader import CardInfo, read_card
from splice_build.output.identity import BuildDigests, build_id
from splice_build.output.release_manifest import MANIFEST, ORIGIN, sha256_text
from splice_build.output.stats import compute_stats
from splice_build.output.validate.problems import Problem
from splice_build.output.writing.shards import WriteResult
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, bundled_sha256
from splice_dataset import (
    CARD,
    DEFAULT_CONFIG,
    WRITTEN_CONFIGS,
    columns,
    data_files_pattern,
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
    `card_reader.read_card` gave it, if already read)."""
    card = card or read_card(root)
    if card.problem:
        return [Problem(CARD, card.problem)]
    problems = check_origin(root, card.splice_build)
    problems += _check_configs(card.configs, shards.split)
    problems += check_fingerprint(card, shards)
    problems += _check_sizes(card.data, shards)
    problems += _check_table1(card.text, shards)
    problems += check_facts(card, shards)
    return problems


# A card fact recorded twice (YAML and text) must agree; the text's provenance lines.
_TEXT_ROW = r"^- \*\*{}:\*\* (.*?)\s*$"  # `provenance.provenance_block`'s lines


def _text_row(text: str, name: str) -> str | None:
    found = re.search(_TEXT_ROW.format(re.escape(name)), text, re.M)
    return found[1].strip("`") if found else None


def check_facts(card: CardInfo, shards: WriteResult) -> list[Problem]:
    """Every fact the card states that the rows give, recomputed from them: the counts,
    each config's download and dataset sizes, the statistics sentence, Table 6 and the
    domain table; and the facts it states twice (seed, annotation sha256, stand-in) the
    same in both places, the annotation sha256 against the bundled file when the card
    names it. (The seed is also proven by the rows' shuffles: `full_config`.)"""
    built, text = card.splice_build, card.text
    problems = [
        Problem(CARD, f"splice_build.{name} {built.get(name)!r} but the shards hold {real}")
        for name, real in (("videos", shards.num_rows), ("clips", shards.num_clips))
        if built.get(name) != real
    ]
    infos = card.data.get("dataset_info") or []
    for info in infos if isinstance(infos, list) else [infos]:
        config = info.get("config_name")
        if config not in shards.config_shards:
            continue
        for name, real in (
            ("download_size", shards.download_size(config)),
            ("dataset_size", shards.num_bytes(config)),
        ):
            if info.get(name) != real:
                what = f"dataset_info {config}: {name} {info.get(name)} but the shards' is {real}"
                problems.append(Problem(CARD, what))
    stats = compute_stats(shards.videos)
    for name, part in (
        ("the statistics sentence", stats_summary(stats, paper=card.source == "coin")),
        ("Table 6", markdown_table(TABLE6_HEADER, table6_rows(stats))),
        ("the domain table", domain_table(stats)),
    ):
        if part.strip() not in text:
            problems.append(Problem(CARD, f"{name} is not what the shards give:\n{part}"))
    return problems + _check_twice_stated(card)


def _source_title(card: CardInfo) -> str | None:
    """The title of a non-COIN card's source, as it names itself (None: COIN's card)."""
    title = (card.source_identity or {}).get("title")
    return title if card.source != "coin" and isinstance(title, str) else None


def _check_twice_stated(card: CardInfo) -> list[Problem]:
    built, text = card.splice_build, card.text
    problems = []
    for name, row in (("seed", "Seed"), ("annotations_sha256", "Annotation sha256")):
        said = _text_row(text, row)
        if str(built.get(name)) != said:
            what = f"splice_build.{name} {built.get(name)!r} but its text says {said!r}"
            problems.append(Problem(CARD, what))
    named = _text_row(text, "Annotation file") or ""
    if named.startswith(BUNDLED_ANNOTATIONS.name) and built.get("annotations_sha256") != (
        bundled_sha256()
    ):
        problems.append(
            Problem(CARD, f"splice_build.annotations_sha256 is not the sha256 of {named}")
        )
    said = {
        "splice_build.stand_in": card.stand_in,
        f"tag {STAND_IN_TAG}": STAND_IN_TAG in (card.data.get("tags") or []),
        "the stand-in notice": stand_in_notice(_source_title(card)).strip() in text,
        "Source videos": _text_row(text, "Source videos") == "rendered stand-ins (demo)",
    }
    if len(set(said.values())) > 1:
        problems.append(
            Problem(
                CARD,
                "splice_build.stand_in disagrees with the card: "
                + ", ".join(f"{k} {v}" for k, v in said.items()),
            )
        )
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
    actual = build_id(computed.configs, card.source_identity)
    if card.build_id != actual:
        problems.append(
            Problem(
                CARD,
                f"splice_build.build_id {card.build_id[:16]}... but the rows give {actual[:16]}...",
            )
        )
    return problems


def _check_configs(entries: tuple[dict[str, Any], ...], split: str) -> list[Problem]:
    """Each config in the YAML (`CardInfo.configs`), with its data files, columns and
    default flag."""
    problems = []
    configs = {c.get("config_name"): c for c in entries}
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


def check_origin(root: Path, meta: dict[str, Any]) -> list[Problem]:
    """An imported build's card and its manifest must agree (and a build cut from COIN's
    videos has no manifest), so the check of the clips cannot be switched silently."""
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


def check_fingerprint(card: CardInfo, shards: WriteResult) -> list[Problem]:
    """The shards' sha256, recomputed, against the one the card recorded when it was
    built (in full under ``splice_build``, its first 16 digits in each description)."""
    actual = shards.fingerprint()
    problems = []
    recorded = card.splice_build.get("shards_sha256")
    if recorded is not None and recorded != actual:
        problems.append(
            Problem(
                CARD,
                f"splice_build.shards_sha256 {str(recorded)[:16]}... but the shards' is "
                f"{actual[:16]}...: a shard changed after the build",
            )
        )
    described = 0
    for config in card.configs:
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
