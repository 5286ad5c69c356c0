"""The frame cache: a second run decodes nothing (decodes counted, never timed), two runs
filling one cache at once agree, a file cut short is found and redone, and the least
recently used entries go first past the size cap. On the demo build, through ``splice run``
against a fake endpoint on 127.0.0.1."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_eval.predictions import read_predictions
from splice_eval.run import frame_cache
from splice_eval.run.frame_cache import FrameCache
from splice_eval.run.sampling import sample_frames
from tests.support.fake_openai_server import FakeOpenAIServer, Reply, Request, count_clips
from tests.support.read_only import read_only

FRAMES = {"num_frames": 3, "long_side": 48}


class Decodes:
    """``sample_frames`` as the cache calls it, counted (the real decoder still runs)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, clip, **kwargs):
        with self.lock:
            self.count += 1
        return sample_frames(clip, **kwargs)


@pytest.fixture
def decodes(monkeypatch):
    counter = Decodes()
    monkeypatch.setattr(frame_cache, "sample_frames", counter)
    return counter


def _identity(request: Request) -> Reply:
    n = count_clips(request)
    return Reply(content="<order>" + ", ".join(f"Video {k}" for k in range(1, n + 1)) + "</order>")


def _images(server) -> list[list[str]]:
    return [
        [
            p["image_url"]["url"]
            for p in r.body["messages"][0]["content"]
            if p["type"] == "image_url"
        ]
        for r in server.requests
    ]


def _run(demo_build, out, cache, probe="none", limit=4):
    with FakeOpenAIServer(_identity) as server:
        argv = ["run", "--endpoint", server.url, "--model", "m", "--config", "video"]
        argv += ["--data", str(demo_build), "--frames", "num_frames=3,long_side=48"]
        argv += ["--out", str(out), "--limit", str(limit), "--concurrency", "1", "--probe", probe]
        argv += ["--no-frame-cache"] if cache is None else ["--frame-cache", str(cache)]
        assert splice_main(argv) == 0
        return sorted(map(tuple, _images(server)))


def _clips(demo_build, limit=4) -> int:
    rows = list(schema.load("video", source=str(demo_build), decode=False))[:limit]
    return sum(r[schema.NUM_CLIPS] for r in rows)


def test_a_second_run_decodes_nothing_and_sends_the_same(demo_build, tmp_path, decodes):
    cache = tmp_path / "cache"
    clips = _clips(demo_build)
    first = _run(demo_build, tmp_path / "a.jsonl", cache)
    assert decodes.count == clips
    assert len(list(cache.rglob("*.frames.npz"))) == clips
    second = _run(demo_build, tmp_path / "b.jsonl", cache)
    assert decodes.count == clips  # every clip from the cache: no decode
    assert second == first
    # another probe reuses the same decoded frames: probes are applied after the cache
    _run(demo_build, tmp_path / "c.jsonl", cache, probe="reversed")
    assert decodes.count == clips
    # without the cache every clip is decoded again, and the same images are sent
    uncached = _run(demo_build, tmp_path / "d.jsonl", None)
    assert uncached == first


def test_a_truncated_entry_is_detected_and_redone(demo_build, tmp_path, decodes):
    cache = tmp_path / "cache"
    first = _run(demo_build, tmp_path / "a.jsonl", cache)
    entry = sorted(cache.rglob("*.frames.npz"))[0]
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])  # cut short by hand
    before = decodes.count
    again = _run(demo_build, tmp_path / "b.jsonl", cache)
    assert decodes.count == before + 1  # that clip, and only it, decoded again
    assert again == first
    assert entry.read_bytes() == data  # rewritten whole


def test_two_runs_filling_one_cache_at_once_agree(demo_build, tmp_path):
    cache = tmp_path / "cache"
    results: dict[str, list] = {}
    errors: list[BaseException] = []

    def one(name: str) -> None:
        try:
            results[name] = _run(demo_build, tmp_path / f"{name}.jsonl", cache, limit=6)
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in ("x", "y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors and set(results) == {"x", "y"}
    assert results["x"] == results["y"]
    px, py = (read_predictions(tmp_path / f"{n}.jsonl") for n in ("x", "y"))
    assert [(p.video_id, p.order) for p in px] == [(p.video_id, p.order) for p in py]
    assert not [p for p in cache.rglob("*") if p.name.endswith(".tmp")]  # no torn files left
    fresh = FrameCache(cache)
    for entry in cache.rglob("*.frames.npz"):
        assert fresh.read_entry(entry) is not None  # every entry reads back whole


def test_least_recently_used_entries_go_first(tmp_path, demo_build, decodes):
    rows = list(schema.load("video", source=str(demo_build), decode=False))
    clips = [c for r in rows[:2] for c in r[schema.CLIPS]][:4]
    probe = FrameCache(tmp_path / "size")
    probe.sample(clips[0], FRAMES)
    size = probe.entries()[0].stat().st_size
    cache = FrameCache(tmp_path / "lru", max_bytes=int(2.5 * size))
    a = cache.sample(clips[0], FRAMES)
    cache.sample(clips[1], FRAMES)
    path_a, path_b = (cache.path_of(frame_cache.cache_key(c["bytes"], FRAMES)) for c in clips[:2])
    os.utime(path_b, ns=(1, 1))  # b used long ago
    os.utime(path_a, ns=(2, 2))
    again = cache.sample(clips[0], FRAMES)  # a hit: a becomes the most recent
    assert cache.stats.hits == 1 and np.array_equal(again.frames, a.frames)
    cache.sample(clips[2], FRAMES)  # three entries do not fit: the oldest (b) goes
    assert path_a.exists() and not path_b.exists()
    assert cache.stats.evicted == 1


def test_frame_cache_options_are_exclusive(demo_build, tmp_path, capsys):
    argv = ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--config", "video"]
    argv += ["--data", str(demo_build), "--out", str(tmp_path / "x.jsonl")]
    argv += ["--frame-cache", str(tmp_path / "c"), "--no-frame-cache"]
    assert splice_main(argv) == 2
    assert "--frame-cache and --no-frame-cache" in capsys.readouterr().err


def _unwritable_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "cannot be written" in line]


def test_a_read_only_cache_is_read_and_fails_no_row(demo_build, tmp_path, decodes, capsys):
    cache = tmp_path / "cache"
    first = _run(demo_build, tmp_path / "a.jsonl", cache)
    before = decodes.count
    capsys.readouterr()
    with read_only(cache):
        assert _run(demo_build, tmp_path / "b.jsonl", cache) == first  # exit 0 asserted
    assert decodes.count == before  # every clip read from the cache
    assert all("error" not in p.extra for p in read_predictions(tmp_path / "b.jsonl"))
    assert _unwritable_lines(capsys.readouterr().err) == []  # nothing had to be written


def test_an_empty_read_only_cache_is_said_once_and_fails_no_row(
    demo_build, tmp_path, decodes, capsys
):
    cache = tmp_path / "cache"
    cache.mkdir()
    with read_only(cache):
        images = _run(demo_build, tmp_path / "a.jsonl", cache)
    assert decodes.count == _clips(demo_build)
    assert images == _run(demo_build, tmp_path / "b.jsonl", None)
    said = _unwritable_lines(capsys.readouterr().err)
    assert len(said) == 1 and str(cache) in said[0], said
    assert all("error" not in p.extra for p in read_predictions(tmp_path / "a.jsonl"))


def test_an_entry_path_taken_by_a_folder_fails_no_row(demo_build, tmp_path, decodes, capsys):
    cache = tmp_path / "cache"
    first = _run(demo_build, tmp_path / "a.jsonl", cache)
    entry = sorted(cache.rglob("*.frames.npz"))[0]
    entry.unlink()
    (entry / "in-the-way").mkdir(parents=True)
    before = decodes.count
    assert _run(demo_build, tmp_path / "b.jsonl", cache) == first
    assert decodes.count == before + 1
    assert all("error" not in p.extra for p in read_predictions(tmp_path / "b.jsonl"))
    assert len(_unwritable_lines(capsys.readouterr().err)) == 1
