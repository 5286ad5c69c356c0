"""Submitted text on the page: every name and meta value a submitter wrote is data, shown as
the characters they typed. Gradio's Markdown renders links, images, emphasis and raw HTML
(sanitized, but a link or an image that fetches elsewhere survives sanitizing), so text
headed for Markdown is HTML-escaped and every Markdown punctuation mark backslash-escaped.
Dataframe cells of type ``str`` are shown as text by Gradio itself."""

from __future__ import annotations

import html
import math
import re
from typing import Any

# CommonMark's escapable ASCII punctuation: a backslash before any of them shows it as is.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:\"'=$/^%@?,])")
# Line breaks would start new blocks (a heading, a list) inside a table cell or a line.
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
MAX_SHOWN = 300  # characters of one submitted value shown on the page


def md(value: Any) -> str:
    """``value`` as literal text inside Markdown: no markup, no HTML, one line, bounded."""
    # entities first (their "&" and ";" stay unescaped, so they are read as entities)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(plain(value), quote=False))


def plain(value: Any) -> str:
    """``value`` as one bounded line of text (for a Dataframe cell or a title)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return number(value)
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    else:
        text = str(value)
    text = _LINE_BREAKS.sub(" ", text).strip()
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.{digits}f}"


def interval(value: float | None, low: float | None, high: float | None) -> str:
    """ "0.512 [0.494, 0.530]", or the value alone when it has no interval."""
    if value is None:
        return ""
    if low is None or high is None:
        return number(value)
    return f"{number(value)} [{number(low)}, {number(high)}]"


def escape_html(value: Any) -> str:
    return html.escape(plain(value), quote=True)
