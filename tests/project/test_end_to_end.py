"""From a built folder to a score, the way a researcher would do it: load each config
(normal and streaming), sample frames, build prompts, answer at random in text, parse the
answers with the metric's parser and score them with the `evaluate` metric. Also checks
that nothing a model sees gives the answer away."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import av
import evaluate
import numpy as np
import pytest

import splice_dataset as sd
import splice_metric
from splice_eval.run import prompts, sampling
from splice_metric import parse_order

METRIC_DIR = str(Path(splice_metric.__file__).parent)


@pytest.fixture(scope="module")
def text_metric():
    return evaluate.load(METRIC_DIR, "text")


@pytest.fixture(scope="module")
def label_metric():
    return evaluate.load(METRIC_DIR)


def _random_answer(rng: random.Random, n: int) -> tuple[str, list[int]]:
    labels = list(range(1, n + 1))
    rng.shuffle(labels)
    text = "Let me think.\n<order>" + ", ".join(prompts.clip_label(k) for k in labels) + "</order>"
    return text, labels


def _run(ds, config: str, seed: int = 0) -> tuple[list[str], list[list[int]], int]:
    """Prompts, random text answers and frames for every row; returns texts, references
    and the number of clips whose frames were sampled."""
    rng = random.Random(seed)
    texts, references, sampled = [], [], 0
    for index, row in enumerate(ds):
        assert set(row) == set(sd.columns(config))
        n = row[sd.NUM_CLIPS]
        prompt = prompts.build_prompt(row, config)
        assert prompt.labels == tuple(f"Video {k}" for k in range(1, n + 1))
        messages = prompts.to_chat_messages(prompt, clips_as="video")
        content = messages[0]["content"]
        if config == "text":
            assert len(content) == 1
            assert all(f"Video {k}: {c}" in prompt.text for k, c in enumerate(row[sd.CAPTIONS], 1))
        else:
            assert sum(c["type"] == "video_url" for c in content) == n
            if index < 2:  # frames of every clip of the first rows, both paper settings
                for item in prompt.clips:
                    per_second = sampling.sample_frames(item.clip, fps=1.0, long_side=448)
                    uniform = sampling.sample_frames(item.clip, num_frames=16)
                    assert per_second.frames.dtype == np.uint8 and uniform.frames.shape[0] == 16
                    assert max(per_second.frames.shape[1:3]) <= 448
                    duration = row[sd.CLIP_DURATIONS][item.number - 1]
                    assert abs(len(per_second.frames) - math.ceil(duration)) <= 1
                    assert np.all(np.diff(uniform.times) >= 0)
                    sampled += 1
                images = prompts.to_chat_messages(
                    prompt, clips_as="images", frames={"num_frames": 2}
                )
                assert sum(c["type"] == "image_url" for c in images[0]["content"]) == 2 * n
        text, labels = _random_answer(rng, n)
        assert parse_order(text) == labels
        texts.append(text)
        references.append(list(row[sd.ANSWER]["order"]))
    return texts, references, sampled


@pytest.mark.parametrize("config", sd.CONFIGS)
def test_load_prompt_answer_score(demo_build: Path, config: str, text_metric, label_metric) -> None:
    results = {}
    for streaming in (False, True):
        ds = sd.load(config, source=demo_build, streaming=streaming)
        texts, refs, sampled = _run(ds, config)
        assert len(texts) > 0
        assert sampled > 0 or config == "text"
        scores = text_metric.compute(predictions=texts, references=refs)
        # The same answers already parsed, through the label config: identical scores.
        parsed = [parse_order(t) for t in texts]
        assert label_metric.compute(predictions=parsed, references=refs) == scores
        exact = np.mean([p == r for p, r in zip(parsed, refs, strict=True)])
        assert scores["count"] == len(texts)
        assert scores["invalid_rate"] == 0.0
        assert scores["binary_accuracy"] == pytest.approx(exact)
        results[streaming] = scores
    assert results[False] == results[True]


def test_model_facing_columns_per_config() -> None:
    assert sd.CLIPS not in sd.columns("text") and sd.CAPTIONS in sd.columns("text")
    assert sd.CAPTIONS not in sd.columns("video") and sd.CLIPS in sd.columns("video")
    assert {sd.CLIPS, sd.CAPTIONS} <= set(sd.columns("video_text"))


@pytest.mark.parametrize("config", sd.CONFIGS)
def test_loaded_columns_per_config(demo_build: Path, config: str) -> None:
    names = set(sd.load(config, source=demo_build).column_names)
    assert names == set(sd.columns(config))
    assert (sd.CLIPS in names) == (config != "text")
    assert (sd.CAPTIONS in names) == (config != "video")


def _first_pts_and_tags(data: bytes) -> tuple[float, dict]:
    with av.open(io.BytesIO(data)) as c:
        stream = c.streams.video[0]
        frame = next(c.decode(stream))
        return float(frame.time), {**c.metadata, **stream.metadata}


def test_no_model_facing_column_reveals_the_order(demo_build: Path) -> None:
    rows = list(sd.load("video_text", source=demo_build))
    orders = [list(r[sd.ANSWER]["order"]) for r in rows]
    # The shuffle happened: labels are not simply chronological.
    assert any(o != sorted(o) for o in orders)
    list_columns = [sd.CLIPS, sd.CAPTIONS, sd.CLIP_DURATIONS]
    always_matches = {c: True for c in (sd.CAPTIONS, sd.CLIP_DURATIONS)}
    for row, order in zip(rows, orders, strict=True):
        vid, n = row[sd.VIDEO_ID], row[sd.NUM_CLIPS]
        inverse = [order.index(k) + 1 for k in range(1, n + 1)]
        for column in sd.MODEL_FACING["video_text"]:
            value = row[column]
            if column in list_columns:
                assert len(value) == n, (vid, column)
                continue
            # Scalars: no field spells the order or its inverse.
            for seq in (order, inverse):
                for sep in (",", ", ", " ", ""):
                    spelled = sep.join(map(str, seq))
                    assert n < 2 or spelled not in str(value) or len(spelled) < 3, (vid, column)
        # Clip names name the label only; the clips carry no source times or tags.
        for label, clip in enumerate(row[sd.CLIPS], start=1):
            assert clip["path"] == sd.clip_file_name(vid, label)
            first, tags = _first_pts_and_tags(clip["bytes"])
            assert first == 0.0, (vid, label)
            joined = " ".join(f"{k}={v}" for k, v in tags.items()).lower()
            assert "order" not in joined and "step" not in joined, (vid, label, tags)
        # Per-clip lists are in label order, never sorted into the answer.
        for column in always_matches:
            keys = row[column]
            by_value = sorted(range(1, n + 1), key=lambda k: (keys[k - 1], k))
            if by_value != order and by_value[::-1] != order:
                always_matches[column] = False
    assert not any(always_matches.values()), always_matches
    # Row order says nothing either: rows are sorted by video id.
    ids = [r[sd.VIDEO_ID] for r in rows]
    assert ids == sorted(ids)
