"""What ``splice validate`` reports: each problem with where it is, and the folder's totals."""

from __future__ import annotations

from dataclasses import dataclass, field

from splice_build.plural import counted


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a built folder, and where."""

    file: str  # path relative to the build folder
    what: str
    row: int | None = None  # row index within the file
    video_id: str | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.video_id is not None:
            where.append(f"video {self.video_id}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.what}"


@dataclass
class ValidationReport:
    problems: list[Problem] = field(default_factory=list)
    videos: int = 0
    clips: int = 0
    decoded: int = 0  # clips decoded (the others proven by the digest their worker checked)
    shards: dict[str, int] = field(default_factory=dict)  # config -> shard count
    # every file the checks read (paths in the build, e.g. "video/test-00000-of-00001.parquet"):
    # with no problem, what `splice publish` may upload and nothing else
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        counts = ", ".join(f"{n} {config}" for config, n in self.shards.items())
        clips = (
            "every clip decodes"
            if self.decoded == self.clips
            else f"{self.decoded} of the clips decoded, the others' digests checked"
        )
        return (
            f"OK: {counted(self.videos, 'video')}, {counted(self.clips, 'clip')}; "
            f"shards: {counts}; {clips}, "
            "answers are permutations, no order leak found, the card matches"
        )
