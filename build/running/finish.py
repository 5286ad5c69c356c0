"""The tail every build shares (``splice build`` and ``splice import-release``): shuffled
videos -> shards -> card -> report in a staging folder, validated, then swapped in for the
output, each phase said on stderr so that none runs silent.

A video whose clips fail validation costs that video, not the build: it is dropped with the
problem in the report and the rest is written and validated again. A disk that refuses a
write is one line naming ``--out``; the previous output is untouched until the swap.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

import splice_dataset as schema
from splice_build.errors import UserError, disk_error
from splice_build.output import validate
from splice_build.output.clip_verdict import VerifiedClips
from splice_build.output.validate.progress import Runner
from splice_build.output.writing import write
from splice_build.output.writing.shards import WriteResult
from splice_build.plural import counted
from splice_build.records import ShuffledVideo, Skip
from splice_build.running import ownership
from splice_build.running.report import BuildReport


@dataclass(frozen=True)
class FinishedBuild:
    """What `finish_build` wrote last: the caller's own files (an import's manifest) are
    about exactly these videos, since a video whose clips failed validation was dropped."""

    problems: list[validate.Problem]  # empty: ``out`` was replaced
    written: WriteResult  # the last pass (``out_dir`` is the removed staging folder)


def finish_build(
    videos: Callable[[], Iterable[ShuffledVideo]],
    out: Path,
    report: BuildReport,
    render: Callable[[WriteResult, list[tuple[str, str]]], Mapping[str, str]],
    *,
    format: str = "parquet",
    max_shard_bytes: int = write.MAX_SHARD_BYTES,
    validate_output: bool = True,
    nothing: Callable[[str], str],
    verified: VerifiedClips | None = None,
    progress: bool = True,
    run: Runner | None = None,
    tolerance: float | None = None,
) -> FinishedBuild:
    """The tail every build shares (``splice build``, ``splice import-release``; call it
    holding the output's lock): shuffled videos -> shards -> card -> report in a staging
    folder, validated, then swapped in for ``out``.

    ``videos`` is called once per pass and output format (each streams the clips again);
    ``render(written, extra_sections)`` gives the files beside the shards (README.md and
    any other, e.g. an import's manifest) from what was written and the report as it is;
    ``nothing(what)`` is the message of the `UserError` raised when no video is left.
    What the last pass wrote comes back with the problems: a caller's files made in
    ``render`` (an import's manifest) are about those videos. ``verified`` is what the
    caller's workers checked of each clip: validation proves those by digest and decodes
    the rest, its parts on ``run`` (the caller's executor; default: in this process). Each
    phase says on stderr what it is doing (``progress``: the bars too). ``tolerance``: the
    coverage tolerance the build cut with, which its validation holds the clips to (its
    card, written here, is not what proves it)."""
    staging = ownership.new_staging(out)
    dropped: set[str] = set()
    say = status if progress else _quiet

    def kept() -> Iterator[ShuffledVideo]:
        return (v for v in videos() if v.entry.video_id not in dropped)

    def checked() -> list[validate.Problem]:
        if not validate_output:
            return []
        say(f"validating {counted(len(report.included), 'video')}")
        found = validate.validate_report(
            staging, verified=verified, run=run, progress=progress, tolerance=tolerance
        )
        say(
            f"validated {counted(found.clips, 'clip')} "
            f"({found.decoded} decoded, the rest by digest)"
        )
        return found.problems

    try:
        written = _write_output(
            staging, kept, report, render, format, max_shard_bytes, say, progress
        )
        problems = checked()
        failing = _clip_problems_by_video(problems, {v.video_id for v in report.included})
        if failing:
            # A clip the digest proof rejects: bytes other than the ones its worker
            # checked (damage or a swap between the check and the shards; an import's
            # record that does not match), or a clip no check vouched for that fails the
            # rule. It costs its video, not the build: the video is dropped with the
            # problem in the report, and the rest is written and validated again
            # (tests: test_shard_clips_other_than_the_checked_ones_fail_the_build,
            # test_video_whose_clips_fail_validation_is_dropped_and_said, and the
            # import's test_a_digest_its_worker_did_not_check_is_not_trusted).
            for video_id, what in sorted(failing.items()):
                report.drop(Skip(video_id, "validate", what))
                dropped.add(video_id)
            if not report.included:
                raise UserError(nothing("valid"))
            written = _write_output(
                staging, kept, report, render, format, max_shard_bytes, say, progress
            )
            problems = checked()
        if not problems:
            say(f"swapping the new build in for {out.name}")
            ownership.replace_output(staging, out)
    except OSError as exc:
        kept = "nothing was changed, --out left as it was" if out.exists() else "nothing written"
        raise disk_error(f"--out {out}", exc, kept) from None
    finally:
        if staging.exists():  # unswapped: a failed build, which must not replace the old one
            shutil.rmtree(staging)
    return FinishedBuild(problems, written)


def _write_output(
    staging: Path,
    videos: Callable[[], Iterable[ShuffledVideo]],
    report: BuildReport,
    render: Callable[[WriteResult, list[tuple[str, str]]], Mapping[str, str]],
    format: str,
    max_shard_bytes: int,
    say: Callable[[str], None],
    progress: bool,
) -> WriteResult:
    """Shards, the rendered files (card...) and the report, into the (emptied) staging
    folder, saying what it is at, with a bar of the videos written (at 3,200 videos the
    shards took 8 s)."""

    def shown(desc: str) -> Iterable[ShuffledVideo]:
        total = len(report.included)
        return tqdm(videos(), total=total, unit="video", desc=desc, disable=not progress)

    for child in staging.iterdir():  # the build made the staging folder and all it holds
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    say(f"writing the shards of {counted(len(report.included), 'video')}")
    written = write.write_dataset(shown("shards"), staging, max_shard_bytes=max_shard_bytes)
    sections = []
    if format == "both":
        from splice_build.output.writing.write_webdataset import card_section, write_webdataset

        say("writing the WebDataset shards")
        tars = write_webdataset(shown("webdataset"), staging)
        sections.append(card_section(len(tars)))
    shards = sum(len(s) for s in written.config_shards.values())
    say(f"writing the card of {counted(len(written.videos), 'video')}, {counted(shards, 'shard')}")
    for name, text in render(written, sections).items():
        (staging / name).write_text(text, "utf-8")
    report.write(staging)
    return written


def status(what: str) -> None:
    """One line on stderr for a phase that has no bar, so no phase runs silent."""
    print(f"splice: {what}", file=sys.stderr, flush=True)


def _quiet(what: str) -> None:
    """``--no-progress``: no bars and no status lines."""


def _clip_problems_by_video(problems: list[validate.Problem], included: set[str]) -> dict[str, str]:
    """The first problem of each included video whose clips fail validation."""
    found: dict[str, str] = {}
    for problem in problems:
        column = problem.column or ""
        if problem.video_id in included and column.startswith(f"{schema.CLIPS}["):
            found.setdefault(problem.video_id, f"{column} {problem.what}")
    return found
