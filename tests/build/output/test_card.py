"""Stage 7: build statistics, the dataset card, and `load_dataset` on a written folder."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from datasets import List, Video
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard

from splice_build.output.card import (
    BUILT_WITH,
    CODE_REPOSITORY,
    STAND_IN_NOTICE,
    TABLE1_HEADER,
    Provenance,
    markdown_table,
    render_card,
    table1_rows,
    write_card,
)
from splice_build.output.stats import BIN_LABELS, VideoStats, compute_stats, duration_bin
from splice_build.output.writing.write import write_dataset
from splice_dataset import (
    CONFIGS,
    DEFAULT_CONFIG,
    TEXT_QUESTION_CONFIGS,
    WRITTEN_CONFIGS,
    clip_file_name,
    columns,
    features,
    shard_dir,
)

SHA = "0123456789abcdef" * 4
# The paper's four metrics (Appendix A.1), as the metric names them in its result.
PAPER_METRICS = ("binary_accuracy", "hamming_accuracy", "lcs_ratio", "edit_distance")


def _provenance(stand_in: bool = False) -> Provenance:
    return Provenance(
        annotations_file="COIN.json",
        annotations_sha256=SHA,
        seed=7,
        cut_settings={"short_side": 448, "fps": None},
        videos_in_annotations=9,
        videos_included=6,
        videos_skipped=3,
        skipped_by_stage={"select": 2, "probe": 1},
        stand_in=stand_in,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory, tiny_videos) -> Path:
    out = tmp_path_factory.mktemp("card") / "splice"
    written = write_dataset(tiny_videos, out, rows_per_row_group=2)
    write_card(out, written, _provenance(stand_in=True))
    return out


# --- statistics ----------------------------------------------------------------------


def _v(vid: str, n: int, duration: float, domain: str = "Dish", task: str = "T") -> VideoStats:
    return VideoStats(vid, task, domain, 1, "testing", n, duration)


def test_duration_bins_are_left_open_right_closed_with_overflow():
    assert BIN_LABELS[0] == "<= 2" and BIN_LABELS[-1] == "> 330"
    assert BIN_LABELS[1:-1] == (
        "(2, 35]",
        "(35, 68]",
        "(68, 100]",
        "(100, 133]",
        "(133, 166]",
        "(166, 198]",
        "(198, 330]",
    )
    cases = {0.5: 0, 2.0: 0, 2.01: 1, 35.0: 1, 35.001: 2, 100.0: 3, 198.0: 6, 330.0: 7, 331: 8}
    for duration, index in cases.items():
        assert duration_bin(duration) == index, duration


def test_table6_statistics():
    videos = [
        _v("a", 2, 10.0, "Dish", "T1"),
        _v("b", 2, 40.0, "Dish", "T2"),
        _v("c", 2, 400.0, "Vehicle", "T3"),
        _v("d", 3, 1.0, "Vehicle", "T3"),
    ]
    stats = compute_stats(videos)
    assert [r.num_clips for r in stats.rows] == [2, 3, 4, 5, 6, 7]
    two, three, four = stats.rows[:3]
    assert (two.videos, two.clips) == (3, 6)
    assert two.mean_duration == pytest.approx(150.0)
    assert two.std_duration == pytest.approx(statistics.stdev([10.0, 40.0, 400.0]))  # sample
    assert two.bins == (0, 1, 1, 0, 0, 0, 0, 0, 1)
    assert three.std_duration is None and three.bins[0] == 1  # one video; <= 2 s
    assert (four.videos, four.mean_duration, four.std_duration) == (0, None, None)
    assert sum(stats.bin_totals) == stats.videos == 4
    assert stats.clips == 9 and stats.tasks == 3
    assert [(d.domain, d.videos, d.clips, d.tasks) for d in stats.domains] == [
        ("Dish", 2, 4, 2),
        ("Vehicle", 2, 5, 1),
    ]
    assert stats.subsets == (("testing", 4),)
    assert table1_rows(stats)[:3] == [("2", "3", "150.00"), ("3", "1", "1.00"), ("4", "0", "–")]


def test_statistics_of_the_real_annotations(coin_json_path):
    """Every 2..7-step video of the real file lands in exactly one row and one bin."""
    from splice_build.stages.ingest import load_annotations

    entries = [e for e in load_annotations(coin_json_path).entries if 2 <= e.num_steps <= 7]
    videos = [
        VideoStats(
            e.video_id,
            e.task,
            e.domain,
            e.recipe_type,
            e.subset,
            e.num_steps,
            sum(s.end - s.start for s in e.steps),
        )
        for e in entries
    ]
    stats = compute_stats(videos)
    assert stats.videos == len(entries) > 5000
    assert [r.num_clips for r in stats.rows] == [2, 3, 4, 5, 6, 7]
    assert stats.clips == sum(e.num_steps for e in entries)
    assert sum(stats.bin_totals) == stats.videos
    assert all(sum(r.bins) == r.videos for r in stats.rows)
    assert len(stats.domains) == 12
    assert sum(d.videos for d in stats.domains) == stats.videos
    # more steps, longer videos on average (as in the paper's Table 1, at least from 2 to 5)
    means = [r.mean_duration for r in stats.rows]
    assert means[0] < means[1] < means[2] < means[3]


# --- the card --------------------------------------------------------------------------


def test_card_yaml_parses_and_describes_the_configs(built):
    card = DatasetCard.load(built / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-nc-4.0"
    assert "video-text-to-text" in data["task_categories"]
    assert "stand-in-videos" in data["tags"]
    assert data["pretty_name"] == "SPLICE"
    configs = {c["config_name"]: c for c in data["configs"]}
    assert set(configs) == set(WRITTEN_CONFIGS)
    assert configs["video_text"]["default"] is True
    for config in WRITTEN_CONFIGS:  # each config its own folder; no `columns:` projection
        want = [{"split": "test", "path": f"{shard_dir(config)}/test-*.parquet"}]
        assert configs[config]["data_files"] == want
        assert "columns" not in configs[config]
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    for config in CONFIGS:
        assert infos[config].features == features(config)
        assert infos[config].splits["test"].num_examples == 6
    for config in TEXT_QUESTION_CONFIGS:  # one row per question: what the shards hold
        held = sum(pq.ParquetFile(f).metadata.num_rows for f in (built / config).glob("*.parquet"))
        assert infos[config].features == features(config)
        assert infos[config].splits["test"].num_examples == held
    assert infos["text_choice"].splits["test"].num_examples == 6  # one question per video
    assert infos["text_pairwise"].splits["test"].num_examples > 6
    assert infos["video"].splits["test"].num_bytes < infos["video_text"].splits["test"].num_bytes
    assert infos["text"].download_size < infos["video"].download_size
    assert infos["video"].download_size <= infos["video_text"].download_size
    for config in WRITTEN_CONFIGS:
        files = (built / shard_dir(config)).glob("*.parquet")
        assert infos[config].download_size == sum(f.stat().st_size for f in files)
    assert datasets.get_dataset_default_config_name(str(built)) == DEFAULT_CONFIG
    assert sorted(datasets.get_dataset_config_names(str(built))) == sorted(WRITTEN_CONFIGS)


def test_card_body(built, tiny_videos):
    text = (built / "README.md").read_text()
    assert STAND_IN_NOTICE.strip() in text
    assert 'load_dataset("path/to/splice", "text"' in text
    # the Hub card is usable without this repository's code: load, decode and score
    assert 'load_dataset("ORG/splice", "video_text"' in text
    assert 'evaluate.load("ORG/splice_metric")' in text
    assert 'av.open(io.BytesIO(clip["bytes"]))' in text
    assert "import splice" not in text and "from splice" not in text
    assert "splice_dataset" not in text and "splice_eval" not in text
    for section in ("Dataset Creation", "Personal and Sensitive Information", "Citation"):
        assert f"\n## {section}\n" in text, section
    assert "\n## Considerations for Using the Data\n" in text
    assert SHA in text and "Seed:** 7" in text
    assert "probe: 1, select: 2" in text
    assert "CC BY-NC 4.0" in text and "non-commercial research only" in text
    assert "may not\ndistribute or broadcast the dataset" in text
    for key in ("ballout2025splice", "tang2019coin", "tang2020comprehensive"):
        assert key in text
    stats = compute_stats(
        VideoStats(v.entry.video_id, v.entry.task, v.entry.domain, 1, "t", len(v.clips),
                   sum(c.duration for c in v.clips))
        for v in tiny_videos
    )  # fmt: skip
    assert markdown_table(TABLE1_HEADER, table1_rows(stats)) in text
    assert "| Dish | 3 | 3 | 12 |" in text and "| Vehicle | 3 | 3 | 15 |" in text
    # what a user downloads per config: each config's folder and size, in the table and note
    note = re.search(r"In this build: (.*)\.", text)
    assert note, "no per-config download sizes"
    for config in CONFIGS:
        size = sum(f.stat().st_size for f in (built / shard_dir(config)).glob("*.parquet"))
        human = f"{size / 1000:.2f} kB"
        assert f"`{config}` {human}" in note.group(1)
        assert re.search(rf"^\| `{config}`.*\| `{shard_dir(config)}/`, {human} \|$", text, re.M)
    assert "keeps the clips once" in text


def _hub_cards(built: Path, tiny_videos) -> dict[str, str]:
    """The card bodies the build writes for the Hub: the demo's (stand-in), a build with
    WebDataset shards, and an imported release's (each without its YAML)."""
    from dataclasses import replace

    from splice_build.output.card import ReleaseSource
    from splice_build.output.writing.write_webdataset import card_section
    from splice_build.remote.release.tables import release_intro, release_sections

    written = write_dataset(tiny_videos, built.parent / "again")
    source = ReleaseSource("org/release", "abc123", "cc-by-nc-4.0", 20, 10**6, SHA, 18, 2, 7, 20)
    imported = replace(_provenance(), release=source)
    wds = [card_section(2)]
    return {
        "demo": DatasetCard.load(built / "README.md").text,
        "webdataset": DatasetCard(render_card(written, _provenance(), extra_sections=wds)).text,
        "release": DatasetCard(
            render_card(
                written,
                imported,
                intro=release_intro(source.repo_id),
                extra_sections=[*release_sections(written, source), *wds],
            )
        ).text,
    }


def test_hub_card_needs_no_code_from_this_repository(built, tiny_videos):
    """Issue 33: a Hub visitor has the data, not the SPLICE code. The card says how to load
    it (`load_dataset` of the Parquet configs), what each field holds and how to score
    (`evaluate.load` of the metric Space, or plain Python), and names the code only in its
    one "Built with" paragraph: no module, no folder of the repository, no `splice`
    command anywhere else."""
    from splice_build.cli import SUBCOMMANDS

    command = re.compile(rf"\bsplice (?:{'|'.join(map(re.escape, SUBCOMMANDS))})\b")
    for name, text in _hub_cards(built, tiny_videos).items():
        assert text.count(BUILT_WITH) == 1 and CODE_REPOSITORY in BUILT_WITH, name
        assert "**Built with**" in BUILT_WITH and "**Built with**" not in text.replace(
            BUILT_WITH, ""
        )
        body = text.replace(BUILT_WITH, "").replace('"ORG/splice_metric"', '"ORG/metric"')
        for repo_only in ("splice_", "build/", "docs/", "import splice", "from splice"):
            assert repo_only not in body, (name, repo_only)
        assert not command.search(body), (name, command.search(body))
        assert 'load_dataset("ORG/splice", "video_text"' in body, name
        assert 'evaluate.load("ORG/splice_metric")' in text and "def paper_scores(" in body
        fields = body.split("### Fields\n", 1)[1].split("\n## ", 1)[0]
        rows = [line for line in fields.splitlines() if line.startswith("| `")]
        held = {  # (field, config) pairs the Fields table states
            (row[0].strip("`"), config)
            for row in ([c.strip() for c in line.strip("|").split("|")] for line in rows)
            for config in (WRITTEN_CONFIGS if row[-1] == "all" else row[-1].split(", "))
        }
        assert held == {(c, config) for config in WRITTEN_CONFIGS for c in columns(config)}, name


def test_hub_cards_plain_python_scores_are_the_metrics(built):
    """The card's plain-Python `paper_scores` gives the metric's four paper metrics, on
    right, wrong, short, long and repeated orders alike (through its public `compute`)."""
    import itertools

    import evaluate

    import splice_metric

    text = (built / "README.md").read_text()
    score = text.split("\n## Score\n", 1)[1].split("\n## ", 1)[0]
    code = next(b for b in re.findall(r"```python\n(.*?)```", score, re.S) if "def paper_" in b)
    namespace: dict = {}
    exec(code.split("\nscores = ", 1)[0], namespace)
    paper_scores = namespace["paper_scores"]
    truth = [3, 1, 4, 2]
    guesses = [list(p) for p in itertools.permutations(truth)]
    guesses += [[3, 1], [3, 1, 4, 2, 5], [1, 1, 2, 2], [], [4, 4, 4, 4, 4, 4]]
    metric = evaluate.load(splice_metric.path())
    for guess in guesses:
        result = metric.compute(predictions=[guess], references=[truth])
        want = {name: result[name] for name in PAPER_METRICS}
        assert paper_scores(guess, truth) == pytest.approx(want), guess


def test_card_says_which_side_each_448_caps(built):
    """Issue 30, wall 8: the clips' cap is on their short side (``short_side``); the
    paper's 448 px (Appendix A.2) is the long side of the frames models see (``long_side``)."""
    text = " ".join((built / "README.md").read_text().split())
    assert "short_side=448" in text  # the cut settings, by their name
    assert "their SHORTER side capped at the cut settings' `short_side`" in text
    assert "The paper's 448 px (Appendix A.2" in text
    assert "the LONGER side of the frames its models were given" in text
    assert "long_side=448" in text and "max_side" not in text


def test_card_template_is_reusable_and_deterministic(tmp_path, tiny_videos):
    written = write_dataset(tiny_videos[:2], tmp_path / "out")
    plain = render_card(written, _provenance())
    assert plain == render_card(written, _provenance())
    assert STAND_IN_NOTICE.strip() not in plain
    readme = render_card(
        written,
        _provenance(),
        title="SPLICE reference implementation",
        intro="Build, load and score SPLICE.",
        extra_sections=[("Repository layout", "`build/` is the pipeline.")],
        front_matter=False,
    )
    assert readme.startswith("# SPLICE reference implementation\n")
    assert "Build, load and score SPLICE." in readme
    assert "## Repository layout\n\n`build/` is the pipeline.\n" in readme
    assert readme.index("## Repository layout") < readme.index("## Licensing Information")


# --- load_dataset on the written folder --------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS)
def test_load_dataset_every_config(built, tiny_videos, config):
    ds = datasets.load_dataset(str(built), config, split="test")
    assert ds.column_names == list(columns(config))
    assert ds.num_rows == len(tiny_videos)
    if "clips" in ds.column_names:
        assert ds.features["clips"] == List(Video())
        ds = ds.cast_column("clips", List(Video(decode=False)))
    rows = list(ds)
    for row, video in zip(rows, tiny_videos, strict=True):
        assert row["video_id"] == video.entry.video_id
        assert row["answer"]["order"] == list(video.order)
        if "clips" in row:
            assert [c["path"] for c in row["clips"]] == [
                clip_file_name(video.entry.video_id, k) for k in range(1, len(video.clips) + 1)
            ]
            assert row["clips"][0]["bytes"] == video.clips[0].path.read_bytes()


@pytest.mark.parametrize("config", CONFIGS)
def test_load_dataset_streaming_every_config(built, tiny_videos, config):
    ds = datasets.load_dataset(str(built), config, split="test", streaming=True)
    if "clips" in columns(config):
        ds = ds.decode(False)
    rows = list(ds)
    assert [list(r) for r in rows] == [list(columns(config))] * len(tiny_videos)
    assert [r["video_id"] for r in rows] == [v.entry.video_id for v in tiny_videos]
    if "clips" in columns(config):
        first = rows[0]["clips"][0]
        assert first["path"] == clip_file_name(tiny_videos[0].entry.video_id, 1)
        assert first["bytes"] == tiny_videos[0].clips[0].path.read_bytes()


def test_card_gives_each_content_its_own_load_dataset_cache(tmp_path, tiny_videos):
    """`load_dataset` keys its cache of a local folder on the card's YAML alone, so two
    builds whose shards differ only in content (same sizes, e.g. another seed's shuffles)
    must still get different cards, or the second would load the first one's rows."""
    import shutil
    from dataclasses import replace

    from datasets.load import dataset_module_factory

    out = tmp_path / "a" / "splice"
    written = write_dataset(tiny_videos, out, rows_per_row_group=2)
    write_card(out, written, _provenance())
    twin = tmp_path / "b" / "splice"
    shutil.copytree(out, twin)
    shard = next((twin / shard_dir("text")).glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF  # same size, other content
    shard.write_bytes(bytes(data))
    twin_written = replace(
        written,
        config_shards={
            config: tuple(replace(s, path=twin / shard_dir(config) / s.path.name) for s in shards)
            for config, shards in written.config_shards.items()
        },
    )
    write_card(twin, twin_written, _provenance())
    descriptions = [
        {c["config_name"]: c["description"] for c in DatasetCard.load(f / "README.md").data.configs}
        for f in (out, twin)
    ]
    assert descriptions[0] != descriptions[1]
    assert dataset_module_factory(str(out)).hash != dataset_module_factory(str(twin)).hash


def test_card_says_when_the_build_used_the_bundled_public_subset(tmp_path, tiny_videos):
    """The bundled file is COIN's public 10,070-video subset, not COIN.json: the card says so."""
    from dataclasses import replace

    from splice_build.stages.ingest import BUNDLED_ANNOTATIONS, load_annotations

    written = write_dataset(tiny_videos, tmp_path / "splice")
    bundled = replace(
        _provenance(),
        annotations_file=BUNDLED_ANNOTATIONS.name,
        annotations_sha256=load_annotations(BUNDLED_ANNOTATIONS).sha256,
    )
    notice = "COIN's public subset bundled with the SPLICE code"
    assert notice in render_card(written, bundled)
    assert notice not in render_card(written, _provenance())
