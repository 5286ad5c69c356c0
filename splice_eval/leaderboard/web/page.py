"""The leaderboard page: Gradio's own components (``gr.Blocks``, ``gr.Dataframe``,
``gr.Dropdown``, ``gr.CheckboxGroup``, ``gr.Slider``, ``gr.Textbox``, ``gr.Plot``), built from
``board_view`` and ``entry_view`` alone, so what the page shows is what ``show`` prints.

Two tabs: the board (filters, search, sort by any column, score against parameters) and an
entry (provenance, scores, breakdowns, plots, the prediction file), opened by a click on a
row, by the entry menu, or by a link ``?entry=<folder>``. A Space adds a third tab, the
submission form (``submit_tab``). Handlers are hidden from Gradio's API page: the page is the
interface, and the board is read-only here.
"""

# No `from __future__ import annotations`: Gradio reads the handlers' annotations
# (gr.Request, gr.SelectData) as objects to know what to pass them.
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import splice_dataset as sd

from .. import columns as col
from ..records import TIERS, Board
from .board_view import (
    ALL_CONFIGS,
    Filters,
    Rendered,
    params_plot,
    ranking_method,
    render_board,
    rows_for,
    shown_columns,
    table,
)
from .entry_view import render_entry

GRADIO_VERSION = "6.31.0"  # setup.cfg's pin and the Space's sdk_version
TITLE = "SPLICE leaderboard"
BOARD_TAB, ENTRY_TAB, SUBMIT_TAB = "board", "entry", "submit"
HIDDEN = {"api_visibility": "private", "queue": True}
# A row's click opens its entry; the menu lists every entry by name (text, never markup).
NO_ENTRY = "Choose an entry in the table or the menu."
# The page's tables in the window's width: a little smaller type, and words broken only
# where they may be (Gradio's cells break "rescored" into "rescor" / "ed").
CSS = """
.splice-table .body-cell span { font-size: 12px; word-break: normal; overflow-wrap: break-word; }
.splice-table span.header { font-size: 12px; word-break: normal; overflow-wrap: normal; }
.splice-table .cell-wrap { padding: 6px 5px; }
"""
TABLES = ["splice-table"]  # the class of the page's tables (CSS above)
PINNED = 2  # the rank and the model stay when a narrow window scrolls the table sideways
TABLE_MAX_HEIGHT = 100_000  # pixels: the table never scrolls inside a box of its own


def gradio() -> Any:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from splice_build.errors import require

    return require("gradio", "leaderboard", "splice leaderboard serve")


def theme(gr: Any) -> Any:
    """The default look with the system's fonts: the page fetches nothing from elsewhere."""
    return gr.themes.Default(
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "monospace"],
    )


def _frame(t: Any) -> Any:
    import pandas as pd  # noqa: PLC0415 - gradio's own dependency

    return pd.DataFrame(list(t.data), columns=list(t.headers))


@dataclass
class _BoardTab:
    filters: list  # the inputs of every refresh, in Filters' order
    grid: Any
    slugs: Any
    plot: Any
    method: Any


@dataclass
class _EntryTab:
    choice: Any
    outputs: list  # title, provenance, scores, breakdowns, two plots, prediction files


def build_page(board: Board, submit_tab: Callable[[Any], None] | None = None) -> Any:
    """The page's Blocks; ``submit_tab(gr)`` adds the Space's submission form in its tab."""
    gr = gradio()
    first = render_board(board)
    with gr.Blocks(title=TITLE, analytics_enabled=False, fill_width=True) as demo:
        gr.Markdown(first.header, elem_id="board-header", latex_delimiters=[])
        with gr.Tabs(selected=BOARD_TAB) as tabs:
            with gr.Tab("Board", id=BOARD_TAB):
                board_tab = _board_tab(gr, first, board.config.source_title)
            with gr.Tab("Entry", id=ENTRY_TAB):
                entry_tab = _entry_tab(gr, list(first.entries))
            if submit_tab is not None:
                with gr.Tab("Submit", id=SUBMIT_TAB):
                    submit_tab(gr)
        _wire_board(gr, board, board_tab, first.params)
        _wire_entry(gr, board, demo, tabs, board_tab, entry_tab)
    return demo


def _board_tab(gr: Any, first: Rendered, source: str) -> _BoardTab:
    low, high = first.params
    method = gr.Markdown(first.method, elem_id="ranking-method", latex_delimiters=[])
    with gr.Row():
        config = gr.Dropdown(first.choices["configs"], value=ALL_CONFIGS, label="config",
                             elem_id="filter-config")  # fmt: skip
        metric = gr.Dropdown([(col.METRIC_LABELS[m], m) for m in col.METRICS],
                             value=col.DEFAULT_METRIC, label="rank by",
                             elem_id="rank-metric")  # fmt: skip
        search = gr.Textbox(label="search (model, submitter, toolkit)", elem_id="search",
                            max_length=200)  # fmt: skip
    with gr.Row():
        toolkits = gr.CheckboxGroup(first.choices["toolkits"], value=first.choices["toolkits"],
                                    label="toolkit", elem_id="filter-toolkit")  # fmt: skip
        weights = gr.CheckboxGroup(first.choices["weights"], value=first.choices["weights"],
                                   label="weights", elem_id="filter-weights")  # fmt: skip
        tiers = gr.CheckboxGroup(list(TIERS), value=list(TIERS), label="tier",
                                 elem_id="filter-tier")  # fmt: skip
    with gr.Row():
        pmin = gr.Slider(low, high, value=low, label="parameters from (B)",
                         elem_id="params-min")  # fmt: skip
        pmax = gr.Slider(low, high, value=high, label="parameters to (B)",
                         elem_id="params-max")  # fmt: skip
        unknown = gr.Checkbox(True, label="entries without a parameter count",
                              elem_id="params-unknown")  # fmt: skip
    with gr.Row():
        sortable = [("rank (as ranked)", "rank")]
        labelled = col.for_source(col.COLUMNS, source)  # as the board's source names it
        sortable += [(c.label, c.name) for c in labelled if c.type != col.RANK]
        sort_by = gr.Dropdown(sortable, value="rank", label="sort by", elem_id="sort-by")
        descending = gr.Checkbox(False, label="descending", elem_id="descending")
        columns = gr.Dropdown([(c.label, c.name) for c in labelled if not c.shown],
                              value=[], multiselect=True, label="more columns",
                              elem_id="columns")  # fmt: skip
    # the whole table in the page (no box of its own to scroll down), columns sized to fit
    grid = gr.Dataframe(_frame(first.table), datatype=list(first.table.datatypes),
                        column_widths=list(first.table.widths), interactive=False, wrap=True,
                        max_height=TABLE_MAX_HEIGHT, pinned_columns=PINNED,
                        elem_id="board-table", elem_classes=TABLES,
                        label="entries (click a row to open it)")  # fmt: skip
    slugs = gr.State(list(first.table.slugs))
    plot = gr.Plot(first.plot, format="png", label="score against parameters",
                   elem_id="params-plot")  # fmt: skip
    inputs = [config, metric, toolkits, weights, tiers, pmin, pmax, unknown, search, sort_by,
              descending, columns]  # fmt: skip
    return _BoardTab(inputs, grid, slugs, plot, method)


def _filters(values: list, low: float, high: float) -> Filters:
    """A visitor's widget values as Filters; anything not offered falls back to the default
    (a handler's inputs come from the browser: they are checked, never trusted)."""
    cfg, met, tk, wt, tr, lo, hi, unk, q, sort, desc, more = values
    return Filters(
        config=cfg if cfg in (ALL_CONFIGS, *sd.CONFIGS) else ALL_CONFIGS,
        metric=met if met in col.METRICS else col.DEFAULT_METRIC,
        toolkits=tuple(str(t) for t in tk or ()),
        weights=tuple(str(w) for w in wt or ()),
        tiers=tuple(str(t) for t in tr or ()),
        params_min=lo if isinstance(lo, int | float) and lo > low else None,
        params_max=hi if isinstance(hi, int | float) and hi < high else None,
        without_params=bool(unk),
        search=str(q or "")[:200],
        sort_by=sort if sort == "rank" or sort in col.BY_NAME else "rank",
        descending=bool(desc),
        extra_columns=tuple(m for m in more or () if m in col.BY_NAME),
    )


def _wire_board(gr: Any, board: Board, tab: _BoardTab, params: tuple[float, float]) -> None:
    low, high = params

    def refresh(*values):
        filters = _filters(list(values), low, high)
        rows = rows_for(board, filters)
        t = table(rows, shown_columns(filters, rows, board.config.source_title))
        frame = gr.update(value=_frame(t), datatype=list(t.datatypes), column_widths=list(t.widths))
        return frame, list(t.slugs), params_plot(rows, filters), ranking_method(board, filters)

    outputs = [tab.grid, tab.slugs, tab.plot, tab.method]
    for widget in tab.filters:
        widget.change(refresh, tab.filters, outputs, trigger_mode="always_last", **HIDDEN)


def _wire_entry(
    gr: Any, board: Board, demo: Any, tabs: Any, board_tab: _BoardTab, tab: _EntryTab
) -> None:
    def open_row(shown: list[str], evt: gr.SelectData):
        row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        if not isinstance(row, int) or not 0 <= row < len(shown):
            return gr.update(), gr.update()
        return gr.update(value=shown[row]), gr.Tabs(selected=ENTRY_TAB)

    board_tab.grid.select(open_row, [board_tab.slugs], [tab.choice, tabs], **HIDDEN)

    def show_entry(slug: str | None):
        page = render_entry(board, slug) if slug else None
        if page is None:  # nothing chosen: no empty tables, plots or file list
            empty = gr.update(value=None, visible=False)
            return NO_ENTRY, "", empty, empty, empty, empty, empty
        files = [str(f) for f in page.prediction_files]
        return (
            page.title,
            page.provenance,
            gr.update(value=_frame_of(*page.scores), visible=True),
            gr.update(value=_frame_of(*page.breakdowns), visible=True),
            gr.update(value=page.clip_plot, visible=True),
            gr.update(value=page.domain_plot, visible=True),
            gr.update(value=files or None, visible=bool(files)),
        )

    tab.choice.change(show_entry, [tab.choice], tab.outputs, **HIDDEN)

    def from_link(request: gr.Request):
        slug = request.query_params.get("entry") or "" if request else ""
        if slug and any(e.slug == slug for e in board.entries):
            return gr.update(value=slug), gr.Tabs(selected=ENTRY_TAB)
        return gr.update(), gr.update()

    demo.load(from_link, None, [tab.choice, tabs], **HIDDEN)


def _entry_tab(gr: Any, entries: list[tuple[str, str]]) -> _EntryTab:
    choice = gr.Dropdown(entries, value=None, label="entry", elem_id="entry-choice")
    title = gr.Markdown(NO_ENTRY, elem_id="entry-title", latex_delimiters=[])
    prov = gr.Markdown(elem_id="entry-provenance", latex_delimiters=[])
    # hidden until an entry is chosen (an empty Dataframe shows a header "1 2 3")
    scores = gr.Dataframe(interactive=False, label="scores (95% intervals)",
                          elem_id="entry-scores", elem_classes=TABLES, wrap=True,
                          visible=False)  # fmt: skip
    with gr.Row():
        clip_plot = gr.Plot(format="png", label="by clip count", elem_id="clip-plot",
                            visible=False)  # fmt: skip
        domain_plot = gr.Plot(format="png", label="by domain", elem_id="domain-plot",
                              visible=False)  # fmt: skip
    parts = gr.Dataframe(interactive=False, label="breakdowns", wrap=True,
                         elem_id="entry-breakdowns", elem_classes=TABLES, max_height=480,
                         visible=False)  # fmt: skip
    # every file of the entry (one per run: configs, probes, question formats), each a link
    download = gr.File(file_count="multiple", interactive=False, visible=False,
                       label="prediction files, as submitted", elem_id="download")  # fmt: skip
    return _EntryTab(choice, [title, prov, scores, parts, clip_plot, domain_plot, download])


def _frame_of(headers: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> Any:
    import pandas as pd  # noqa: PLC0415

    return pd.DataFrame(list(rows), columns=list(headers))


def launch(
    board: Board,
    host: str = "127.0.0.1",
    port: int | None = None,
    block: bool = True,
    submit_tab: Callable[[Any], None] | None = None,
    max_file_size: int | None = None,
) -> Any:
    """Serve the page; files only from the board's entry folders (the prediction files);
    uploads (the Space's form) refused by the server past ``max_file_size`` bytes."""
    gr = gradio()
    demo = build_page(board, submit_tab)
    demo.queue(default_concurrency_limit=8)
    demo.launch(
        server_name=host,
        server_port=port,
        allowed_paths=[str(Path(board.path).resolve() / "entries")],
        prevent_thread_lock=not block,
        share=False,
        ssr_mode=False,
        quiet=True,
        footer_links=[],
        theme=theme(gr),
        css=CSS,
        max_file_size=max_file_size,
    )
    return demo
