"""``download_report.json`` / ``.csv``: every selected video's download outcome.

Written by ``splice download`` into its output folder (the build's ``--videos``), and read
back by ``splice build``, so that a build's card states how many of its selected videos
were unavailable. It never holds the cookies or their file's name, and URLs lose their user
info and every query parameter but the video's own (a mirror's token): `redact.public_url`.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from splice_build.records import DownloadOutcome

REPORT_JSON = "download_report.json"
REPORT_CSV = "download_report.csv"
# "not-tried": the run stopped (no network, Ctrl-C) before it tried the video; a rerun does.
NOT_TRIED = "not-tried"
STATUSES = ("downloaded", "present", "unavailable", "failed", NOT_TRIED)
UNAVAILABLE_CATEGORIES = (
    "removed",
    "private",
    "age-restricted",
    "geo-blocked",
    "copyright",
    "other",
)
# "local": a problem on this machine (disk, permissions), not the video's or the network's
FAILED_CATEGORIES = ("network", "timeout", "incomplete", "throttled", "server", "local")


def counts(outcomes: Sequence[DownloadOutcome]) -> dict[str, Any]:
    by_status = Counter(o.status for o in outcomes)
    return {
        "selected": len(outcomes),
        **{s: by_status.get(s, 0) for s in STATUSES},
        "unavailable_by_category": dict(
            sorted(Counter(o.category for o in outcomes if o.status == "unavailable").items())
        ),
        "failed_by_category": dict(
            sorted(Counter(o.category for o in outcomes if o.status == "failed").items())
        ),
    }


def summary_line(outcomes: Sequence[DownloadOutcome]) -> str:
    c = counts(outcomes)
    available = c["downloaded"] + c["present"]
    share = 100.0 * available / c["selected"] if c["selected"] else 0.0
    why = ", ".join(f"{k} {v}" for k, v in c["unavailable_by_category"].items())
    untried = f", {c[NOT_TRIED]} not tried" if c[NOT_TRIED] else ""
    return (
        f"{c['selected']} selected: {c['downloaded']} downloaded, {c['present']} already "
        f"present, {c['unavailable']} unavailable{f' ({why})' if why else ''}, "
        f"{c['failed']} failed after retries{untried}; available {available}/{c['selected']} "
        f"({share:.1f}%)"
    )


def write_report(
    out_dir: Path,
    outcomes: Iterable[DownloadOutcome],
    settings: dict[str, Any],
    yt_dlp_version: str,
) -> str:
    """Write both files into ``out_dir``; returns the summary line."""
    rows = sorted(outcomes, key=lambda o: o.video_id)
    line = summary_line(rows)
    data = {
        "yt_dlp_version": yt_dlp_version,
        "settings": settings,
        "counts": counts(rows),
        "summary": line,
        "videos": [asdict(o) for o in rows],
    }
    out_dir = Path(out_dir)
    (out_dir / REPORT_JSON).write_text(
        json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8"
    )
    names = [f.name for f in fields(DownloadOutcome)]
    with open(out_dir / REPORT_CSV, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        writer.writerows(asdict(o) for o in rows)
    return line


def load_report(folder: Path) -> dict[str, Any] | None:
    """The download report in ``folder``, or None when there is none."""
    path = Path(folder) / REPORT_JSON
    if not path.is_file():
        return None
    return json.loads(path.read_text("utf-8"))


def missing_among(folder: Path, video_ids: Iterable[str]) -> dict[str, Any] | None:
    """For a build's card: how many of its selected videos the download next to its sources
    could not fetch, by category; None when no download report is there."""
    report = load_report(folder)
    if report is None:
        return None
    wanted = set(video_ids)
    rows = [r for r in report.get("videos", []) if r.get("video_id") in wanted]
    unavailable = Counter(r["category"] for r in rows if r["status"] == "unavailable")
    return {
        "selected": len(wanted),
        "in_report": len(rows),
        "unavailable": sum(unavailable.values()),
        "unavailable_by_category": dict(sorted(unavailable.items())),
        "failed": sum(1 for r in rows if r["status"] == "failed"),
        "not_tried": sum(1 for r in rows if r["status"] == NOT_TRIED),
        "yt_dlp_version": report.get("yt_dlp_version", "unknown"),
    }


__all__ = [
    "FAILED_CATEGORIES",
    "NOT_TRIED",
    "REPORT_CSV",
    "REPORT_JSON",
    "STATUSES",
    "UNAVAILABLE_CATEGORIES",
    "counts",
    "load_report",
    "missing_among",
    "summary_line",
    "write_report",
]
