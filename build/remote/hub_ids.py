"""The real Hub ids written into what ``splice publish`` and ``publish-metric`` upload.

A build's card and the metric's card are written before anyone knows where they will live,
so their examples name placeholders (`card.DATASET_PLACEHOLDER`, `METRIC_PLACEHOLDER`,
`CODE_PLACEHOLDER`). A Hub visitor copies those lines as they are: an upload with a
placeholder left in it sends ids that do not exist. So the uploads send their text files
with the placeholders replaced by the ids they are given (`fill`), show the replacements on
a dry run (`print_filled`), and refuse a file that still names any ``ORG/...`` id
(`leftover_problems`), before a byte is sent. The files in the folder stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from splice_build.output.card import CODE_PLACEHOLDER, DATASET_PLACEHOLDER, METRIC_PLACEHOLDER
from splice_build.remote.upload_plan import UploadFile

# The files a placeholder can be in (cards, the metric's scripts and widget); bigger files
# are data.
TEXT_SUFFIXES = (".md", ".py", ".txt", ".json", ".yaml", ".yml")
MAX_TEXT_BYTES = 1_000_000
# The placeholders' organisation (``ORG``): never a real upload's.
PLACEHOLDER_ORG = DATASET_PLACEHOLDER.split("/")[0]
# Any id of the placeholder organisation, ended where an id's characters end.
_LEFTOVER = re.compile(rf"(?<![\w.-]){re.escape(PLACEHOLDER_ORG)}/[\w.-]*[\w]")


@dataclass(frozen=True)
class HubIds:
    """Where the uploads live: the dataset and metric repos, and the code's URL (None when
    not given: a file naming the code placeholder is then refused)."""

    dataset: str
    metric: str
    code_url: str | None = None

    def replacements(self) -> list[tuple[str, str]]:
        """(placeholder, id) pairs, the longer placeholders first (``ORG/splice`` is a
        prefix of the other two)."""
        pairs = [(CODE_PLACEHOLDER, self.code_url)] if self.code_url else []
        return [*pairs, (METRIC_PLACEHOLDER, self.metric), (DATASET_PLACEHOLDER, self.dataset)]


def sibling(repo_id: str, name: str) -> str:
    """``name`` in ``repo_id``'s namespace: the default of the other repo's id."""
    return f"{repo_id.split('/')[0]}/{name}"


def _pattern(placeholder: str) -> re.Pattern[str]:
    return re.compile(re.escape(placeholder) + r"(?![\w.-])")


def fill(text: str, ids: HubIds) -> tuple[str, dict[str, int]]:
    """``text`` with each placeholder replaced, and how many of each were."""
    counts = {}
    for placeholder, real in ids.replacements():
        text, n = _pattern(placeholder).subn(real, text)
        if n:
            counts[placeholder] = n
    return text, counts


@dataclass(frozen=True)
class Filled:
    """One uploaded text file as it will be sent."""

    path_in_repo: str
    data: bytes
    counts: dict[str, int]
    leftovers: tuple[str, ...]


def fill_files(folder: Path, files: list[UploadFile], ids: HubIds) -> list[Filled]:
    """Every uploaded text file that names a placeholder, filled with ``ids``."""
    out = []
    for f in files:
        if not f.path_in_repo.endswith(TEXT_SUFFIXES) or f.size > MAX_TEXT_BYTES:
            continue
        try:
            text = (Path(folder) / f.path_in_repo).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not text: no card; the upload's own checks read it
        if not _LEFTOVER.search(text):
            continue
        filled, counts = fill(text, ids)
        leftovers = tuple(sorted(set(_LEFTOVER.findall(filled))))
        if CODE_PLACEHOLDER in filled:
            leftovers = (CODE_PLACEHOLDER, *(x for x in leftovers if x not in CODE_PLACEHOLDER))
        out.append(Filled(f.path_in_repo, filled.encode("utf-8"), counts, leftovers))
    return out


def leftover_problems(filled: list[Filled]) -> list[str]:
    """A file still naming a placeholder after filling: refused, saying what to pass."""
    problems = []
    for f in filled:
        for left in f.leftovers:
            hint = (
                "pass --code-url URL (the code's public repository)"
                if left == CODE_PLACEHOLDER
                else "it is no id this upload knows: edit the file"
            )
            problems.append(f"{f.path_in_repo}: still names the placeholder {left}; {hint}")
    return problems


def print_filled(filled: list[Filled], ids: HubIds, out: TextIO) -> None:
    """The dry run's account of the ids written into what is sent."""
    real = dict(ids.replacements())
    for f in filled:
        for placeholder, n in f.counts.items():
            print(f"  {f.path_in_repo}: {placeholder} -> {real[placeholder]} ({n})", file=out)
