"""The one reader of a build's card (README.md), beside `card`, its writer.

Everything that takes a fact from a card reads it here, once, as a `CardInfo`: the
build's identity (``splice_build.build_id``), seed, stand-in flag and ``configs:`` for
`splice validate` (`validate.card_checks` checks them against the shards), `splice
publish` (`remote.upload_plan` checks the configs against the files sent), and the
model side's runners, scores, report and human protocol. Nothing here is proven.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from splice_dataset import CARD


@dataclass(frozen=True)
class CardInfo:
    """A build's card as `read_card` read it (``problem`` says why there was none)."""

    # The card's ``splice_build.stand_in``: its clips were cut from rendered stand-in videos
    # (the demo's), not COIN's; `splice publish` refuses such a build, `splice report` says so.
    stand_in: bool = False
    # ``splice_build.build_id``: the build's identity (64 hex digits, a digest of every
    # row's values; see `splice_build.output.identity`), "" for a card without one.
    build_id: str = ""
    seed: int | None = None  # ``splice_build.seed``: the shuffle's seed
    configs: tuple[dict[str, Any], ...] = ()  # the YAML's ``configs:`` entries, as written
    splice_build: dict[str, Any] = field(default_factory=dict)  # the whole block
    data: dict[str, Any] = field(default_factory=dict)  # the whole YAML header
    text: str = ""  # the card's Markdown after the header
    problem: str = ""  # why there is no card to read ("" when it read)
    # ``splice_build.source.name``: the --source the build read ("coin" for a card without
    # one, written before other sources were read); reports, baselines and boards read it
    source: str = "coin"

    @property
    def source_identity(self) -> dict[str, Any] | None:
        """``splice_build.source`` as written (what ``build_id`` covers), None without one."""
        found = self.splice_build.get("source")
        return found if isinstance(found, dict) else None


def read_card(folder: str | os.PathLike) -> CardInfo:
    """The card of a built folder: its YAML (configs, ``splice_build`` with the build's
    identity, seed, stand-in flag) and its text. A missing or unparsable card is a
    `CardInfo` whose ``problem`` says why."""
    from huggingface_hub import DatasetCard

    path = Path(folder) / CARD
    if not path.is_file():
        return CardInfo(problem="missing: the configs are defined by the card's YAML")
    try:
        card = DatasetCard.load(path)
        data = card.data.to_dict()
    except Exception as exc:  # yaml and huggingface_hub raise several kinds
        return CardInfo(problem=f"does not parse as a dataset card: {exc}")
    built = data.get("splice_build")
    built = built if isinstance(built, dict) else {}
    configs = data.get("configs")
    seed = built.get("seed")
    source = built.get("source")
    name = source.get("name") if isinstance(source, dict) else None
    return CardInfo(
        source=name if isinstance(name, str) and name else "coin",
        stand_in=bool(built.get("stand_in", False)),
        build_id=str(built.get("build_id") or ""),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        configs=tuple(configs) if isinstance(configs, list) else (),
        splice_build=built,
        data=data,
        text=card.text,
    )
