"""The file layout of an annotation package, shared by ``annotate export`` (which writes
it) and the app (which reads it), so the two cannot drift apart.

Nothing here is secret: folder numbers and part numbers are what the annotator sees. The
answer key (``KEY_NAME``) lives beside the packages, with the organiser, and the app never
opens it.
"""

from __future__ import annotations

import re

MODALITY_DIRS = {"video": "video_only", "video_text": "video_text"}
SHEET_NAME = "sheet.csv"
KEY_NAME = "key.json"
INSTRUCTIONS_NAME = "INSTRUCTIONS.md"
PART_RE = re.compile(r"random_part_(\d+)\.mp4")


def part_name(k: int) -> str:
    """The file name of the k-th shuffled part (1-based) of a package folder."""
    return f"random_part_{k}.mp4"
