"""The leaderboard page in a real headless Chromium (Debian's, driven by Playwright; no
browser is downloaded), served on 127.0.0.1 from a real board (``tests/support/web_board``:
init on the demo build and three adds, one named with an HTML and Markdown injection): the
rows, a sort, a filter, the search, an entry page with its plots and prediction file, and
the injection shown as the characters typed. One server and one browser for the module."""

from __future__ import annotations

import gzip
import os
import socket
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

from splice_eval.leaderboard import columns as col
from splice_eval.leaderboard.table import board_rows, load_board
from tests.support.web_board import INJECTION, SUBMITTER_INJECTION, make_board

pytest.importorskip("gradio")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
ROW = "#board-table .virtual-row"
INJECTED_SLUG = "img-src-x-onerror-alert-1-bold-link-http-evil.example-h"


@pytest.fixture(scope="module")
def board(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_board(demo_build, tmp_path_factory.mktemp("web-board"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def url(board: Path):
    from splice_eval.leaderboard.web.page import launch

    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = tempfile.mkdtemp(prefix="splice-gradio-")
    port = _free_port()
    demo = launch(load_board(board), "127.0.0.1", port, block=False)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """One Chromium for the module; any request off 127.0.0.1 is aborted and recorded, and
    every dialog (an injected ``alert``) is recorded and dismissed."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (Debian package chromium; make test installs it)")
    outside: list[str] = []
    dialogs: list[str] = []

    def local_only(route):
        if urlparse(route.request.url).hostname != "127.0.0.1":
            outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=CHROMIUM, args=FLAGS,
            headless=True, viewport={"width": 1366, "height": 900}, accept_downloads=True,
        )  # fmt: skip
        context.route("**/*", local_only)
        context.on(
            "page",
            lambda page: page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())),
        )
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.set_default_timeout(120_000)  # generous: the machine is shared
        expect.set_options(timeout=120_000)
        yield page, outside, dialogs
        context.close()


def _model_cells(page) -> list[str]:
    """The "model" column of the rows shown, in order."""
    column = list(c.name for c in col.shown()).index("name")
    return page.locator(f"{ROW} [data-col='{column}']").all_inner_texts()


def _no_markup_from(page, where: str) -> None:
    """Nothing the injection asks for exists in ``where``: no image, no link, no bold, no
    heading made of it."""
    assert page.locator(f"{where} img[src='x']").count() == 0
    assert page.locator(f"{where} a[href*='evil']").count() == 0
    assert page.locator(f"{where} strong", has_text="bold").count() == 0
    assert page.locator(f"{where} script").count() == 0


def test_board_page_rows_sort_filter_search(url, board, browser):
    page, outside, dialogs = browser
    page.goto(url)
    rows = board_rows(load_board(board))
    expect(page.locator(ROW)).to_have_count(len(rows))
    assert _model_cells(page) == [r["name"] for r in rows]  # ranked as `show` ranks them
    expect(page.locator("#ranking-method")).to_contain_text("paired bootstrap")
    expect(page.locator("#ranking-method")).to_contain_text("2.5% quantile")
    expect(page.locator("#board-header")).not_to_contain_text("Stale")  # scored just now
    plot = page.locator("#params-plot img")
    expect(plot).to_have_count(1)
    assert page.evaluate("(img) => img.naturalWidth", plot.element_handle()) > 100

    # sort by parameters, largest first: the 72B entry, then the 7B one, unknown sizes last
    page.locator("#sort-by input").click()
    page.get_by_role("option", name="params (B)", exact=True).click()
    page.locator("#descending input").check()
    expect(page.locator(f"{ROW} >> nth=0")).to_contain_text(INJECTION)
    assert _model_cells(page)[1] == "org/open-7b"

    # a filter: closed weights off
    assert "org/closed-api" in _model_cells(page)
    page.locator("#filter-weights label", has_text="closed").click()
    expect(page.locator(ROW)).to_have_count(len(rows) - 1)
    assert "org/closed-api" not in _model_cells(page)

    # search: the injection's own characters find it, and it is shown as typed
    page.fill("#search textarea", "onerror")
    expect(page.locator(ROW)).to_have_count(1)
    expect(page.locator(ROW)).to_contain_text(INJECTION)
    _no_markup_from(page, "#board-table")
    assert outside == [] and dialogs == []


def test_entry_page_provenance_plots_download(url, board, browser, tmp_path):
    page, outside, dialogs = browser
    page.goto(url)
    page.fill("#search textarea", "onerror")
    expect(page.locator(ROW)).to_have_count(1)
    page.locator(f"{ROW} .body-cell", has_text="onerror").first.click()  # a row opens its entry

    title = page.locator("#entry-title")
    expect(title).to_contain_text(INJECTION)  # the name as typed, in a Markdown heading
    provenance = page.locator("#entry-provenance")
    expect(provenance).to_contain_text(SUBMITTER_INJECTION)
    expect(provenance).to_contain_text("72")
    for where in ("#entry-title", "#entry-provenance"):
        _no_markup_from(page, where)
    assert page.locator("#entry-provenance em").count() == 0  # _em_ stays underscores
    assert page.locator("#entry-provenance code").count() == 0

    expect(page.locator("#entry-breakdowns")).to_contain_text("by clip count")
    expect(page.locator("#entry-breakdowns")).to_contain_text("by reasoning group")
    for plot in ("#clip-plot img", "#domain-plot img"):
        expect(page.locator(plot)).to_have_count(1)
        size = page.evaluate("(img) => img.naturalWidth", page.locator(plot).element_handle())
        assert size > 100, plot

    with page.expect_download() as got:
        page.locator("#download a[download]").click()  # its one file
    saved = tmp_path / "download"
    got.value.save_as(saved)
    submitted = board / "entries" / INJECTED_SLUG
    [original] = submitted.glob("predictions*")
    assert saved.read_bytes() == original.read_bytes()  # the file as submitted
    assert b"org/injected-72b" in gzip.decompress(saved.read_bytes())
    assert outside == [] and dialogs == []


def test_a_link_opens_an_entry(url, browser):
    page, _, dialogs = browser
    page.goto(f"{url}/?entry=org-open-7b")
    expect(page.locator("#entry-title")).to_contain_text("org/open-7b")
    expect(page.locator("#entry-provenance")).to_contain_text("alice")
    page.goto(f"{url}/?entry=..%2F..%2Fboard.yaml")  # no such entry: the board, untouched
    expect(page.locator(ROW).first).to_be_visible()
    assert dialogs == []


def _scroll_boxes(page, where: str) -> list[str]:
    """The elements in ``where`` that scroll their content inside a box of their own."""
    return page.evaluate(
        """(where) => [...document.querySelectorAll(where + ' *')].filter((el) => {
             const s = getComputedStyle(el), scrolls = (o) => ['auto', 'scroll'].includes(o);
             const y = scrolls(s.overflowY) && el.scrollHeight > el.clientHeight + 2;
             const x = scrolls(s.overflowX) && el.scrollWidth > el.clientWidth + 2;
             return x || y;
           }).map((el) => el.tagName + '.' + el.className)""",
        where,
    )


def _header_cells(page) -> list[dict]:
    """Each header cell's label, right edge and the lines its label takes."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#board-table th')].map((th) => {
             const label = th.querySelector('span.header') || th;
             const range = document.createRange();
             range.selectNodeContents(label);
             const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
             return {label: label.textContent.trim(), right: th.getBoundingClientRect().right,
                     lines: lines.size};
           })"""
    )


def _column(page, label: str) -> list[str]:
    labels = [h["label"] for h in _header_cells(page)]
    return page.locator(f"{ROW} [data-col='{labels.index(label)}']").all_inner_texts()


def test_the_board_fits_the_window_and_shows_what_it_ranks_by(url, board, browser):
    page, outside, dialogs = browser
    page.set_viewport_size({"width": 1400, "height": 1000})
    try:
        page.goto(url)
        rows = board_rows(load_board(board))
        expect(page.locator(ROW)).to_have_count(len(rows))  # every row in the page itself
        assert _scroll_boxes(page, "#board-table") == []
        width = page.evaluate("() => document.documentElement.clientWidth")
        headers = _header_cells(page)
        for label in ("params (B)", "weights", "toolkit", "frames", "date", "COIN in training?"):
            cell = next(h for h in headers if h["label"] == label)
            assert cell["right"] <= width, cell  # the settings on screen
        assert all(h["lines"] <= 2 for h in headers), headers  # no label one letter a line
        assert set(_column(page, "coverage")) == {"100.0%"}
        ranks = _column(page, "rank")
        ranked = [r for r in ranks if r.strip()]
        assert ranked and ranks[: len(ranked)] == ranked  # unranked rows after ranked ones

        for option, label in (("edit", "video_text edit"), ("LCS", "video_text LCS")):
            page.locator("#rank-metric input").click()
            page.get_by_role("option", name=option, exact=True).click()
            expect(page.locator("#board-table thead")).to_contain_text(label)
            expect(page.locator("#ranking-method")).to_contain_text(option)
            ranks = _column(page, "rank")
            ranked = [r for r in ranks if r.strip()]
            assert ranked and ranks[: len(ranked)] == ranked, (option, ranks)
            assert [h["label"] for h in _header_cells(page)].count(label) == 1
            assert _scroll_boxes(page, "#board-table") == []  # still the window's width
        expect(page.locator("#board-header")).to_contain_text("STAND-IN BUILD")  # the demo's
    finally:
        page.set_viewport_size({"width": 1366, "height": 900})
    assert outside == [] and dialogs == []


def test_entry_page_rank_every_file_and_no_empty_tables(url, board, browser, tmp_path):
    page, outside, dialogs = browser
    page.goto(url)
    page.get_by_role("tab", name="Entry").click()
    expect(page.locator("#entry-title")).to_contain_text("Choose an entry")
    for empty in ("#entry-scores", "#entry-breakdowns", "#download"):
        expect(page.locator(empty)).to_be_hidden()  # no table headed "1 2 3"

    b = load_board(board)
    tied = next(e for e in b.entries if e.config == "video_text" and "-" in e.rank_text)
    page.goto(f"{url}/?entry={tied.slug}")
    scores = page.locator("#entry-scores")
    expect(scores).to_contain_text(tied.rank_text)  # the rank the board shows, e.g. 2-6
    row = scores.locator("[role=row]", has_text="video_text").first
    expect(row).to_contain_text(tied.rank_text)

    page.goto(f"{url}/?entry=org-closed-api")  # submitted as two files
    expect(page.locator("#entry-title")).to_contain_text("org/closed-api")
    stored = sorted((board / "entries" / "org-closed-api").glob("predictions*"))
    assert len(stored) == 2
    links = page.locator("#download a[download]")
    expect(links).to_have_count(2)
    got = []
    for k in range(2):
        with page.expect_download() as download:
            links.nth(k).click()
        saved = tmp_path / f"got-{k}"
        download.value.save_as(saved)
        got.append(saved.read_bytes())
    assert sorted(got) == sorted(p.read_bytes() for p in stored)
    assert outside == [] and dialogs == []
