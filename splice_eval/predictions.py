"""The one format for predictions, shared by baselines, the human protocol, the model
runner, ``splice score`` and ``splice report``.

A prediction file is JSON Lines, one object per (video, config)::

    {"video_id": "4MiubN1oQkg", "config": "video_text", "model": "random",
     "raw_output": "<order>Video 2, Video 1</order>", "order": [2, 1]}

``order`` is the parsed answer in the dataset's label space (``null`` when the raw output
could not be parsed: scored as an invalid prediction). In a file of a question format
(metadata ``format``: ``pairwise`` or ``choice``, see ``splice_formats``) each line is one
question: ``video_id`` holds the question's id (``<video id>/p3`` for a pair, the video id
for its choice question) and ``order`` the one option picked, ``[2]``. Extra keys
(``usage``, ``error``, ``annotator``...) are kept and ignored by scoring.

The first line may say how the answers were produced, so that a score is never read apart
from its settings and a rerun never mixes two settings in one file::

    {"splice_metadata": {"producer": "splice run", "model": "...", "config": "video",
     "endpoint": "http://host:8000/v1", "prompt_version": "...", "clips_as": "images",
     "frames": {"fps": 1.0}, "sampling": {"max_tokens": 1024, "temperature": 0.0},
     "splice_version": "0.1.0"}}

Every writer here records one (runner, baselines, human protocol); files without it
(older ones, other tools) still read. ``raw_output`` is stored capped (``cap_raw_output``):
the first and last ``RAW_OUTPUT_KEEP`` characters of a longer answer, with a marker
between; ``order`` is parsed from the whole answer before the cap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from splice_build.atomic import atomic_path
from splice_build.errors import UserError, size_words
from splice_dataset import CONFIGS
from splice_eval.long_rows import LONG_TEXT_KEEP, cut_json_row
from splice_eval.prediction_files import (
    MAX_ROW_BYTES,
    ROW_CUT,
    LongLine,
    csv_records,
    json_records,
    lines,
    starts_a_list,
    warn,
    xlsx_records,
)

FIELDS = ("video_id", "config", "model", "raw_output", "order")  # the rest is `extra`
METADATA_KEY = "splice_metadata"
# Metadata that may differ between runs appending to one file: where the server was and
# which release asked do not change what the answers mean; everything else does.
VOLATILE_METADATA = frozenset({"endpoint", "splice_version", "created"})
# The model name of the human protocol's answers (``splice annotate ingest``): the report
# and its figures draw that run apart, as the paper's human row.
HUMAN_MODEL = "human"
# Kept in a Prediction's ``extra`` for a row read from lmms-eval's ``--log_samples``.
LMMS_DOC_ID = "lmms_doc_id"
RAW_OUTPUT_KEEP = 16 * 1024  # characters kept from each end of a longer raw output
_CAP_WORDS = "characters cut by splice: raw_output keeps"
_CAP_MARKER = re.compile(rf"\n\[\.\.\. \d+ {_CAP_WORDS} \d+ from each end \.\.\.\]\n")


@dataclass(frozen=True)
class Prediction:
    video_id: str
    config: str
    model: str
    raw_output: str | None
    order: list[int] | None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        data = asdict(self)
        extra = data.pop("extra")
        return json.dumps({**data, **extra}, ensure_ascii=False)


def project_version() -> str:
    """The installed splice-benchmark version, recorded in every file's metadata."""
    import importlib.metadata

    try:
        return importlib.metadata.version("splice-benchmark")
    except importlib.metadata.PackageNotFoundError:  # a source tree, not installed
        return "unknown"


def cap_raw_output(text: str | None, keep: int = RAW_OUTPUT_KEEP) -> tuple[str | None, int]:
    """``text`` cut to its first and last ``keep`` characters with a marker between, and
    how many characters were cut (0 when it was short enough to keep whole)."""
    if text is None or len(text) <= 2 * keep:
        return text, 0
    cut = len(text) - 2 * keep
    marker = f"\n[... {cut} {_CAP_WORDS} {keep} from each end ...]\n"
    return text[:keep] + marker + text[-keep:], cut


def metadata_line(metadata: dict[str, Any]) -> str:
    return json.dumps({METADATA_KEY: metadata}, ensure_ascii=False, sort_keys=True)


def metadata_conflict(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The first setting (by name) on which two files' metadata differ, or None."""
    for key in sorted((set(old) | set(new)) - VOLATILE_METADATA):
        was, now = old.get(key), new.get(key)
        if was != now:
            return f"{key} {was!r} (in the file) vs {now!r} (this run)"
    return None


def describe_metadata(metadata: dict[str, Any] | None) -> str:
    """One line saying how a file's answers were produced, for ``score`` and ``report``."""
    if not metadata:
        return "no metadata line: how these answers were produced is not recorded"
    shown = []
    for key in sorted(metadata, key=lambda k: (k not in _SHOWN_FIRST, _SHOWN_FIRST.get(k, 0), k)):
        value = metadata[key]
        if value is None:
            continue
        if isinstance(value, dict):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        if key == "build_id":  # 64 hex digits: 16 name a build, as in every message
            value = str(value)[:16]
        shown.append(f"{key} {value}")
    return "; ".join(shown)


_SHOWN_FIRST = {"producer": 0, "model": 1, "config": 2, "endpoint": 3}

# The toolkits whose files carry no metadata line, named as their rows show them.
LMMS_EVAL, VLMEVALKIT = "lmms-eval", "VLMEvalKit"


def producer_of(path: str | Path) -> str:
    """What wrote a file without a metadata line, as its rows show: VLMEvalKit's result
    tables, lmms-eval's ``--log_samples`` lines (a ``doc_id`` beside the task's record);
    "" when neither (a file the user made)."""
    path = Path(path)
    if is_table(path):
        return VLMEVALKIT
    first = next(iter_located(path), None)
    return LMMS_EVAL if first is not None and LMMS_DOC_ID in first[1].extra else ""


def read_metadata(path: str | Path) -> dict[str, Any] | None:
    """The file's metadata line, or None when it has none (VLMEvalKit's tables never do)."""
    path = Path(path)
    if is_table(path):
        return None
    for _, line in lines(path):
        if isinstance(line, LongLine):
            return None  # a metadata line is short
        if line.strip():
            return _metadata_of(line, path)
    return None


def _metadata_of(line: str, path: Path) -> dict[str, Any] | None:
    if METADATA_KEY not in line:
        return None
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None  # reported as a bad line by the reader
    if not isinstance(data, dict) or set(data) != {METADATA_KEY}:
        return None
    if not isinstance(data[METADATA_KEY], dict):
        raise UserError(f"{path}:1: {METADATA_KEY} must be a JSON object")
    return data[METADATA_KEY]


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read a prediction file (JSONL or CSV, see ``iter_predictions``); a bad line raises
    naming the file and line number."""
    return list(iter_predictions(path))


def iter_predictions(path: str | Path) -> Iterator[Prediction]:
    """The predictions of a file (its metadata line skipped; see ``read_metadata``)."""
    for _, prediction in iter_located(path):
        yield prediction


def iter_located(path: str | Path) -> Iterator[tuple[int, Prediction]]:
    """The predictions of a file with the line (a JSON record: the position) each is on,
    read as a stream (``prediction_files``): JSONL, CSV and TSV of any size, a row over
    ``MAX_ROW_BYTES`` read with each of its texts kept to its last ``LONG_TEXT_KEEP``
    characters (``ROW_CUT`` in its extra fields says how many were cut) or skipped, each
    with a warning naming it; a .json list or .xlsx over ``MAX_TABLE_BYTES`` is refused
    naming the bound.

    Besides this module's own format, what other tools write is read as it stands: only
    ``video_id`` and one of ``order`` / ``raw_output`` are needed (``model`` defaults to
    the metadata's, else the file's stem; ``config`` to the metadata's, else "" for not
    stated; a video id is taken without the spaces around it, as spreadsheets leave them).
    A ``.csv`` file has a header row with those column names (``prediction``, VLMEvalKit's
    answer column, stands for ``raw_output``; an ``order`` cell is a JSON list or numbers
    separated by commas or spaces, empty for none); a quote left open is refused naming
    the row it opens. VLMEvalKit's result files are read as tables too (``.xlsx``,
    ``.tsv``, or ``.json``: a list of records), its ``video`` column standing for
    ``video_id`` (``index``, its row number, is kept as an extra field); see
    ``table_rows``. A JSONL line of lmms-eval's ``--log_samples`` is read through the
    record our task logs under each metric's name. A file whose rows hold no order is read
    by ``scoring`` with the metric's ``parse_order``.

    An lmms-eval samples file whose answers are all empty is refused: that is what
    lmms-eval logs when its model crashed on every document (it catches the error, answers
    "" and exits 0), never a model's answers to score.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if is_table(path):
        metadata, rows = None, table_rows(path)
    else:
        metadata = read_metadata(path) if suffix != ".csv" else None
        rows = _csv_rows(path) if suffix == ".csv" else _json_rows(path)
    defaults = {"model": path.stem, "config": "", **(metadata or {})}
    count, lmms, answered = 0, True, False
    for lineno, data in rows:
        prediction = _prediction(data, f"{path}:{lineno}", defaults)
        count += 1
        lmms = lmms and LMMS_DOC_ID in prediction.extra
        answered = answered or bool((prediction.raw_output or "").strip() or prediction.order)
        yield lineno, prediction
    if count and lmms and not answered:
        raise UserError(
            f"{path}: all {count} answers are empty: the model produced no "
            "text (what lmms-eval logs, exiting 0, when its model crashed); see its log"
        )


# VLMEvalKit's result files (PRED_FORMAT: xlsx, the default, tsv or json): one row per
# question, its columns the dataset's TSV plus ``prediction``.
TABLE_SUFFIXES = (".xlsx", ".tsv", ".json")


def is_table(path: Path) -> bool:
    """Whether ``path`` is read by ``table_rows``: an .xlsx or .tsv file, or a .json file
    holding a JSON list (a .json file of JSON Lines is read as this module's own format)."""
    suffix = path.suffix.lower()
    if suffix != ".json":
        return suffix in TABLE_SUFFIXES
    return starts_a_list(path)


def table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a VLMEvalKit result file as prediction fields, numbered as the file shows
    them (an xlsx or TSV row's line, a JSON record's position from 1). A table whose answer
    cells are all empty (or, in an .xlsx, formulas whose values were never saved) is
    refused with the reason: it holds no model's answers."""
    if path.suffix.lower() == ".xlsx":
        records = xlsx_records(path)
    elif path.suffix.lower() == ".tsv":
        records = csv_records(path, "\t")
    else:
        records = json_records(path)
    count = answered = 0
    for lineno, record in records:
        row = {str(k).strip(): v for k, v in record.items() if k is not None}
        if "video_id" not in row and "video" in row:
            row["video_id"] = row.pop("video")
        if row.get("video_id") is not None:
            row["video_id"] = str(row["video_id"])
        if "prediction" in row and row["prediction"] is not None:
            row["prediction"] = str(row["prediction"])
        if "prediction" in row and "video_id" not in row:
            raise UserError(f"{path}:{lineno}: no video or video_id column")
        count += 1
        answered += any(row.get(k) not in (None, "") for k in _ANSWER_COLUMNS)
        yield lineno, row
    if count and not answered:
        raise UserError(f"{path}: all {count} answer cells are empty{_why_empty(path)}")


def _why_empty(path: Path) -> str:
    """Why an .xlsx shows no answers: formulas whose values were never saved (a program
    that does not compute them wrote it), or nothing at all."""
    if path.suffix.lower() != ".xlsx":
        return ": no model's answers to score"
    for _, record in xlsx_records(path, values=False):
        if any(isinstance(record.get(k), str) and record[k].startswith("=") for k in record):
            return (
                ": they are formulas whose values were never saved (the program that wrote "
                "it does not compute them); open and save it in a spreadsheet program, or "
                "export the answers as values"
            )
    return ": no model's answers to score"


def _json_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    first = True
    for lineno, line in lines(path):
        cut = 0
        if isinstance(line, LongLine):
            line, cut = _cut_line(path, line)
            if line is None:
                continue
        if not line.strip():
            continue
        if first and _metadata_of(line, path) is not None:
            first = False
            continue
        first = False
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise UserError(f"{path}:{lineno}: not valid JSON (nested too deeply)") from None
        if not isinstance(data, dict):
            raise UserError(f"{path}:{lineno}: expected a JSON object")
        if METADATA_KEY in data:
            raise UserError(f"{path}:{lineno}: a metadata line belongs on the first line")
        yield lineno, _lmms_record(data) | ({ROW_CUT: cut} if cut else {})


def _cut_line(path: Path, line: LongLine) -> tuple[str | None, int]:
    """A line over MAX_ROW_BYTES as the JSON text to read, each of its strings kept to its
    last LONG_TEXT_KEEP characters (a final answer is at the end), and how many were cut;
    (None, 0) when it cannot be read so: skipped, with the rest of the file read."""
    cut = cut_json_row(line.pieces())
    where = f"{path}:{line.lineno}"
    if cut is None:
        line.skip()
        warn(
            f"{where}: a line of {size_words(line.size)} or more that is no prediction "
            f"even with each text kept to its last {size_words(LONG_TEXT_KEEP)} (not JSON, "
            "or too much else): skipped, its video not answered"
        )
        return None, 0
    warn(
        f"{where}: a line of {size_words(line.size)}, over the {size_words(MAX_ROW_BYTES)} "
        f"read whole; read with each text kept to its last {size_words(LONG_TEXT_KEEP)} "
        f"(where a final answer is): {cut[1]} characters cut"
    )
    return cut


def _lmms_record(data: dict[str, Any]) -> dict[str, Any]:
    """An lmms-eval sample line as our row: the record ``process_results`` logs under each
    metric's name holds the video id, the raw answer and its order."""
    if "video_id" in data or "doc_id" not in data:
        return data
    records = [v for v in data.values() if isinstance(v, dict) and "video_id" in v]
    if not records:
        return data
    return {
        **{k: v for k, v in records[0].items() if k != "reference"},
        LMMS_DOC_ID: data["doc_id"],
    }


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, row in csv_records(path, ","):
        if any(value for value in row.values()):
            cells = {k.strip(): v or None for k, v in row.items() if k}
            # an empty answer cell is a null answer; other empty cells are not given
            data = {k: v for k, v in cells.items() if v is not None or k in _ANSWER_COLUMNS}
            if data.get("order") is not None:
                data["order"] = _csv_order(data["order"], f"{path}:{lineno}")
            yield lineno, data


_ANSWER_COLUMNS = ("order", "raw_output", "prediction")
_CSV_ORDER = re.compile(r"\[?\s*\d+(?:\s*[,\s]\s*\d+)*\s*\]?")


def _csv_order(cell: str, where: str) -> list[int]:
    if not _CSV_ORDER.fullmatch(cell.strip()):
        raise UserError(f"{where}: 'order' {cell!r} is not a list of numbers such as [3, 1, 2]")
    return [int(x) for x in re.findall(r"\d+", cell)]


def _prediction(data: dict[str, Any], where: str, defaults: dict[str, Any]) -> Prediction:
    data = {
        ("raw_output" if k == "prediction" and "raw_output" not in data else k): v
        for k, v in data.items()
    }
    if "video_id" not in data:
        raise UserError(f"{where}: missing field video_id")
    if "order" not in data and "raw_output" not in data:
        raise UserError(f"{where}: neither 'order' nor 'raw_output' given")
    order, raw = data.get("order"), data.get("raw_output")
    if order is not None and not (
        isinstance(order, list)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in order)
    ):
        raise UserError(f"{where}: field 'order' must be a list of ints or null")
    if raw is not None and not isinstance(raw, str):
        raise UserError(f"{where}: field 'raw_output' must be text or null")
    config = str(data.get("config", defaults["config"]))
    if config and config not in CONFIGS:
        raise UserError(f"{where}: config {config!r} is not a SPLICE config ({', '.join(CONFIGS)})")
    video_id = str(data["video_id"]).strip()  # as spreadsheets leave ids: " abc " is abc
    if not video_id:
        raise UserError(f"{where}: field video_id is empty")
    return Prediction(
        video_id=video_id,
        config=config,
        model=str(data.get("model", defaults["model"])),
        raw_output=raw,
        order=order,
        extra={k: v for k, v in data.items() if k not in FIELDS},
    )


def is_capped(raw_output: str) -> bool:
    """Whether ``cap_raw_output`` cut this text: its middle is gone, so it is no answer to
    parse again (the order was parsed from the whole answer when it was stored)."""
    return _CAP_MARKER.search(raw_output) is not None


def write_predictions(
    path: str | Path,
    predictions: Iterable[Prediction],
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write predictions atomically (a partial file never replaces a good one), after a
    metadata line when ``metadata`` is given."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        if metadata is not None:
            fh.write(metadata_line(metadata) + "\n")
        for p in predictions:
            fh.write(p.to_json() + "\n")
    return path
