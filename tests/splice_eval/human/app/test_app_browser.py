"""The annotation page in a real headless Chromium (Debian's, driven by Playwright; no
browser is downloaded): an annotator plays a clip, orders, submits, reloads and resumes,
marks a video unknown and completes the package; then ``annotate ingest`` and ``splice
report`` give the figures the answers imply. Also: nothing the browser receives, nor any
API route, holds the answer key."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

from splice_build.cli import main as splice_main
from splice_eval.human import annotate, sheets
from splice_eval.predictions import HUMAN_MODEL
from tests.support.annotate_serving import (
    export_package,
    free_port,
    get,
    served,
    start_serve,
    true_positions,
)
from tests.support.paths import REPO

pytest.importorskip("gradio")
sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
LAPTOP = {"width": 1366, "height": 768}
SCREENSHOT = REPO / "docs" / "annotate_app.png"
PLAY = """async (selector) => {
  const v = document.querySelector(selector);
  v.muted = true;
  await v.play();
  const start = performance.now();
  while (v.currentTime === 0 && performance.now() - start < 120000) {
    await new Promise(r => setTimeout(r, 100));
  }
  await new Promise(r => setTimeout(r, 300));
  v.pause();
  return v.currentTime;
}"""


@pytest.fixture
def browser(tmp_path):
    """A fresh Chromium profile; any request off 127.0.0.1 is aborted and recorded."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (Debian package chromium; make test installs it)")
    outside: list[str] = []
    received: list[tuple[str, bytes]] = []

    def through(route):
        """Local requests are fetched here and handed on, so every body the browser gets
        (event streams included) is recorded whole; anything else is refused. Gradio's
        heartbeat is the one stream that never ends while the page is open (it repeats
        ``data: ALIVE``): fetching it whole timed out after 30 s on a busy machine, the
        server then dropped the session, and the page could not save. It goes through
        unrecorded: its body is the server's fixed keepalive (gradio/routes.py), never
        anything of the package."""
        url = route.request.url
        if urlparse(url).hostname != "127.0.0.1":
            outside.append(url)
            route.abort()
            return
        if "/gradio_api/heartbeat/" in urlparse(url).path:
            route.continue_()
            return
        try:
            response = route.fetch(timeout=120_000)
            body = response.body()
        except sync_api.Error:  # the server went away mid-answer (a crash the test makes)
            route.abort()  # the browser sees the network error it would see
            return
        received.append((url, body))
        route.fulfill(response=response, body=body)

    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport=LAPTOP,
        )
        context.route("**/*", through)
        page = context.new_page()
        # generous waits: the machine is shared, and a wait is not a speed goal
        page.set_default_timeout(120_000)
        sync_api.expect.set_options(timeout=120_000)
        yield page, received, outside
        context.close()


def play(page) -> float:
    """Play part 1 of the folder shown; its currentTime once it has advanced."""
    page.wait_for_selector("#clip-1 video[src]")
    return page.evaluate(PLAY, "#clip-1 video")


def start(page, url: str, name: str) -> None:
    page.goto(url)
    page.locator("#annotator input").click()
    page.get_by_role("option", name=name, exact=True).click()
    page.click("#start")
    sync_api.expect(page.locator("#progress")).to_contain_text(f"{name}:")


def heading(page, folder: int) -> None:
    sync_api.expect(page.locator("#heading")).to_contain_text(f"Folder {folder} ")


def answer(page, positions: list[int | None], unk: bool = False) -> None:
    for k, p in enumerate(positions, 1):
        page.fill(f"#position-{k} input", "" if p is None else str(p))
    box = page.locator("#unknown input")
    box.check() if unk else box.uncheck()
    page.click("#submit")


def saved(page, folder: int) -> None:
    sync_api.expect(page.locator("#message")).to_contain_text(f"Saved folder {folder}.")


def folders_of(key, name: str) -> list[int]:
    return sorted(f for f, a in key.items() if a.annotator == name)


def test_an_annotator_completes_a_package_in_chromium(demo_build, tmp_path, browser):
    page, _, outside = browser
    pkg = tmp_path / "packages"
    key = export_package(demo_build, pkg)
    truth = true_positions(demo_build, key)
    answers = pkg / "answers"
    a1, b1 = folders_of(key, "A1"), folders_of(key, "B1")
    with served(pkg, answers) as url:
        start(page, url, "A1")
        heading(page, a1[0])
        assert play(page) > 0  # H.264 plays in Debian's Chromium

        n = len(truth[a1[0]])
        _refusals(page, n, answers / "A1.csv")

        answer(page, truth[a1[0]])
        saved(page, a1[0])
        sync_api.expect(page.locator("#progress")).to_contain_text("1 of 3 answered")

        page.reload()  # closing the tab loses nothing; the annotator resumes
        start(page, url, "A1")
        heading(page, a1[1])
        sync_api.expect(page.locator("#progress")).to_contain_text("1 of 3 answered")
        page.click("#previous")
        heading(page, a1[0])
        shown = [page.input_value(f"#position-{k} input") for k in range(1, n + 1)]
        assert shown == [str(p) for p in truth[a1[0]]]
        page.click("#next")
        heading(page, a1[1])
        answer(page, [None] * len(truth[a1[1]]), unk=True)  # the paper's unk, no guess
        saved(page, a1[1])
        heading(page, a1[2])
        answer(page, truth[a1[2]])
        saved(page, a1[2])
        sync_api.expect(page.locator("#progress")).to_contain_text("3 of 3 answered")

        start(page, url, "B1")
        for i, folder in enumerate(b1):
            heading(page, folder)
            if i == 0:
                _screenshot(page, truth[folder], tmp_path)
            answer(page, truth[folder])
            saved(page, folder)
        sync_api.expect(page.locator("#progress")).to_contain_text("3 of 3 answered")
    assert outside == []  # the page fetched nothing from the internet

    assert (answers / "A1.csv").read_text().splitlines()[0] == "folder,order"
    human = tmp_path / "human"
    argv = ["annotate", "ingest", str(answers / "A1.csv"), str(answers / "B1.csv")]
    assert splice_main([*argv, "--out", str(human)]) == 0  # key.json found beside answers/
    _check_agreement(json.loads((human / "agreement.json").read_text()))
    _check_report(demo_build, human, tmp_path / "report", unk_config=key[a1[1]].config)


def _refusals(page, n: int, sheet: Path) -> None:
    """A position used twice, then one out of range: said on the page, nothing written."""
    answer(page, [1] * n)
    sync_api.expect(page.locator("#message")).to_contain_text("Not saved")
    too_far = [*range(2, n + 1), n + 1]
    answer(page, too_far)
    got = ", ".join(map(str, too_far))
    sync_api.expect(page.locator("#message")).to_contain_text(f"must be 1 to {n}, each used")
    sync_api.expect(page.locator("#message")).to_contain_text(f"got {got}.")
    assert not sheet.exists()


def _screenshot(page, positions: list[int], tmp_path: Path) -> None:
    """The page at laptop size mid-task; copied into docs/ with SPLICE_WRITE_SCREENSHOT=1."""
    for k, p in enumerate(positions, 1):
        page.fill(f"#position-{k} input", str(p))
    play(page)
    shot = tmp_path / "annotate_app.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("SPLICE_WRITE_SCREENSHOT") == "1":
        shutil.copyfile(shot, SCREENSHOT)


def _check_agreement(summary: dict) -> None:
    """3 videos, each ordered by A1 and B1; A1 said unk (no guess) on one: it is kept (one
    annotator ordered it), and the two true orders agree exactly."""
    assert summary["answers"] == 6
    assert (summary["videos"], summary["kept"], summary["inconclusive"]) == (3, 3, 0)
    agree = summary["agreement"]
    assert agree["videos_with_two_answers"] == 3
    assert (agree["both_unk"], agree["one_unk"], agree["both_ordered"]) == (0, 1, 2)
    assert agree["orders_compared"] == 2
    assert agree["order_agreement"]["binary_accuracy"] == 1.0
    assert agree["order_agreement"]["kendall_tau"] == 1.0


def _check_report(demo_build: Path, human: Path, out: Path, unk_config: str) -> None:
    files = [str(human / f"human_{c}.jsonl") for c in annotate.MODALITIES]
    assert splice_main(["report", *files, "--data", str(demo_build), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    runs = {r["config"]: r for r in report["runs"]}
    assert set(runs) == set(annotate.MODALITIES)
    for config, run in runs.items():
        assert run["model"] == HUMAN_MODEL
        correct = 3 - (config == unk_config)  # every given order is the true one
        expected = correct / report["videos"]
        assert run["overall"]["binary_accuracy"]["mean"] == pytest.approx(expected)


def test_nothing_the_browser_receives_holds_the_key(demo_build, tmp_path, browser):
    page, received, outside = browser
    pkg = tmp_path / "packages"
    key = export_package(demo_build, pkg)
    answers = pkg / "answers"
    a1 = folders_of(key, "A1")
    with served(pkg, answers) as url:
        start(page, url, "A1")
        for folder in a1:
            heading(page, folder)
            play(page)
            answer(page, [None] * len(key[folder].parts), unk=True)
            saved(page, folder)
        page.reload()
        start(page, url, "A1")
        api = ["/", "/config", "/info", "/gradio_api/info", "/gradio_api/openapi.json",
               "/gradio_api/config", "/gradio_api/info?all_endpoints=true"]  # fmt: skip
        direct = {route: get(url + route) for route in api}
        private = [pkg / annotate.KEY_NAME, answers / "A1.csv", pkg / "A1" / "sheet.csv",
                   Path("/etc/hostname"), demo_build / "README.md"]  # fmt: skip
        for path in private:
            for prefix in ("/gradio_api/file=", "/file=", "/gradio_api/file/"):
                status, body = get(url + prefix + str(path))
                assert status in (403, 404), (prefix, path, status)
                # a refusal may echo the path asked for: that is not the server's to leak
                direct[prefix + str(path)] = (status, body.replace(str(path).encode(), b""))
    assert outside == []
    clip_urls = [u for u, _ in received if u.endswith(".mp4")]
    assert clip_urls
    assert all(Path(urlparse(u).path).name.startswith("random_part_") for u in clip_urls)
    needles = {a.video_id for a in key.values()} | {str(demo_build), str(pkg), '"assignments"'}
    # the bodies were really captured: the page's own words about each folder are there
    for folder in a1:
        assert any(f"Folder {folder} ".encode() in body for _, body in received), folder
    everything = [*received, *((route, body) for route, (_, body) in direct.items())]
    for where, body in everything:
        for needle in needles:
            assert needle.encode() not in body, (needle, where)
    for where, _ in received:
        assert not any(needle in where for needle in needles), where


def test_with_passwords_each_annotator_logs_in_as_themselves(demo_build, tmp_path, browser):
    page, _, outside = browser
    pkg = tmp_path / "packages"
    key = export_package(demo_build, pkg)
    truth = true_positions(demo_build, key)
    answers = tmp_path / "answers"
    b1 = folders_of(key, "B1")
    with served(pkg, answers, {"A1": "kiwi", "B1": "pie"}) as url:
        page.goto(url)
        page.get_by_label("username").fill("B1")
        page.get_by_label("password").fill("kiwi")  # A1's password is not B1's
        page.get_by_role("button", name="Login").click()
        sync_api.expect(page.get_by_role("button", name="Login")).to_be_visible()
        assert not page.locator("#progress").is_visible()
        page.get_by_label("username").fill("B1")  # the refused form is cleared
        page.get_by_label("password").fill("pie")
        page.get_by_role("button", name="Login").click()
        sync_api.expect(page.locator("#progress")).to_contain_text("B1: 0 of 3 answered")
        assert not page.locator("#annotator").is_visible()  # no choosing someone else
        heading(page, b1[0])
        assert play(page) > 0  # the clips handed to B1's page are B1's to fetch (guard)
        answer(page, truth[b1[0]])
        saved(page, b1[0])
    assert outside == []
    assert sorted(p.name for p in answers.glob("*.csv")) == ["B1.csv"]


def test_a_page_open_across_a_crash_and_restart_saves_again(demo_build, tmp_path, browser):
    """The server is SIGKILLed under an open, logged-in page and started again: the page,
    untouched, saves its next answer (its login and the folder it shows survive)."""
    page, _, outside = browser
    pkg = tmp_path / "packages"
    key = export_package(demo_build, pkg)
    truth = true_positions(demo_build, key)
    answers = tmp_path / "answers"
    passwords = tmp_path / "passwords.txt"
    passwords.write_text("A1:kiwi\nB1:pie\n")
    a1 = folders_of(key, "A1")
    port, cache = free_port(), tmp_path / "cache"
    server = start_serve(pkg, answers, port, cache, passwords)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        page.get_by_label("username").fill("A1")
        page.get_by_label("password").fill("kiwi")
        page.get_by_role("button", name="Login").click()
        heading(page, a1[0])
        answer(page, truth[a1[0]])
        saved(page, a1[0])
        heading(page, a1[1])
        server.kill()
        server.wait(timeout=60)
        server = start_serve(pkg, answers, port, cache, passwords)
        answer(page, truth[a1[1]])
        saved(page, a1[1])
    finally:
        server.kill()
        server.wait(timeout=60)
    assert outside == []
    sheet = {a.folder: a.raw for a in sheets.read_sheet(answers / "A1.csv")}
    assert set(sheet) == {a1[0], a1[1]}
