"""One row's clips judged in whatever process an executor chooses: against the rule the
cutter's workers apply (``splice_build.stages.clipcheck``), an import's manifest, or the
digests of what the build's workers already checked (`VerifiedClips`).

Importing PyAV and the manifest's records only (not ``datasets``), so that a spawned
validation worker (`validate.parts`) starts in a fraction of a second."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import av

from splice_build.output.release_manifest import MANIFEST, ImportedClip
from splice_build.records import ROUNDING
from splice_build.stages.clipcheck import ClipProbe, clip_problems, probe_clip


@dataclass(frozen=True)
class VerifiedClip:
    """One clip as its worker checked it: the bytes (sha256), against the segment and the
    recorded duration that the rule held it to."""

    sha256: str
    segment: tuple[float, float] | None  # (start, end) seconds of its step; None: imported
    duration: float  # its clip_durations entry
    # Frames decoded (an imported clip's, for its manifest entry); not part of its identity.
    frames: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class VerifiedClips:
    """What a build hands its own final validation: video id -> the clips its workers
    decoded and checked, in chronological order, and the rule's tolerances (see
    docs/DESIGN.md, "Validation at scale"). A typed value passed down, never a global."""

    clips: Mapping[str, tuple[VerifiedClip, ...]] = field(default_factory=dict)
    tolerance: float = 0.0  # seconds of coverage the check allowed
    tolerance_frames: float = 0.0

    def covers(self, tolerance: float, tolerance_frames: float) -> bool:
        """Whether the check was at least as strict as the rule validation applies."""
        return self.tolerance <= tolerance and self.tolerance_frames <= tolerance_frames


@dataclass(frozen=True)
class ClipRule:
    """How one run of ``splice validate`` holds clips to ``clipcheck``."""

    tolerance: float  # seconds: the coverage tolerance the card says the build probed with
    tolerance_frames: float  # frame durations a clip may differ from its segment
    decode: bool = True  # decode every clip not proven by digest (False: ``--quick``)


@dataclass(frozen=True)
class OneClip:
    """One clip's bytes and what its row says of it."""

    data: bytes
    segment: tuple[float, float] | None  # None: an imported clip (no segment times)
    recorded: float | None  # its clip_durations entry
    last_end: float  # end of the row's last segment
    imported: ImportedClip | None = None  # the import's manifest record of it


def check_one(
    clip: OneClip, rule: ClipRule, checked: tuple[VerifiedClip, ...] | None = None
) -> tuple[list[str], bool]:
    """What is wrong with one clip, and whether it was decoded: not when it is the very
    bytes its worker decoded and checked, for this segment and duration, nor under
    ``--quick`` (then only the digests are compared).

    A clip that is not one of ``checked`` (its video's checked clips) is a problem by
    itself: the writer embeds the work folder's bytes verbatim, so it can only be damage
    or a swap; it is decoded and held to the rule as well."""
    sha = hashlib.sha256(clip.data).hexdigest()
    found = []
    record = clip.imported
    if checked is not None:
        seen = VerifiedClip(sha, clip.segment, clip.recorded)
        match = next((c for c in checked if c == seen), None)
        if match is not None:
            return (check_recorded(sha, match, record) if record else []), False
        found.append("bytes, segment or duration differ from every clip its worker checked")
    if not rule.decode:
        if record is not None and sha != record.sha256:
            found.append(f"bytes differ from the clip {MANIFEST} records")
        return found, False
    try:
        probe = probe_clip(clip.data, full=True)
    except (av.FFmpegError, ValueError, OSError) as exc:
        return [*found, f"does not decode: {exc}"], True
    found += clip_problems(
        probe,
        segment=clip.segment,
        last_end=clip.last_end,
        recorded=clip.recorded,
        tolerance=rule.tolerance,
        tolerance_frames=rule.tolerance_frames,
    )
    if record is not None:
        found += check_imported(sha, probe, record)
    return found, True


def check_imported(sha256: str, probe: ClipProbe, recorded: ImportedClip) -> list[str]:
    """What is wrong with an imported clip against its manifest entry."""
    return _against_manifest(sha256, probe.frames, probe.duration, recorded)


def check_recorded(sha256: str, checked: VerifiedClip, recorded: ImportedClip) -> list[str]:
    """An imported clip proven by digest against its manifest entry: what its worker's
    decode found must be what the manifest says."""
    frames = checked.frames if checked.frames is not None else recorded.frames
    return _against_manifest(sha256, frames, checked.duration, recorded)


def _against_manifest(
    sha256: str, frames: int, duration: float, recorded: ImportedClip
) -> list[str]:
    out = []
    if sha256 != recorded.sha256:
        out.append(f"bytes differ from the clip {MANIFEST} records")
    if frames != recorded.frames:
        out.append(f"{frames} frames but {MANIFEST} records {recorded.frames}")
    if abs(duration - recorded.duration) > ROUNDING:
        out.append(f"lasts {duration:.3f} s but {MANIFEST} records {recorded.duration:.3f} s")
    return out
