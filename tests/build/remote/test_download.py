"""``splice download`` against a mirror on 127.0.0.1 (``--url-template``): real footage is
downloaded and then built; removed, private, cut-off and stalled videos end in the report
with their category and leave nothing the build would take; a rerun fetches nothing that is
present; cookies are used but never shown. YouTube itself is never reached: for the default
URLs only the choice of yt-dlp's YouTube extractor is checked."""

from __future__ import annotations

import csv
import json
import signal
from pathlib import Path

import pytest

from splice_build import cli
from splice_build.remote.download import classify, fetch, formats, settings
from splice_build.remote.download_report import REPORT_CSV, REPORT_JSON
from splice_build.running import ownership
from splice_build.running.pipeline import run_build
from splice_build.stages import sources
from splice_build.stages.ingest import BUNDLED_ANNOTATIONS
from tests.support.build_helpers import config
from tests.support.mirror_server import Item, Mirror
from tests.support.terminal import interrupt_when
from tests.support.videos import write_video

SECRET = "s3cr3t-cookie-value-7f1c"
ROLES = ("bikes", "city", "vp9", "cookie", "flaky", "gone", "private", "cut", "slow")


def _short_entries(count: int) -> list[tuple[str, dict]]:
    """Real two-step COIN entries whose steps, scaled to a few seconds, stay long enough."""
    database = json.loads(BUNDLED_ANNOTATIONS.read_text("utf-8"))["database"]
    picked = []
    for vid in sorted(database):
        raw = database[vid]
        segments = [a["segment"] for a in raw["annotation"]]
        if len(segments) != 2 or not vid.replace("-", "").replace("_", "").isalnum():
            continue
        if min(e - s for s, e in segments) >= 0.25 * segments[-1][1]:
            picked.append((vid, raw))
        if len(picked) == count:
            return picked
    raise AssertionError("not enough short entries in the bundled annotations")


def _annotations(tmp_path: Path, durations: dict[str, float]) -> Path:
    """A COIN.json-format file of real entries, their steps scaled into each footage's
    length (the footage is seconds long, COIN's videos minutes)."""
    database = {}
    for vid, raw in _short_entries(len(durations)):
        raw = json.loads(json.dumps(raw))
        seconds = list(durations.values())[len(database)]
        scale = (seconds - 0.8) / raw["annotation"][-1]["segment"][1]
        for step in raw["annotation"]:
            step["segment"] = [round(t * scale, 2) for t in step["segment"]]
        raw.update(start=0, end=seconds, duration=seconds)
        database[vid] = raw
    path = tmp_path / "coin_short.json"
    path.write_text(json.dumps({"database": database}), "utf-8")
    return path


@pytest.fixture
def footage(tmp_path: Path, bikes_mp4: Path, city_mpg: Path) -> dict[str, Path]:
    vp9 = write_video(tmp_path / "made.webm", n_frames=100, size=(160, 120), codec="libvpx-vp9")
    return {"bikes": bikes_mp4, "city": city_mpg, "vp9": vp9}


KINDS = {
    "gone": "404", "private": "403", "cut": "cut", "slow": "slow", "cookie": "cookie",
    "flaky": "flaky",
}  # fmt: skip


def _mirror(footage: dict[str, Path], ids: dict[str, str]) -> dict[str, Item]:
    return {
        vid: Item(footage.get(r, footage["bikes"]), KINDS.get(r, "ok")) for r, vid in ids.items()
    }


def _download(
    annotations: Path, out: Path, mirror: Mirror, *extra: str, progress: bool = False
) -> int:
    return cli.main(
        [
            "download", "--annotations", str(annotations), "--out", str(out),
            "--url-template", mirror.url + "/{recipe_type}/{video_id}",
            "--sleep", "0", "--retries", "1", "--backoff", "0", "--timeout", "1",
            *([] if progress else ["--no-progress"]), *extra,
        ]
    )  # fmt: skip


def _report(out: Path) -> dict[str, dict]:
    return {v["video_id"]: v for v in json.loads((out / REPORT_JSON).read_text())["videos"]}


def test_mirror_download_report_build_and_rerun(
    tmp_path: Path, footage: dict[str, Path], capsys: pytest.CaptureFixture
) -> None:
    durations = {"bikes": 10.0, "city": 7.5, "vp9": 10.0}
    roles = {r: durations.get(r, 10.0) for r in ROLES}
    annotations = _annotations(tmp_path, roles)
    ids = dict(zip(ROLES, json.loads(annotations.read_text())["database"], strict=True))
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(
        f"# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t{SECRET}\n"
    )
    cookie_bytes = cookies.read_bytes()
    out = tmp_path / "videos"
    with Mirror(_mirror(footage, ids), cookie=SECRET, max_stall=5) as mirror:
        status = _download(annotations, out, mirror, "--cookies", str(cookies))
        first_hits = len(mirror.hits)
        printed = capsys.readouterr()
        assert status == 0  # unavailable videos are a normal outcome
        report = _report(out)
        assert set(report) == set(ids.values())
        got = {role: (report[vid]["status"], report[vid]["category"]) for role, vid in ids.items()}
        assert got == {
            "bikes": ("downloaded", ""),
            "city": ("downloaded", ""),
            "vp9": ("downloaded", ""),
            "cookie": ("downloaded", ""),
            "flaky": ("downloaded", ""),
            "gone": ("unavailable", "removed"),
            "private": ("unavailable", "private"),
            "cut": ("failed", "incomplete"),
            "slow": ("failed", "timeout"),
        }
        assert report[ids["flaky"]]["attempts"] == 2  # resumed, not fetched anew:
        assert any(h.range for h in mirror.requests_for(ids["flaky"]))
        assert report[ids["cut"]]["attempts"] == 2 and report[ids["gone"]]["attempts"] == 1
        for role in ("bikes", "city", "vp9"):
            row = report[ids[role]]
            assert row["bytes"] == (out / row["file"]).stat().st_size > 0 and row["format"]
        assert report[ids["bikes"]]["bytes"] == footage["bikes"].stat().st_size

        # Nothing of the four that failed is where the build looks.
        index = sources.index_sources(out)
        for role in ("gone", "private", "cut", "slow"):
            assert index.lookup(ids[role]).paths == (), role
        # Only what may resume stays, hidden from the build: the failed ones' staging.
        assert {p.name for p in (out / fetch.STAGING).iterdir()} <= {ids["cut"], ids["slow"]}
        data = json.loads((out / REPORT_JSON).read_text())
        assert data["yt_dlp_version"] and "available 5/9 (55.6%)" in data["summary"]
        with open(out / REPORT_CSV, newline="") as f:
            rows = {r["video_id"]: r for r in csv.DictReader(f)}
        assert {v: r["status"] for v, r in rows.items()} == {
            v: r["status"] for v, r in report.items()
        }
        # Cookies were sent (the cookie-only video came), but never shown or copied.
        everything = (
            printed.out
            + printed.err
            + (out / REPORT_JSON).read_text()
            + (out / REPORT_CSV).read_text()
        )
        assert SECRET not in everything and "cookies.txt" not in everything
        assert cookies.read_bytes() == cookie_bytes  # read, never written back
        assert "available 5/9" in printed.out

        # A rerun fetches nothing already present.
        assert _download(annotations, out, mirror, "--cookies", str(cookies)) == 0
        again = _report(out)
        for role in ("bikes", "city", "vp9", "cookie", "flaky"):
            assert again[ids[role]]["status"] == "present"
        for hit in mirror.hits[first_hits:]:
            assert hit.path.split("/")[-1] in {ids[r] for r in ("gone", "private", "cut", "slow")}

    # The downloaded sources build; the card says what the download could not fetch.
    result = run_build(config(annotations, out, tmp_path / "splice"))
    built = {v.video_id: v.status for v in result.report.videos}
    assert {r for r, v in ids.items() if built[v] == "included"} == {
        "bikes", "city", "vp9", "cookie", "flaky"
    }  # fmt: skip
    assert result.problems == []
    card = (result.out / "README.md").read_text("utf-8")
    assert "2 of the 9 selected videos were unavailable" in card
    assert "(private 1, removed 1)" in card and "2 more failed after retries" in card


def test_coin_layout_output_builds(tmp_path: Path, footage: dict[str, Path], capsys) -> None:
    annotations = _annotations(tmp_path, {"bikes": 10.0, "vp9": 10.0})
    database = json.loads(annotations.read_text())["database"]
    ids = dict(zip(("bikes", "vp9"), database, strict=True))
    out = tmp_path / "coin_videos"
    with Mirror({v: Item(footage[r]) for r, v in ids.items()}) as mirror:
        assert _download(annotations, out, mirror, "--layout", "coin", progress=True) == 0
    bar = capsys.readouterr().err  # the progress bar: counts and rates
    assert "done=2" in bar and "present=0" in bar and "unavailable=0" in bar and "MB_s=" in bar
    for vid in ids.values():
        recipe = database[vid]["recipe_type"]
        assert _report(out)[vid]["file"].startswith(f"{recipe}/{vid}.")
        assert list((out / str(recipe)).glob(f"{vid}.*"))
    assert not (out / fetch.STAGING).exists()
    result = run_build(config(annotations, out, tmp_path / "splice"))
    assert len(result.report.included) == 2 and result.problems == []


def test_broken_copy_is_refetched_and_moved_aside(tmp_path: Path, footage: dict[str, Path]):
    annotations = _annotations(tmp_path, {"bikes": 10.0})
    (vid,) = json.loads(annotations.read_text())["database"]
    out = tmp_path / "videos"
    out.mkdir()
    data = footage["bikes"].read_bytes()
    (out / f"{vid}.mp4").write_bytes(data[: len(data) // 3])  # a download cut off earlier
    with Mirror({vid: Item(footage["bikes"])}) as mirror:
        assert _download(annotations, out, mirror) == 0
    row = _report(out)[vid]
    assert row["status"] == "downloaded" and "broken" in row["reason"]
    assert (out / f"{vid}.mp4").read_bytes() == data
    assert (out / f"{vid}.mp4.broken").stat().st_size == len(data) // 3  # kept, not deleted


def test_network_down_for_every_attempt_exits_nonzero(tmp_path: Path, capsys) -> None:
    """A mirror that is there but answers nothing: every attempt fails on the network, the
    run exits 1 and says so (the host is reachable, so only the breaker's count stops it)."""
    annotations = _annotations(tmp_path, {"a": 10.0, "b": 10.0})
    ids = list(json.loads(annotations.read_text())["database"])
    with Mirror({v: Item(None, "hangup") for v in ids}) as mirror:
        status = _download(annotations, tmp_path / "videos", mirror)
    assert status == 1
    rows = _report(tmp_path / "videos").values()
    assert {(r["status"], r["category"], r["attempts"]) for r in rows} == {("failed", "network", 2)}
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("every download failed on the network (2 network; ") and len(last) < 250


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url-template", "http://127.0.0.1:9/{id}"], "--url-template"),
        (["--url-template", "http://127.0.0.1:9/x"], "{video_id}"),
        (["--cookies", "no-such-cookies.txt"], "--cookies file not found"),
        (["--workers", "0"], "--workers"),
        (["--layout", "coin", "--short-side", "8"], "--short-side"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, capsys, args, message) -> None:
    status = cli.main(["download", "--out", str(tmp_path / "v"), "--no-progress", *args])
    err = capsys.readouterr().err.strip()
    assert status == 2 and err.startswith("splice download: ") and message in err
    assert "\n" not in err and not (tmp_path / "v").exists()


def test_bad_cookie_file_is_refused_without_showing_it(tmp_path: Path, capsys) -> None:
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(f"this is not a cookie file {SECRET}\n")
    status = cli.main(["download", "--cookies", str(cookies), "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert status == 2 and "--cookies" in err and SECRET not in err


def _fmt(fid, width, height, vcodec="avc1", acodec="none", size=None, ext="mp4"):
    return {
        "format_id": fid,
        "width": width,
        "height": height,
        "vcodec": vcodec,
        "acodec": acodec,
        "filesize": size,
        "ext": ext,
    }


def test_format_choice_smallest_at_or_above_short_side() -> None:
    youtube = [
        _fmt("sb0", 160, 90, vcodec="none", ext="mhtml"),
        _fmt("140", None, None, vcodec="none", acodec="mp4a"),
        _fmt("18", 640, 360, acodec="mp4a", size=9),
        _fmt("134", 640, 360, size=5),
        _fmt("135", 854, 480, size=8),
        _fmt("244", 854, 480, vcodec="vp9", size=6),
        _fmt("136", 1280, 720, size=20),
        _fmt("137", 1920, 1080, size=50),
    ]
    assert formats.choose_format(youtube, 448) == "244"  # 480p, the smaller of the two
    assert formats.choose_format(youtube, 720) == "136"
    assert formats.choose_format(youtube, 2000) == "137"  # nothing that big: the best below
    portrait = [_fmt("a", 360, 640, size=3), _fmt("b", 480, 854, size=7)]
    assert formats.choose_format(portrait, 448) == "b"  # the short side is the width
    assert formats.choose_format(youtube, 448, audio=True) == "18"  # sound, no ffmpeg
    assert formats.choose_format(youtube, 448, audio=True, can_merge=True) == "244+bestaudio"
    direct = [{"format_id": "mp4", "ext": "mp4", "vcodec": None, "acodec": None}]
    assert formats.choose_format(direct, 448) == "mp4"
    assert formats.choose_format([_fmt("140", None, None, vcodec="none")], 448) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("[youtube] x: Private video. Sign in if you've been granted access", "private"),
        ("[youtube] x: Sign in to confirm your age. This video may be inappropriate", "age"),
        ("[youtube] x: The uploader has not made this video available in your country", "geo"),
        ("[youtube] x: Video unavailable. This video is no longer available due to a "
         "copyright claim by Someone", "copyright"),
        ("[youtube] x: Video unavailable. This video has been removed by the uploader",
         "removed"),
        ("[youtube] x: Video unavailable", "removed"),
        ("[youtube] x: Sign in to confirm you're not a bot", "throttled"),
        ("[youtube] x: Video unavailable. This content isn't available, try again later.",
         "throttled"),
        ("[generic] x: Unable to download webpage: HTTP Error 503: Service Unavailable",
         "server"),
        ("[generic] x: Unable to download webpage: HTTP Error 429: Too Many Requests",
         "throttled"),
        ("[youtube] x: This live event will begin in a few moments.", "other"),
        ("[generic] x: Requested format is not available. Use --list-formats", "other"),
    ],
)  # fmt: skip
def test_youtube_messages_are_categorised(message: str, expected: str) -> None:
    status, category = classify.classify(message)
    assert category.startswith(expected)
    assert status == ("failed" if expected in ("throttled", "server") else "unavailable")


def test_default_urls_go_to_yt_dlps_youtube_extractor(tmp_path: Path) -> None:
    """The default path is only checked up to the call: no test reaches YouTube."""
    import yt_dlp

    from tests.support.videos import entry

    url = settings.video_url(settings.DEFAULT_URL_TEMPLATE, entry("dQw4w9WgXcQ", [(0, 1)]))
    assert url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    with yt_dlp.YoutubeDL({"quiet": True}) as ydl:
        suitable = [ie.ie_key() for ie in ydl._ies.values() if ie.suitable(url)]
    assert suitable[0] == "Youtube"


@pytest.mark.parametrize(
    ("signum", "status", "words"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
)
def test_ctrl_c_keeps_the_report_and_the_part_to_resume(
    signum, status, words, tmp_path: Path, footage: dict[str, Path]
) -> None:
    """Ctrl-C, or SIGTERM (a batch system's stop, issue 47 §4: it killed the download where
    it stood, exit -15, no report), ends the run with its report and the part to resume."""
    import sys

    annotations = _annotations(tmp_path, {"bikes": 10.0, "slow": 10.0})
    ok_id, slow_id = json.loads(annotations.read_text())["database"]
    out = tmp_path / "videos"
    items = {ok_id: Item(footage["bikes"]), slow_id: Item(footage["bikes"], "slow")}
    with Mirror(items, max_stall=60) as mirror:
        cmd = [
            sys.executable, "-m", "splice_build.cli", "download",
            "--annotations", str(annotations), "--out", str(out),
            "--url-template", mirror.url + "/{video_id}", "--workers", "1",
            "--sleep", "0", "--retries", "0", "--timeout", "5", "--no-progress",
        ]  # fmt: skip
        # interrupted once the stalled download is under way
        done = interrupt_when(cmd, lambda: len(mirror.requests_for(slow_id)) >= 2, signum=signum)
    stdout, stderr = done.stdout, done.stderr
    assert done.returncode == status, stderr
    assert f"{words}: 1 video not tried" in stdout and "Traceback" not in stderr
    report = _report(out)
    assert set(report) == {ok_id} and report[ok_id]["status"] == "downloaded"
    assert list((out / fetch.STAGING / slow_id).glob("*.part"))  # kept, to resume
    assert sources.index_sources(out).lookup(slow_id).paths == ()


def test_second_download_into_the_same_folder_is_refused(tmp_path: Path, capsys) -> None:
    """Two downloads into one folder would race on its staging and report files: the second
    is refused at once, naming the folder, and the first one's files are left alone."""
    annotations = _annotations(tmp_path, {"a": 10.0})
    out = tmp_path / "videos"
    with Mirror({}) as mirror, ownership.lock_folder(out, "--out"):
        status = _download(annotations, out, mirror)
    err = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in err
    assert err.startswith("splice download: --out videos: another splice command is using")
    assert not (out / REPORT_JSON).exists()


def test_a_local_error_on_one_video_is_its_outcome(tmp_path: Path, footage, monkeypatch) -> None:
    """A failure on this machine (here: its staging folder cannot be made) fails that video,
    named in the report, and the other videos are still fetched and the report written."""
    annotations = _annotations(tmp_path, {"a": 10.0, "b": 10.0})
    ids = list(json.loads(annotations.read_text())["database"])
    out = tmp_path / "videos"
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args, **kwargs):
        if self.name == ids[0] and self.parent.name == fetch.STAGING:
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with Mirror({v: Item(footage["bikes"], "ok") for v in ids}) as mirror:
        status = _download(annotations, out, mirror)
    rows = _report(out)
    assert status == 0
    assert (rows[ids[0]]["status"], rows[ids[0]]["category"]) == ("failed", "local")
    assert "Permission denied" in rows[ids[0]]["reason"] and str(tmp_path) not in json.dumps(rows)
    assert rows[ids[1]]["status"] == "downloaded"


def test_reasons_name_local_folders_by_role_and_leave_urls_alone(tmp_path, monkeypatch) -> None:
    """A reason names the output folder ``<out>`` and any other local path by its last part,
    like the build report; text that merely contains the folder's name (a mirror URL's
    ``/videos/`` path) is not rewritten."""
    monkeypatch.chdir(tmp_path)
    chosen = settings.DownloadSettings(out=Path("videos"))
    elsewhere = tmp_path.parent / "cache" / "x.part"
    reason = (
        f"cannot open {tmp_path}/videos/.splice-download/a/a.mp4 (tried {elsewhere}) "
        "from http://mirror.test/videos/a"
    )
    assert fetch.portable_reason(reason, chosen) == (
        "cannot open <out>/.splice-download/a/a.mp4 (tried <local>/x.part) "
        "from http://mirror.test/videos/a"
    )


# --- issue 21, wall 4: downloads without a network --------------------------------------


def _closed_port() -> str:
    """The address of a mirror that was there and is gone: its port refuses connections."""
    with Mirror({}) as mirror:
        pass
    return mirror.url


def test_no_network_stops_early_instead_of_trying_every_video(tmp_path: Path, capsys) -> None:
    """With no network every video was tried in turn, with all its retries (about 47 s each
    at the defaults). As the model runner's circuit breaker does, the run stops after
    ``--max-connect-failures`` connection failures in a row; the videos it did not try are
    in the report, said in words, for a rerun to fetch. (A server that is there but hangs
    up: the reachability check passes, so the breaker's count decides.)"""
    annotations = _annotations(tmp_path, {str(i): 10.0 for i in range(12)})
    ids = list(json.loads(annotations.read_text())["database"])
    out = tmp_path / "videos"
    with Mirror({v: Item(None, "hangup") for v in ids}) as mirror:
        status = cli.main(
            [
                "download", "--annotations", str(annotations), "--out", str(out),
                "--url-template", mirror.url + "/{video_id}", "--workers", "1",
                "--sleep", "0", "--retries", "1", "--backoff", "0", "--no-progress",
                "--max-connect-failures", "4",
            ]
        )  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 1
    rows = list(_report(out).values())
    assert len(rows) == 12
    tried = [r for r in rows if r["attempts"] > 0]
    assert {(r["status"], r["category"]) for r in tried} == {("failed", "network")}
    assert sum(r["attempts"] for r in tried) == 4  # two videos of two attempts, then stop
    untried = [r for r in rows if r["attempts"] == 0]
    assert len(untried) == 10 and {r["status"] for r in untried} == {"not-tried"}
    assert all("not tried" in r["reason"] and "connection" in r["reason"] for r in untried)
    assert "2 failed after retries, 10 not tried" in printed
    assert "stopped" in printed and "10 videos not tried" in printed, printed


def test_offline_download_stops_at_the_first_failure_and_says_why(tmp_path: Path, capsys):
    """Wall 6: offline, ``--limit 3`` took about 2 minutes to stop (8 connection failures
    spread over the retries' backoff), said nothing with --no-progress, counted the videos
    it never tried as "failed after retries", and its last line was about 450 characters
    with the error twice. Now the first failure to connect is checked at once: the host
    refuses connections, so the run stops after that one attempt, counts the two other
    videos as not tried, and ends on one short line naming what failed."""
    annotations = _annotations(tmp_path, {str(i): 10.0 for i in range(12)})
    out = tmp_path / "videos"
    url = _closed_port()
    status = cli.main(
        [
            "download", "--annotations", str(annotations), "--out", str(out), "--limit", "3",
            "--url-template", url + "/{video_id}", "--workers", "1", "--sleep", "0",
            "--retries", "3", "--backoff", "0", "--no-progress",
        ]
    )  # fmt: skip
    printed = capsys.readouterr()
    assert status == 1
    rows = list(_report(out).values())
    assert sorted((r["status"], r["attempts"]) for r in rows) == [
        ("failed", 1), ("not-tried", 0), ("not-tried", 0)
    ]  # fmt: skip
    lines = printed.out.strip().splitlines()
    assert "1 failed after retries, 2 not tried" in lines[0]
    host = url.removeprefix("http://")
    assert lines[-1].startswith(f"stopped early: cannot connect to {host} (connection refused)")
    assert "2 videos not tried" in lines[-1] and len(lines[-1]) < 200, lines[-1]
    assert printed.err.startswith("splice download: 3 videos into "), printed.err


def test_a_dangling_link_in_out_is_fetched_and_kept_aside(
    tmp_path: Path, footage: dict[str, Path]
) -> None:
    """A dangling ``<id>.mp4`` link in --out made the video "failed, category local,
    attempts 0" and the whole run "failed on the network". It is no source: the video is
    fetched, and the link (the user's, not ours) is moved aside, not deleted."""
    annotations = _annotations(tmp_path, {"bikes": 10.0})
    (vid,) = json.loads(annotations.read_text())["database"]
    out = tmp_path / "videos"
    out.mkdir()
    (out / f"{vid}.mp4").symlink_to(tmp_path / "unmounted" / f"{vid}.mp4")
    with Mirror({vid: Item(footage["bikes"])}) as mirror:
        assert _download(annotations, out, mirror) == 0
    row = _report(out)[vid]
    assert (row["status"], row["attempts"]) == ("downloaded", 1), row
    assert "link" in row["reason"] and "Error" not in row["reason"], row
    assert not (out / f"{vid}.mp4").is_symlink()
    assert (out / f"{vid}.mp4").read_bytes() == footage["bikes"].read_bytes()
    assert (out / f"{vid}.mp4.broken").is_symlink()  # the user's link, kept


def test_report_urls_keep_the_video_id_and_hide_credentials(tmp_path: Path) -> None:
    """The ``url`` column read ``https://www.youtube.com/watch``: the query, which holds
    the id, was cut with the secrets. What names the video stays; a mirror's user info and
    query values that are not the video's (a token) do not."""
    annotations = _annotations(tmp_path, {"a": 10.0})
    (vid,) = json.loads(annotations.read_text())["database"]
    out = tmp_path / "videos"
    host = _closed_port().replace("http://", "")
    template = f"http://lab:pa55word@{host}/watch?v={{video_id}}&token=t0ken-9f&r={{recipe_type}}"
    status = cli.main(
        [
            "download", "--annotations", str(annotations), "--out", str(out),
            "--url-template", template, "--sleep", "0", "--retries", "0", "--no-progress",
        ]
    )  # fmt: skip
    assert status == 1
    recipe = json.loads(annotations.read_text())["database"][vid]["recipe_type"]
    assert _report(out)[vid]["url"] == f"http://{host}/watch?v={vid}&r={recipe}"
    written = (out / REPORT_JSON).read_text() + (out / "download_report.csv").read_text()
    assert "pa55word" not in written and "t0ken-9f" not in written and "lab@" not in written
    public = json.loads((out / REPORT_JSON).read_text())["settings"]["url_template"]
    assert public == f"http://{host}/watch?v={{video_id}}&r={{recipe_type}}"
    youtube = settings.DownloadSettings(out=out).public()["url_template"]
    assert youtube == "https://www.youtube.com/watch?v={video_id}"


# --- issue 30, section 4 ------------------------------------------------------------------


def test_relative_out_downloads_into_that_folder(
    tmp_path: Path, footage: dict[str, Path], monkeypatch, capsys
) -> None:
    """Wall 1: with a relative ``--out`` (the README's ``videos/``) every video failed, and the
    run blamed the network: yt-dlp joined the relative output template under its home path,
    so the file landed at ``<out>/.splice-download/<id>/<out>/.splice-download/<id>/``."""
    annotations = _annotations(tmp_path, {"bikes": 10.0})
    (vid,) = json.loads(annotations.read_text())["database"]
    monkeypatch.chdir(tmp_path)
    with Mirror({vid: Item(footage["bikes"])}) as mirror:
        status = _download(annotations, Path("rel-videos"), mirror)
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert _report(tmp_path / "rel-videos")[vid]["status"] == "downloaded"
    assert (tmp_path / "rel-videos" / f"{vid}.mp4").read_bytes() == footage["bikes"].read_bytes()
    assert not (tmp_path / "rel-videos" / fetch.STAGING).exists()
    assert "network" not in printed


def test_a_run_that_fails_on_this_machine_says_so_not_the_network(
    tmp_path: Path, footage, monkeypatch, capsys
) -> None:
    """Wall 1: when every video failed on this machine the run still said "every download
    attempt failed on the network"; its last line names what failed instead."""
    annotations = _annotations(tmp_path, {"a": 10.0, "b": 10.0})
    out = tmp_path / "videos"
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args, **kwargs):
        if self.parent.name == fetch.STAGING:
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with Mirror({}) as mirror:
        status = _download(annotations, out, mirror)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert status == 1
    assert "network" not in last and "this machine" in last and "Permission denied" in last
    assert len(last) < 200, last
