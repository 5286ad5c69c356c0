"""The page's content without a server: submitted text survives Markdown as the characters
typed, a stale metric is flagged on the board and on the entry, sorting compares values of
their column's type with missing values last, and the filters keep what they say."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from splice_eval.leaderboard import store
from splice_eval.leaderboard.table import board_rows, load_board
from splice_eval.leaderboard.web import board_view, entry_view, text
from splice_eval.leaderboard.web.plots import png
from tests.support.web_board import INJECTION, make_board

HOSTILE = [
    INJECTION,
    "<script>alert(1)</script>",
    "[a](javascript:alert(1)) ![i](http://e/x.png) <http://e> http://e.example",
    "# heading\n- list\n> quote\n| a | b |\n|---|---|",
    "**b** __u__ *i* _e_ ~~s~~ `c` ``` fence",
    "&amp; &lt;b&gt; &#60;b&#62; \\*esc\\* $x^2$ $$y$$",
    "1. one\n+ two\n* three",
    "<!-- c --> <a href='x'>a</a> a_b_c snake_case_name 3 < 4 > 2",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_shows_submitted_text_as_typed(value):
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    rendered = parser.render(text.md(value)).strip()
    assert rendered.startswith("<p>") and rendered.endswith("</p>")
    inner = rendered[3:-4]
    assert not re.search(r"<[a-z]", inner)  # no element made of it
    assert html.unescape(inner) == " ".join(value.split())  # the characters, on one line


def test_long_text_is_bounded():
    assert len(text.plain("x" * 10_000)) == text.MAX_SHOWN


@pytest.fixture(scope="module")
def board(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_board(demo_build, tmp_path_factory.mktemp("web-board"))


def test_a_stale_metric_is_flagged_on_the_board_and_the_entry(board, tmp_path):
    fresh = load_board(board)
    assert "Stale" not in board_view.render_board(fresh).header
    stale = Path(shutil.copytree(board, tmp_path / "board"))
    cfg = yaml.safe_load((stale / store.BOARD_FILE).read_text())
    cfg["metric_version"] = "0123456789abcdef"
    (stale / store.BOARD_FILE).write_text(yaml.safe_dump(cfg))
    old = load_board(stale)
    header = board_view.render_board(old).header
    assert "Stale scores" in header and "0123456789abcdef" in header
    page = entry_view.render_entry(old, "org-open-7b")
    assert "Stale scores" in page.title and "0123456789abcdef" in page.title


def test_sorting_and_filters(board):
    b = load_board(board)
    rows = board_rows(b)
    by_params = board_view.sort_rows(rows, "params_b", descending=True)
    sizes = [r["params_b"] for r in by_params]
    assert sizes[:2] == [72, 7] and all(s is None for s in sizes[2:])  # missing last
    by_rank = board_view.sort_rows(rows, "rank", descending=False)
    lows = [r["rank_low"] for r in by_rank if r["rank_low"] is not None]
    assert lows == sorted(lows)
    by_name = board_view.sort_rows(rows, "name", descending=False)
    assert [r["name"] for r in by_name] == sorted((r["name"] for r in rows), key=str.lower)

    def names(**kw) -> set[str]:
        return {r["name"] for r in board_view.rows_for(b, board_view.Filters(**kw))}

    everything = names()
    assert names(weights=("closed",)) == {"org/closed-api"}
    assert names(toolkits=("lmms-eval",)) == {"org/closed-api"}
    assert names(params_min=10, without_params=False) == {INJECTION}
    assert names(params_max=10, without_params=False) == {"org/open-7b"}
    assert names(tiers=("reported",)) == {r["name"] for r in rows if r["tier"] == "reported"}
    assert names(search="ALICE") == {"org/open-7b"}  # the submitter, case-insensitive
    assert names(config="text") < everything and "org/open-7b" not in names(config="text")
    shown = board_view.shown_columns(board_view.Filters(config="text"))
    assert {c.config for c in shown} == {None, "text"}


def test_the_render_runs_without_a_server_and_plots_are_images(board):
    b = load_board(board)
    first = board_view.render_board(b)
    assert len(first.table.data) == len(board_rows(b))
    assert "2.5% quantile" in first.method
    page = entry_view.render_entry(b, "org-open-7b")
    for fig in (first.plot, page.clip_plot, page.domain_plot):
        assert png(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    # random: the exact row's per-clip-count values; human: the paper's figure, drawn flat
    lines = entry_view.reference_lines(b, "video_text", ["2", "3"])
    exact = next(e for e in entry_view.entry_details(b, "random-exact") if e.config == "video_text")
    assert lines["random"] == dict(exact.breakdowns["num_clips"])
    human = next(e for e in b.entries if e.slug == "paper-human" and e.config == "video_text")
    flat = lines["human (paper, all videos)"]
    assert set(flat) == {"2", "3"} and {v.value for v in flat.values()} == {
        human.metrics["binary_accuracy"].value
    }
    assert entry_view.render_entry(b, "../board.yaml") is None


def test_the_domain_chart_shows_every_domain_name_whole(board):
    """The by-domain chart's names inside the figure ("Food and Snack", never "nd Snack")."""
    page = entry_view.render_entry(load_board(board), "org-open-7b")
    fig = page.domain_plot
    fig.draw_without_rendering()
    labels = fig.axes[0].get_yticklabels()
    assert len(labels) > 5 and any(" and " in t.get_text() for t in labels)
    for label in labels:
        assert label.get_window_extent().x0 >= 0, label.get_text()
