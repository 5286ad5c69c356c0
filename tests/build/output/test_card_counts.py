"""A one-video build's card counts in words ("1 video", not "1 videos"), as every command's
message does (``splice_build.plural``; issue 49 section 4)."""

from __future__ import annotations

import re

from huggingface_hub import DatasetCard


def test_a_one_video_cards_counts_are_singular(subset_build):
    out, _ = subset_build(1)
    card = DatasetCard.load(out / "README.md").text
    assert "1 video from 1 domain and 1 task" in card, card[:3000]
    assert not re.search(r"\b1 (videos|clips|tasks|domains)\b", card)
