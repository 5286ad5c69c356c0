"""The exported Python as each toolkit's own pre-commit checks write it, so that a
contributor's ``pre-commit run --all-files`` on their checkout changes none of the export.

The product is formatted by ruff at line length 100; the toolkits format otherwise, and the
export is generated, so it is formatted here, after the copy, by the same tools at the same
versions and settings as the toolkits' ``.pre-commit-config.yaml`` (read from their
repositories: VLMEvalKit at e8e78f0, 2026-08-18; lmms-eval at 75571cf, 2026-08-06):

- VLMEvalKit: flake8 7.1.2 (``--max-line-length=120 --ignore=W503``), isort 6.0.1 (its
  ``setup.cfg`` [isort]), yapf 0.43.0 (``--style={column_limit=120}``), in that order.
  isort wraps imports at 99 columns and yapf joins them up to 120, so a file whose imports
  they disagree on would change on every run: its top-level imports are left to isort alone
  (``# yapf: disable`` ... ``# yapf: enable``, yapf's own switch).
- lmms-eval: black 25.1.0 (``--line-length=240``), then isort 6.0.1 (``--profile black``).

``flake8`` only checks; ``tests/splice_eval/export/test_toolkit_checks.py`` runs it and the
formatters' own checks on the exported files.
"""

from __future__ import annotations

import ast
import functools

from splice_build.errors import UserError

YAPF_STYLE = "{column_limit: 120}"
VLMEVAL_ISORT = {
    "line_length": 99,
    "multi_line_output": 0,
    "known_first_party": ["vlmeval"],
    "no_lines_before": ["STDLIB", "LOCALFOLDER"],
    "sections": ["FUTURE", "STDLIB", "THIRDPARTY", "FIRSTPARTY", "LOCALFOLDER"],
}
VLMEVAL_FLAKE8 = ["--max-line-length=120", "--ignore=W503"]
BLACK_LINE_LENGTH = 240
LMMS_ISORT = {"profile": "black"}
YAPF_OFF, YAPF_ON = "# yapf: disable\n", "# yapf: enable\n"


def _tools():
    try:
        import black
        import isort
        from yapf.yapflib.yapf_api import FormatCode
    except ImportError as exc:
        raise UserError(
            f"export-task: {exc.name} is missing; the export is formatted as the toolkits' "
            "pre-commit checks format: pip install 'splice-benchmark[export]'"
        ) from None
    return black, isort, FormatCode


def _yapf(text: str) -> str:
    _, _, format_code = _tools()
    return format_code(text, style_config=YAPF_STYLE)[0]


def _isort(text: str, settings: dict) -> str:
    _, isort, _ = _tools()
    return isort.code(text, config=isort.Config(**settings))


def _imports_left_to_isort(text: str) -> str:
    """``text`` with its top-level import block between yapf's off and on switches."""
    body = ast.parse(text).body
    imports = [i for i, n in enumerate(body) if isinstance(n, (ast.Import, ast.ImportFrom))]
    if not imports:
        return text
    first, last = body[imports[0]], body[imports[-1]]
    lines = text.splitlines(keepends=True)
    lines.insert(last.end_lineno, YAPF_ON)
    lines.insert(first.lineno - 1, YAPF_OFF)
    return "".join(lines)


def vlmevalkit_python(text: str) -> str:
    """``text`` as VLMEvalKit's isort then yapf leave it, and stable under both."""
    out = _yapf(_isort(text, VLMEVAL_ISORT))
    if _isort(out, VLMEVAL_ISORT) != out:
        out = _yapf(_isort(_imports_left_to_isort(text), VLMEVAL_ISORT))
    return out


def lmms_eval_python(text: str) -> str:
    """``text`` as lmms-eval's black then isort leave it."""
    black, _, _ = _tools()
    mode = black.Mode(line_length=BLACK_LINE_LENGTH)
    return _isort(black.format_str(text, mode=mode), LMMS_ISORT)


FORMATTERS = {"vlmevalkit": vlmevalkit_python, "lmms-eval": lmms_eval_python}


@functools.lru_cache(maxsize=256)  # a staleness check formats the same files again
def toolkit_python(toolkit: str, text: str) -> str:
    """A Python file's text as ``toolkit``'s pre-commit formatters write it."""
    return FORMATTERS[toolkit](text)
