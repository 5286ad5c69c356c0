"""Prompts: the paper's three (Appendix A.3) from one function, and their chat form."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import av
import numpy as np
import pytest

import splice_dataset as sd
import splice_metric
from splice_eval.run import prompts, sampling

# The expected texts, written out in full (fragments joined as Python joins adjacent
# literals, len(clips) = 3).
VIDEO_3 = (
    "A video has been split into 3 clips, shuffled randomly.Your task is to analyze each clip "
    "deeply to reorder them into the correct temporal sequence. Focus on:1. Visual content: "
    "Examine the actions, transitions, scene details, and context within each clip.Provide the "
    "reordered sequence strictly within order tags in this format: "
    "\u2019<order>Video X, Video Y, Video Z, \u2026</order>\u2019."
)
VIDEO_TEXT_3 = (
    "A video has been split into 3 clips, shuffled randomly.Your task is to analyze each clip "
    "deeply to reorder them into the correct temporal sequence. Focus on:1. *Visual content*: "
    "Examine the actions, transitions, scene details, and context within each clip.2. "
    "*Temporal logic*: Identify the logical progression of events based on what happens before "
    "or after.3. *Annotations*: Leverage the annotations to infer their proper chronological "
    "sequence.Provide the reordered sequence strictly within order tags in this format: "
    "\u2019<order>Video X, Video Y, Video Z, \u2026</order>\u2019."
)
TEXT_3 = (
    "Analyze the following video clips descriptions and order them chronologically as they are "
    "part of one continuous video. Focus on temporal clues, event progression, scene "
    "transitions and other cues Each video clip is labeled as \u2018Video X\u2019, where Video "
    "X corresponds to one shuffled clip. Maintain these labels in your response. \n"
    "Video 1: pour the juice\nVideo 2: cut the oranges\nVideo 3: squeeze the oranges\n"
    "Return the ordered video strictly within <order> tags in this format: "
    "<order>Video X, Video Y \u2026</order> "
)
CAPTIONS = ["pour the juice", "cut the oranges", "squeeze the oranges"]


@pytest.fixture(scope="module")
def row(bikes_mp4: Path) -> dict:
    data = bikes_mp4.read_bytes()
    return {
        sd.VIDEO_ID: "abc",
        sd.NUM_CLIPS: 3,
        sd.CLIPS: [{"bytes": data, "path": sd.clip_file_name("abc", k)} for k in (1, 2, 3)],
        sd.CAPTIONS: CAPTIONS,
        sd.ANSWER: {"order": [2, 3, 1]},
    }


def test_the_three_prompts_word_for_word(row: dict) -> None:
    assert prompts.build_prompt(row, "video").text == VIDEO_3
    assert prompts.build_prompt(row, "video_text").text == VIDEO_TEXT_3
    assert (
        prompts.build_prompt({k: v for k, v in row.items() if k != sd.CLIPS}, "text").text == TEXT_3
    )


# Appendix A.3 of the paper, each prompt as the fragments it prints (adjacent Python
# literals; `len(clips)` stands where the paper's f-string puts the clip count).
PAPER_A3_VIDEO = (
    "A video has been split into len(clips) clips, shuffled randomly.",
    "Your task is to analyze each clip deeply to reorder them into the correct temporal "
    "sequence. Focus on:",
    "1. Visual content: Examine the actions, transitions, scene details, and context within "
    "each clip.",
    "Provide the reordered sequence strictly within order tags in this format: ",
    "\u2019<order>Video X, Video Y, Video Z, \u2026</order>\u2019.",
)
PAPER_A3_VIDEO_TEXT = (
    "A video has been split into len(clips) clips, shuffled randomly.",
    "Your task is to analyze each clip deeply to reorder them into the correct temporal "
    "sequence. Focus on:",
    "1. *Visual content*: Examine the actions, transitions, scene details, and context within "
    "each clip.",
    "2. *Temporal logic*: Identify the logical progression of events based on what happens "
    "before or after.",
    "3. *Annotations*: Leverage the annotations to infer their proper chronological sequence.",
    "Provide the reordered sequence strictly within order tags in this format: ",
    "\u2019<order>Video X, Video Y, Video Z, \u2026</order>\u2019.",
)
PAPER_A3_TEXT_HEAD = (
    "Analyze the following video clips descriptions and order them chronologically as they "
    "are part of one continuous video. ",
    "Focus on temporal clues, event progression, scene transitions and other cues ",
    "Each video clip is labeled as \u2018Video X\u2019, where Video X corresponds to one "
    "shuffled clip. ",
    "Maintain these labels in your response. ",
)
PAPER_A3_TEXT_TAIL = (
    "Return the ordered video strictly within <order> tags in this format: ",
    "<order>Video X, Video Y \u2026</order> ",
)


def test_prompts_match_the_paper_fragments(row: dict) -> None:
    """Against Appendix A.3's printed fragments, joined as Python joins them."""
    for fragments, config in ((PAPER_A3_VIDEO, "video"), (PAPER_A3_VIDEO_TEXT, "video_text")):
        expected = "".join(fragments).replace("len(clips)", "3")
        assert prompts.build_prompt(row, config).text == expected
    prompt = prompts.build_prompt(row, "text").text
    assert prompt.startswith("".join(PAPER_A3_TEXT_HEAD))
    assert prompt.endswith("".join(PAPER_A3_TEXT_TAIL))


def test_clips_are_labelled_with_their_captions(row: dict) -> None:
    video = prompts.build_prompt(row, "video")
    assert video.labels == ("Video 1", "Video 2", "Video 3")
    assert [c.heading for c in video.clips] == ["Video 1", "Video 2", "Video 3"]
    assert all(c.caption is None for c in video.clips)
    assert [c.clip for c in video.clips] == row[sd.CLIPS]
    vt = prompts.build_prompt(row, "video_text")
    assert [c.heading for c in vt.clips] == [f"Video {k}: {c}" for k, c in enumerate(CAPTIONS, 1)]
    text = prompts.build_prompt(row, "text")
    assert [c.clip for c in text.clips] == [None, None, None]
    assert [c.caption for c in text.clips] == CAPTIONS


def test_prompt_count_follows_the_row(row: dict) -> None:
    two = {**row, sd.CLIPS: row[sd.CLIPS][:2], sd.CAPTIONS: CAPTIONS[:2]}
    assert prompts.build_prompt(two, "video").text.startswith("A video has been split into 2 clips")


def test_bad_rows_name_the_video_and_column(row: dict) -> None:
    with pytest.raises(KeyError, match="'abc'.*clips"):
        prompts.build_prompt({sd.VIDEO_ID: "abc", sd.CAPTIONS: CAPTIONS}, "video")
    with pytest.raises(KeyError, match="captions"):
        prompts.build_prompt({sd.VIDEO_ID: "abc", sd.CLIPS: row[sd.CLIPS]}, "video_text")
    with pytest.raises(ValueError, match="3 clips but 2 captions"):
        prompts.build_prompt({**row, sd.CAPTIONS: CAPTIONS[:2]}, "video_text")
    with pytest.raises(ValueError, match="unknown SPLICE config"):
        prompts.build_prompt(row, "audio")


def _data(url: str, mime: str) -> bytes:
    prefix = f"data:{mime};base64,"
    assert url.startswith(prefix)
    return base64.b64decode(url[len(prefix) :])


def test_chat_messages_with_videos(row: dict) -> None:
    prompt = prompts.build_prompt(row, "video_text")
    [message] = prompts.to_chat_messages(prompt, clips_as="video")
    assert message["role"] == "user"
    content = message["content"]
    assert content[0] == {"type": "text", "text": VIDEO_TEXT_3}
    assert len(content) == 1 + 2 * 3
    for k in range(3):
        heading, video = content[1 + 2 * k], content[2 + 2 * k]
        assert heading == {"type": "text", "text": f"Video {k + 1}: {CAPTIONS[k]}"}
        assert video["type"] == "video_url"
        assert _data(video["video_url"]["url"], "video/mp4") == row[sd.CLIPS][k]["bytes"]


@pytest.mark.parametrize(("image_format", "demuxer"), [("jpeg", "jpeg_pipe"), ("png", "png_pipe")])
def test_chat_messages_with_frames_as_images(row: dict, image_format: str, demuxer: str) -> None:
    prompt = prompts.build_prompt(row, "video")
    frames = [sampling.sample_frames(c, num_frames=2, long_side=64) for c in row[sd.CLIPS]]
    [message] = prompts.to_chat_messages(
        prompt, clips_as="images", frames=frames, image_format=image_format
    )
    content = message["content"]
    assert [c["type"] for c in content] == ["text"] + ["text", "image_url", "image_url"] * 3
    assert content[1]["text"] == "Video 1"
    data = _data(content[2]["image_url"]["url"], f"image/{image_format}")
    with av.open(io.BytesIO(data), format=demuxer) as c:
        decoded = next(c.decode(video=0)).to_ndarray(format="rgb24")
    assert decoded.shape == frames[0].frames[0].shape
    error = np.abs(decoded.astype(int) - frames[0].frames[0].astype(int)).mean()
    assert error == 0 if image_format == "png" else error < 12


def test_images_default_to_one_fps_at_448(row: dict) -> None:
    prompt = prompts.build_prompt({**row, sd.CLIPS: row[sd.CLIPS][:1]}, "video")
    content = prompts.to_chat_messages(prompt, clips_as="images")[0]["content"]
    expected = sampling.sample_frames(row[sd.CLIPS][0], fps=1.0, long_side=448)
    assert sum(c["type"] == "image_url" for c in content) == len(expected.frames)


def test_text_config_chat_is_one_text_item(row: dict) -> None:
    prompt = prompts.build_prompt(row, "text")
    assert prompts.to_chat_messages(prompt) == [
        {"role": "user", "content": [{"type": "text", "text": TEXT_3}]}
    ]


def test_chat_rejects_bad_arguments(row: dict) -> None:
    prompt = prompts.build_prompt(row, "video")
    with pytest.raises(ValueError, match="clips_as"):
        prompts.to_chat_messages(prompt, clips_as="audio")
    with pytest.raises(ValueError, match="2 frame sets for 3 clips"):
        prompts.to_chat_messages(prompt, clips_as="images", frames=[None, None])
    with pytest.raises(ValueError, match="image_format"):
        prompts.image_data_url(np.zeros((4, 4, 3), np.uint8), "gif")


def test_answers_use_the_metric_parser(row: dict) -> None:
    assert prompts.parse_order is splice_metric.parse_order
    # An answer in the prompt's own format reads back as labels.
    answer = "<order>" + ", ".join(f"Video {k}" for k in row[sd.ANSWER]["order"]) + "</order>"
    assert prompts.parse_order(answer) == [2, 3, 1]
