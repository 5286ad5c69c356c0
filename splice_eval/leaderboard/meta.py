"""An entry's provenance: what its prediction file records (the metadata line each writer
puts first: ``splice run``, ``splice baseline``, VLMEvalKit's dataset class), completed by
the submitter's ``meta.yaml``. ``meta.yaml`` is data: a mapping of known keys only
(refused naming the first other key), each of the type it must be, bounded in size, and it
cannot contradict a value the file records (refused naming every such key and both
values, in one message). Each number has a range (``RANGES``): a value no view can show
(``params_b: 1.0e+22`` breaks the page's slider) is refused here, not found there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from splice_build.errors import UserError
from splice_eval.leaderboard.records import Provenance
from splice_eval.leaderboard.store import read_yaml

META_MAX = 32 * 1024  # bytes of a meta.yaml
TEXT_MAX = 500  # characters of one text value
WEIGHTS = ("open", "closed")
CONTAMINATION = ("yes", "no", "unknown")
CLIPS_AS = ("video", "frames", "images")
KNOWN = tuple(f.name for f in fields(Provenance) if f.name != "paper")
# Each number's range, inclusive: parameters in billions (the largest models are a few
# thousand), the frames' longer side in pixels, a generation setting's value.
RANGES = {"params_b": (1e-3, 1e5), "long_side": (1, 16384), "generation": (-1e9, 1e9)}


def _text(key: str, value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UserError(f"{where}: {key} must be text, got {type(value).__name__}")
    text = str(value)
    if len(text) > TEXT_MAX:
        raise UserError(f"{where}: {key} is longer than {TEXT_MAX} characters")
    return text


def _number(key: str, value: Any, where: str, integer: bool = False) -> float | int:
    low, high = RANGES[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{where}: {key} must be a number, got {value!r:.60}")
    if not math.isfinite(value) or not low <= value <= high:
        raise UserError(f"{where}: {key} must be a number from {low:g} to {high:g}, got {value!r}")
    return int(value) if integer else float(value)


def _choice(key: str, value: Any, where: str, allowed: tuple[str, ...]) -> str:
    text = _text(key, value, where).lower()
    if text not in allowed:
        raise UserError(f"{where}: {key} must be one of {', '.join(allowed)}, got {text!r}")
    return text


def _generation(key: str, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or len(value) > 20:
        raise UserError(f"{where}: generation must be a mapping of up to 20 settings")
    return {
        _text("generation key", k, where): _scalar(f"generation.{k}", v, where)
        for k, v in value.items()
    }


# Each known key's check (the others are short text).
_CHECKS = {
    "params_b": _number,
    "long_side": lambda k, v, w: _number(k, v, w, integer=True),
    "weights": lambda k, v, w: _choice(k, v, w, WEIGHTS),
    "contamination": lambda k, v, w: _choice(k, v, w, CONTAMINATION),
    "clips_as": lambda k, v, w: _choice(k, v, w, CLIPS_AS),
    "generation": _generation,
}


def checked(data: Any, where: str) -> dict[str, Any]:
    """A meta mapping held to the known keys and their types."""
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: must be a mapping of provenance keys, got {type(data).__name__}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in KNOWN:
            raise UserError(f"{where}: unknown key {str(key)[:60]!r} (known: {', '.join(KNOWN)})")
        if value is not None:
            out[key] = _CHECKS.get(key, _text)(key, value, where)
    return out


def shown_values(provenance: Provenance) -> dict[str, Any]:
    """The values an entry's provenance sets, as ``checked`` takes them."""
    return {
        f.name: getattr(provenance, f.name)
        for f in fields(Provenance)
        if f.name != "paper" and getattr(provenance, f.name) not in (None, "", {})
    }


def _scalar(key: str, value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        low, high = RANGES["generation"]
        if not math.isfinite(value) or not low <= value <= high:
            raise UserError(
                f"{where}: {key} must be a number from {low:g} to {high:g}, got {value!r}"
            )
        return value
    return _text(key, value, where)


def read_meta(path: Path) -> dict[str, Any]:
    """A submitted ``meta.yaml`` as checked values (bounded in size and nesting)."""
    data = read_yaml(path, "meta file", META_MAX)
    return checked({} if data is None else data, str(path))


def _frames_text(frames: Any) -> str:
    """The metadata's ``frames`` (``FrameSpec.kwargs()``: {"num_frames": 16} or {"fps": 1,
    ...}) as one short text: "16" or "1fps"."""
    if isinstance(frames, Mapping):
        if frames.get("num_frames"):
            return str(frames["num_frames"])
        if frames.get("fps"):
            return f"{frames['fps']:g}fps"
        return ", ".join(f"{k}={v}" for k, v in frames.items())
    return "" if frames is None else str(frames)


def from_file(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a prediction file's metadata line records, as provenance values."""
    md = dict(metadata or {})
    producer = str(md.get("producer") or "")
    toolkit, _, version = producer.partition(" (")
    out: dict[str, Any] = {}
    if md.get("model"):
        out["model"] = str(md["model"])
    if toolkit:
        out["toolkit"] = toolkit
    version = version.rstrip(")") or str(md.get("splice_version") or "")
    if version:
        out["toolkit_version"] = version
    for key in ("revision", "backend", "prompt_version", "date"):
        if md.get(key):
            out[key] = str(md[key])
    if md.get("created") and "date" not in out:
        out["date"] = str(md["created"])[:10]
    return out | _settings(md)


def _settings(md: Mapping[str, Any]) -> dict[str, Any]:
    """The frame and generation settings a metadata line records."""
    out: dict[str, Any] = {}
    if md.get("frames") is not None:
        out["frames"] = _frames_text(md["frames"])
        if isinstance(md["frames"], Mapping) and md["frames"].get("long_side"):
            out["long_side"] = int(md["frames"]["long_side"])
    if md.get("clips_as"):
        out["clips_as"] = str(md["clips_as"])
    if isinstance(md.get("sampling"), Mapping):
        out["generation"] = {str(k): v for k, v in md["sampling"].items()}
    return out


def provenance(
    metadata: Mapping[str, Any] | None,
    submitted: Mapping[str, Any],
    where: str,
    model: str = "",
) -> Provenance:
    """The file's values (``model``: the model its rows name, which the metadata line
    names too), completed by the submitted ones; submitted values that differ from the
    file's are refused, every one in one message (the file records what was run)."""
    recorded = from_file(metadata)
    if model and "model" not in recorded:
        recorded["model"] = model
    found = [
        f"{key} {value!r} contradicts the prediction file's {recorded[key]!r}"
        for key, value in submitted.items()
        if key in recorded and recorded[key] != value and not _same(recorded[key], value)
    ]
    if found:
        keys = ", ".join(
            k for k in submitted if k in recorded and not _same(recorded[k], submitted[k])
        )
        raise UserError(
            f"{where}: {'; '.join(found)} (the file records what was run: remove {keys} "
            "from the meta file)"
        )
    return replace(Provenance(), **{**submitted, **recorded})


def _same(recorded: Any, submitted: Any) -> bool:
    """Equal up to how YAML types a value (``frames: 16`` and the file's "16")."""
    return str(recorded).strip().lower() == str(submitted).strip().lower()
