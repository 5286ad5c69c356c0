"""Where the tests find the checkout, defined once: a test file's own depth under tests/
never enters a path, so moving a test between folders changes none of them."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the checkout (this is tests/support/paths.py)
SUPPORT = REPO / "tests" / "support"  # the helpers, and the scripts run in side venvs
DATA = REPO / "tests" / "data"  # files only the tests read (see data/coin/SOURCES.md)
