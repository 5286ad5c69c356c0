"""The build report: every video of the annotation file, included or skipped with why.

It is written next to the shards (``build_report.json`` and ``build_report.txt``) and holds
no timings and no local path, so two builds of the same inputs produce the same report on
any machine, and publishing it reveals nothing of the builder's disk: every text that goes
out passes `portable` (the build's folders named by role, any other absolute path cut to
its last part), whatever raised it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from splice_build.plural import counted
from splice_build.records import Skip

REPORT_JSON = "build_report.json"
REPORT_TXT = "build_report.txt"
# An absolute path: a "/" not inside a word, a URL or a relative path, then folder names.
_ABSOLUTE = re.compile(r"(?<![\w.:/~>-])/(?:[^\s'\"/]+/)+([^\s'\"/]*)")


def portable(text: str, roots: Mapping[str, Path]) -> str:
    """``text`` with each folder of ``roots`` (label -> folder, e.g. ``"<videos>"``) and
    what lies inside it named by its label, and any other absolute path by its last part
    (``<local>/name``). The longest spelling goes first, so a folder inside another one is
    named by its own label."""
    spellings = {}
    for label, folder in roots.items():
        for spelling in (os.path.abspath(folder), os.path.realpath(folder)):
            spellings[spelling.rstrip("/") or "/"] = label
    for spelling in sorted(spellings, key=len, reverse=True):
        label = spellings[spelling]
        text = re.sub(re.escape(spelling) + r"(?![\w.-])", lambda _m, lab=label: lab, text)
    return _ABSOLUTE.sub(lambda m: f"<local>/{m[1]}", text)


@dataclass(frozen=True)
class VideoStatus:
    video_id: str
    status: str  # "included" or "skipped"
    stage: str = ""
    reason: str = ""
    num_clips: int = 0
    note: str = ""  # how an included video's clips were made, when builds differ (imports)


@dataclass(frozen=True)
class ReportCounts:
    """The report's totals as they stand. Kept as videos are added (the cut loop shows
    them after every video, so a recount would make a build quadratic in the annotation
    file's size)."""

    videos: int = 0
    included: int = 0
    skipped: int = 0
    clips: int = 0  # of the included videos
    by_stage: dict[str, int] = field(default_factory=dict)  # skipped, in first-seen order


@dataclass
class BuildReport:
    videos: list[VideoStatus] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. curation rows that matched nothing
    counted: str = "annotations"  # what `videos` lists: every video of the annotations
    notes: list[str] = field(default_factory=list)  # e.g. a damaged work entry cut again
    # The build's folders (label -> path), named by label in everything written out.
    local_roots: dict[str, Path] = field(default_factory=dict)
    # Running totals of `videos` (see `ReportCounts`); `include`/`skip`/`drop` keep them.
    _tally: Counter = field(default_factory=Counter, init=False, repr=False)
    _by_stage: Counter = field(default_factory=Counter, init=False, repr=False)

    def __post_init__(self) -> None:
        for video in self.videos:
            self._count(video, 1)

    def _count(self, video: VideoStatus, sign: int) -> None:
        self._tally[video.status] += sign
        if video.status == "included":
            self._tally["clips"] += sign * video.num_clips
        else:
            self._by_stage[video.stage] += sign
            if not self._by_stage[video.stage]:
                del self._by_stage[video.stage]

    def _add(self, video: VideoStatus) -> None:
        self.videos.append(video)
        self._count(video, 1)

    def include(self, video_id: str, num_clips: int, note: str = "") -> None:
        self._add(VideoStatus(video_id, "included", num_clips=num_clips, note=note))

    def skip(self, skip: Skip) -> None:
        self._add(VideoStatus(skip.video_id, "skipped", skip.stage, skip.reason))

    def drop(self, skip: Skip) -> None:
        """Turn an included video into a skipped one (its clips failed validation)."""
        for video in self.videos:
            if video.video_id == skip.video_id:
                self._count(video, -1)
        self.videos = [v for v in self.videos if v.video_id != skip.video_id]
        self.skip(skip)

    @property
    def counts(self) -> ReportCounts:
        return ReportCounts(
            videos=len(self.videos),
            included=self._tally["included"],
            skipped=self._tally["skipped"],
            clips=self._tally["clips"],
            by_stage=dict(self._by_stage),
        )

    def portable(self, text: str) -> str:
        """``text`` as it may be published (see `portable`)."""
        return portable(text, self.local_roots)

    @property
    def included(self) -> list[VideoStatus]:
        return [v for v in self.videos if v.status == "included"]

    @property
    def skipped(self) -> list[VideoStatus]:
        return [v for v in self.videos if v.status == "skipped"]

    def skips_by_stage(self) -> dict[str, int]:
        """Skipped videos per stage, in the order stages first skipped one (the card's
        provenance and the summary both show it)."""
        return dict(self._by_stage)

    def summary(self) -> str:
        counts = self.counts
        lines = [
            f"videos in {self.counted}: {counts.videos}",
            f"included: {counted(counts.included, 'video')}, {counted(counts.clips, 'clip')}",
            f"skipped: {counts.skipped}",
        ]
        lines += [f"warning: {self.portable(w)}" for w in self.warnings]
        lines += [f"note: {self.portable(n)}" for n in sorted(self.notes)]
        reasons: dict[str, Counter] = {stage: Counter() for stage in counts.by_stage}
        for v in self.skipped:
            reasons[v.stage][_reason_kind(self.portable(v.reason))] += 1
        for stage, count in sorted(counts.by_stage.items()):
            lines.append(f"  {stage}: {count}")
            for reason, n in reasons[stage].most_common(8):
                lines.append(f"    {n:6d}  {reason}")
        return "\n".join(lines)

    def write(self, out_dir: Path) -> None:
        self.videos.sort(key=lambda v: v.video_id)
        counts = self.counts
        data = {
            "settings": self.settings,
            "counts": {
                "videos": counts.videos,
                "included": counts.included,
                "skipped": counts.skipped,
                "clips": counts.clips,
            },
            "videos": [asdict(v) | {"reason": self.portable(v.reason)} for v in self.videos],
            "warnings": [self.portable(w) for w in self.warnings],
            "notes": sorted(self.portable(n) for n in self.notes),
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
