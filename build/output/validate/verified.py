"""What a build hands its own final validation: the clips its workers already decoded and
held to the clip rule, by digest, so that validation proves the shards hold exactly those
bytes instead of decoding them again (see docs/DESIGN.md, "Validation at scale").

Plain values only, no heavy import: the pipeline builds it from the work folder's records
(`running.workdir.CheckedCut`), and a validation task pickles it to a worker."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class VerifiedClip:
    """One clip as its worker checked it: the bytes (sha256), against the segment and the
    recorded duration that the rule held it to."""

    sha256: str
    segment: tuple[float, float]  # (start, end) seconds of its step
    duration: float  # its clip_durations entry


@dataclass(frozen=True)
class VerifiedClips:
    """Video id -> its checked clips in chronological order, and the rule's tolerances."""

    clips: Mapping[str, tuple[VerifiedClip, ...]] = field(default_factory=dict)
    tolerance: float = 0.0  # seconds of coverage the check allowed
    tolerance_frames: float = 0.0

    def covers(self, tolerance: float, tolerance_frames: float) -> bool:
        """Whether the check was at least as strict as the rule validation applies."""
        return self.tolerance <= tolerance and self.tolerance_frames <= tolerance_frames
