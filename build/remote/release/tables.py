"""What an import's card says beyond a build's: where the clips came from, and the paper's
Tables 1 and 6 beside this build's figures.

The paper's figures are copied here (never read at run time): the release is the only
public trace of its 3,381 curated videos, and the card shows how far an import is from
them."""

from __future__ import annotations

from splice_build.output import card, stats
from splice_build.output.release_manifest import MANIFEST
from splice_build.output.writing.write import WriteResult
from splice_build.remote.release.fetch import HUB_REPO

PAPER_VIDEOS, PAPER_CLIPS = 3381, 11423  # Table 1's caption
# Table 1: number of clips -> (videos, average duration in seconds)
PAPER_TABLE1: dict[int, tuple[int, float]] = {
    2: (1020, 46.83),
    3: (1026, 53.31),
    4: (734, 62.41),
    5: (333, 72.67),
    6: (172, 67.86),
    7: (96, 73.50),
}
# Table 6: segments -> (videos, clips, mean s, std dev s, videos per duration bin), the
# bins being (2, 35], (35, 68], (68, 100], (100, 133], (133, 166], (166, 198], (198, 330].
PAPER_TABLE6: dict[int, tuple[int, int, float, float, tuple[int, ...]]] = {
    2: (1020, 2040, 46.84, 40.75, (531, 245, 128, 65, 35, 12, 4)),
    3: (1026, 3078, 53.32, 42.68, (434, 309, 142, 79, 36, 19, 7)),
    4: (734, 2936, 62.41, 40.76, (209, 260, 146, 70, 32, 13, 4)),
    5: (333, 1665, 72.67, 43.20, (62, 123, 69, 46, 21, 10, 2)),
    6: (172, 1032, 67.86, 37.49, (38, 56, 45, 22, 9, 2, 0)),
    7: (96, 672, 73.50, 38.28, (19, 26, 30, 14, 5, 2, 0)),
}


def release_intro(repo_id: str) -> str:
    return (
        "SPLICE (Ballout, Wilfred et al., 2025) probes event-based visual reasoning: each row "
        "is one COIN instructional video cut into one clip per annotated step (2 to 7), "
        'shuffled and labelled "Video 1" .. "Video n"; a model must put the clips back in '
        f"chronological order. The clips of this folder are the authors' own, from their "
        f"release `{repo_id}` (the paper's curated videos), imported by the SPLICE code: "
        "the release names each clip by its chronological position, so "
        "they were renamed by their shuffled label, stripped of audio and metadata, and "
        "given COIN's step labels as captions."
    )


def _cell(ours: float | int | None, paper: float | int | None, fmt: str = "{}") -> str:
    mine = "–" if ours is None else fmt.format(ours)
    return f"{mine} ({'–' if paper is None else fmt.format(paper)})"


def comparison_tables(build: stats.BuildStats) -> str:
    """Tables 1 and 6 of this build with the paper's figure in brackets after each."""
    rows = {r.num_clips: r for r in build.rows}
    t1 = []
    for n in sorted(set(rows) | set(PAPER_TABLE1)):
        r, p = rows.get(n), PAPER_TABLE1.get(n)
        t1.append(
            (
                str(n),
                _cell(r.videos if r else 0, p[0] if p else None),
                _cell(r.mean_duration if r else None, p[1] if p else None, "{:.2f}"),
            )
        )
    total = f"{build.clips} ({PAPER_CLIPS}) clips"
    t1.append(("**all**", _cell(build.videos, PAPER_VIDEOS), total))
    bins = stats.BIN_LABELS[1:-1]  # the paper's seven bins
    t6 = []
    for n in sorted(set(rows) | set(PAPER_TABLE6)):
        r, p = rows.get(n), PAPER_TABLE6.get(n)
        ours_bins = r.bins[1:-1] if r else (0,) * len(bins)
        t6.append(
            (
                str(n),
                _cell(r.videos if r else 0, p[0] if p else None),
                _cell(r.clips if r else 0, p[1] if p else None),
                _cell(r.mean_duration if r else None, p[2] if p else None, "{:.2f}"),
                _cell(r.std_duration if r else None, p[3] if p else None, "{:.2f}"),
                *(_cell(o, p[4][i] if p else None) for i, o in enumerate(ours_bins)),
            )
        )
    outside = sum(r.bins[0] + r.bins[-1] for r in build.rows)
    return "\n\n".join(
        [
            card.markdown_table(("Clips", "Videos (paper)", "Average Duration (s) (paper)"), t1),
            card.markdown_table(
                (
                    "Segments",
                    "Videos (paper)",
                    "Clips (paper)",
                    "Mean Time (s) (paper)",
                    "Std Dev (paper)",
                    *bins,
                ),
                t6,
            ),
            f"Videos outside the paper's duration bins in this build: {outside}.",
        ]
    )


def _versus(videos: int, clips: int) -> str:
    if (videos, clips) == (PAPER_VIDEOS, PAPER_CLIPS):
        return "the paper's counts"
    return f"{videos - PAPER_VIDEOS:+d} videos and {clips - PAPER_CLIPS:+d} clips against the paper"


def release_sections(written: WriteResult, origin: card.ReleaseSource) -> list[tuple[str, str]]:
    """The card's sections on the release: its source and licence, then the paper's
    tables beside this build's."""
    build = stats.compute_stats(written.videos)
    if origin.local:
        where = (
            f"Clips from the local folder `{origin.repo_id}` in the layout of the release "
            f"`{HUB_REPO}` (revision: {origin.revision})"
        )
    else:
        url = f"https://huggingface.co/datasets/{origin.repo_id}"
        where = f"Clips from [`{origin.repo_id}`]({url}) at revision `{origin.revision}`"
    source = (
        f"{where}, released "
        f"under **{origin.license}** (Creative Commons Attribution-NonCommercial 4.0): "
        f"{origin.files} files ({origin.bytes} bytes) of the release's "
        f"{origin.videos_in_release} videos, each listed with its sha256 in `{MANIFEST}` "
        f"(sha256 `{origin.manifest_sha256}`). {origin.remuxed} clips were remuxed without "
        f"re-encoding (the release's pictures kept; audio and container metadata dropped, "
        f"timestamps from 0) and {origin.re_encoded} re-encoded with the build's settings "
        "where remuxing could not give a clean clip; `build_report.json` lists every video "
        "of the release, imported (with how) or skipped with its reason. A video was "
        "imported only when its parts are exactly 1..n with n its COIN step count, part k "
        "being step k: its captions are COIN's step labels and `answer.segments` COIN's "
        "segment times, not measured on the release's clips (whose cut times were not "
        "published). The SPLICE code's validator checks each clip against the frames, "
        f"duration and sha256 recorded in `{MANIFEST}`."
    )
    held = (origin.videos_in_release, origin.clips_in_release)
    compare = (
        f"The release holds **{held[0]} videos and {held[1]} clips** "
        f"({_versus(*held)}); this build imported **{build.videos} videos and "
        f"{build.clips} clips** ({_versus(build.videos, build.clips)}). The paper's curated "
        f"set (Table 1): {PAPER_VIDEOS} videos, {PAPER_CLIPS} clips. Each cell below is this "
        "build's figure with the paper's in brackets (Table 1, then Table 6).\n\n"
        + comparison_tables(build)
    )
    return [("Source: the SPLICE release", source), ("Against the paper", compare)]
