from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.annotate_serving import export_package


@pytest.fixture(scope="module")
def package(demo_build, tmp_path_factory) -> tuple[Path, dict]:
    """A real export (read-only for the tests: each copies or writes answers elsewhere)."""
    root = tmp_path_factory.mktemp("annotate-app") / "packages"
    return root, export_package(demo_build, root)
