"""The lmms-eval probe variants (``splice_video_<probe>``): their YAML, the probed clip
files they hand to models (decoded back with PyAV), and a run by lmms-eval itself with its
dummy model."""

from __future__ import annotations

import av
import numpy as np
import pytest

import splice_dataset as schema
from splice_eval.run import frame_cache, sampling
from splice_eval.run.frame_cache import FrameCache
from tests.support.lmms_tasks import TASK_DIR, docs, eval_dummy, load_task_yaml

VARIANTS = {
    "splice_video_single_frame": "single-frame",
    "splice_video_frame_shuffle": "frame-shuffle",
    "splice_video_reversed": "reversed",
    "splice_video_blind": "blind",
}


def _decoded(path: str) -> np.ndarray:
    with av.open(path) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


@pytest.mark.parametrize("task", list(VARIANTS))
def test_variant_yaml_names_the_probe_functions(task):
    config = load_task_yaml(TASK_DIR / f"{task}.yaml")
    name = task.removeprefix("splice_video_")
    assert config["task"] == task and config["dataset_name"] == "video"
    assert config["doc_to_visual"].name == f"utils.doc_to_visual_{name}"
    assert config["doc_to_messages"].name == f"utils.doc_to_messages_{name}"
    assert config["process_results"].name == "utils.process_results"  # scored the same way


def test_probed_clip_files_show_what_the_probe_says(demo_build, utils, tmp_path, monkeypatch):
    monkeypatch.setenv(utils.CLIP_CACHE_ENV, str(tmp_path / "clips"))
    monkeypatch.setenv(frame_cache.CACHE_ENV, str(tmp_path / "frames"))
    doc = docs(demo_build, "video", utils)[0]
    plain = utils.doc_to_visual(doc)
    sampled = [sampling.sample_frames(p, **utils.PROBE_FRAMES.kwargs()).frames for p in plain]
    counts = [len(s) for s in sampled]
    for probe_fn, check in (
        (utils.doc_to_visual_single_frame, lambda got, frames: len(got) == 1),
        (utils.doc_to_visual_reversed, lambda got, frames: len(got) == len(frames)),
        (utils.doc_to_visual_frame_shuffle, lambda got, frames: len(got) == len(frames)),
        (
            utils.doc_to_visual_blind,
            lambda got, frames: (
                len(got) == len(frames) and np.abs(got.astype(int) - 128).max() <= 3
            ),
        ),
    ):
        paths = probe_fn(doc)
        assert len(paths) == len(plain)
        for path, original, frames in zip(paths, plain, sampled, strict=True):
            assert path != original and path.endswith(original.rsplit("/", 1)[1])
            got = _decoded(path)
            assert check(got, frames), (probe_fn.__name__, got.shape, frames.shape)
            assert got.shape[1] == frames.shape[1] // 2 * 2  # the size, to an even side
    # reversed: the last sampled frame comes first (H.264 is lossy: compare loosely)
    rev = _decoded(utils.doc_to_visual_reversed(doc)[0])
    first, last = sampled[0][-1], sampled[0][0]
    h, w = rev.shape[1:3]
    if counts[0] > 1 and np.abs(first.astype(int) - last.astype(int)).mean() > 10:
        assert (
            np.abs(rev[0].astype(int) - first[:h, :w]).mean()
            < np.abs(rev[0].astype(int) - last[:h, :w]).mean()
        )
    # four probes, one decode per clip: the frame cache holds one entry per clip
    cached = FrameCache(tmp_path / "frames").entries()
    assert len(cached) == len(plain)
    # the chat messages carry the probed files, after the same headings
    messages = utils.doc_to_messages_blind(doc, {"pre_prompt": "", "post_prompt": ""})
    urls = [c["url"] for c in messages[0]["content"] if c["type"] == "video"]
    assert urls == utils.doc_to_visual_blind(doc)
    assert doc[schema.VIDEO_ID] in urls[0]


@pytest.mark.parametrize("task", ["splice_video_blind", "splice_video_frame_shuffle"])
def test_lmms_eval_runs_a_probe_variant_end_to_end(lmms, demo_build, tmp_path, task):
    out, results, _ = eval_dummy(lmms, demo_build, tmp_path, task, "Video 2 -> Video 1")
    assert results["configs"][task]["dataset_name"] == "video"
    assert "binary_accuracy,none" in results["results"][task]
    (samples_file,) = out.rglob(f"*_samples_{task}.jsonl")
    assert samples_file.read_text(encoding="utf-8").strip()
