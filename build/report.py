"""The build report: every video of the annotation file, included or skipped with why.

It is written next to the shards (``build_report.json`` and ``build_report.txt``) and holds
no timings, so two builds of the same inputs produce the same report.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .records import Skip

REPORT_JSON = "build_report.json"
REPORT_TXT = "build_report.txt"


@dataclass(frozen=True)
class VideoStatus:
    video_id: str
    status: str  # "included" or "skipped"
    stage: str = ""
    reason: str = ""
    num_clips: int = 0
    note: str = ""  # how an included video's clips were made, when builds differ (imports)


@dataclass
class BuildReport:
    videos: list[VideoStatus] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. curation rows that matched nothing
    counted: str = "annotations"  # what `videos` lists: every video of the annotations
    notes: list[str] = field(default_factory=list)  # e.g. a damaged work entry cut again

    def include(self, video_id: str, num_clips: int, note: str = "") -> None:
        self.videos.append(VideoStatus(video_id, "included", num_clips=num_clips, note=note))

    def skip(self, skip: Skip) -> None:
        self.videos.append(VideoStatus(skip.video_id, "skipped", skip.stage, skip.reason))

    def drop(self, skip: Skip) -> None:
        """Turn an included video into a skipped one (its clips failed validation)."""
        self.videos = [v for v in self.videos if v.video_id != skip.video_id]
        self.skip(skip)

    @property
    def included(self) -> list[VideoStatus]:
        return [v for v in self.videos if v.status == "included"]

    @property
    def skipped(self) -> list[VideoStatus]:
        return [v for v in self.videos if v.status == "skipped"]

    def skips_by_stage(self) -> dict[str, int]:
        """Skipped videos per stage, in the order stages first skipped one (the card's
        provenance and the summary both show it)."""
        return dict(Counter(v.stage for v in self.skipped))

    def summary(self) -> str:
        lines = [
            f"videos in {self.counted}: {len(self.videos)}",
            f"included: {len(self.included)} videos, "
            f"{sum(v.num_clips for v in self.included)} clips",
            f"skipped: {len(self.skipped)}",
        ]
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"note: {n}" for n in sorted(self.notes)]
        for stage, count in sorted(self.skips_by_stage().items()):
            lines.append(f"  {stage}: {count}")
            reasons = Counter(_reason_kind(v.reason) for v in self.skipped if v.stage == stage)
            for reason, n in reasons.most_common(8):
                lines.append(f"    {n:6d}  {reason}")
        return "\n".join(lines)

    def write(self, out_dir: Path) -> None:
        self.videos.sort(key=lambda v: v.video_id)
        data = {
            "settings": self.settings,
            "counts": {
                "videos": len(self.videos),
                "included": len(self.included),
                "skipped": len(self.skipped),
                "clips": sum(v.num_clips for v in self.included),
            },
            "videos": [asdict(v) for v in self.videos],
            "warnings": self.warnings,
            "notes": sorted(self.notes),
        }
        (out_dir / REPORT_JSON).write_text(
            json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8"
        )
        (out_dir / REPORT_TXT).write_text(self.summary() + "\n", "utf-8")


def load_report(out_dir: Path) -> dict:
    """The JSON report of a built folder, as written by `BuildReport.write`."""
    return json.loads((Path(out_dir) / REPORT_JSON).read_text("utf-8"))


def _reason_kind(reason: str) -> str:
    """Group reasons that differ only in the video's own numbers or names."""
    head = reason.split(":")[0]
    return head if len(head) < 80 else head[:77] + "..."
