"""The scripted side of `splice run` tests: a `ChatCaller` on the fake OpenAI server, small
text-only jobs, and reply scripts that answer a build's rows. The runner's tests and the
build-identity tests (`splice run` on two builds) share them."""

from __future__ import annotations

import base64
import threading
from pathlib import Path

import splice_dataset as schema
from splice_build.cli import main as splice_main
from splice_eval.run.chat import DEFAULT_MAX_ANSWER_BYTES, ChatCaller, RetryPolicy
from splice_eval.run.jobs import RowJob
from tests.support import fake_openai_server as fake

SECRET = "sk-test-DO-NOT-LEAK-8f2c1e"


class Sleeps:
    """Records backoff waits instead of sleeping (tests never depend on time)."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.calls.append(seconds)


def make_caller(
    server: fake.FakeOpenAIServer | str,
    *,
    timeout=5.0,
    retries=3,
    base=0.25,
    sleep=None,
    max_bytes=DEFAULT_MAX_ANSWER_BYTES,
    breaker=None,
):
    return ChatCaller(
        server if isinstance(server, str) else server.url,
        "fake-model",
        RetryPolicy(max_retries=retries, base=base, cap=1.0),
        api_key=SECRET,
        timeout=timeout,
        max_bytes=max_bytes,
        generation={"temperature": 0.0},
        breaker=breaker,
        sleep=sleep or Sleeps(),
    )


def text_messages(tag: str, n: int = 3) -> list[dict]:
    labels = ", ".join(f"Video {k}" for k in range(1, n + 1))
    return [{"role": "user", "content": f"row {tag}: order {labels}"}]


def good(request: fake.Request) -> fake.Reply:
    """Answers the reverse order of the labels in the prompt."""
    n = fake.count_clips(request)
    return fake.Reply(
        content="<order>" + ", ".join(f"Video {k}" for k in range(n, 0, -1)) + "</order>"
    )


def jobs_for(names: list[str], n: int = 3) -> list[RowJob]:
    return [RowJob(name, n, lambda name=name: text_messages(name, n)) for name in names]


def rows_of(build: Path, config: str) -> list[dict]:
    return list(schema.load(config, source=str(build), decode=False))


def oracle(rows: list[dict], wrong: set[str] = frozenset()):
    """A script that answers each row correctly, recognising rows by their captions
    (text configs) or by the bytes of all their clips (video items); rows in ``wrong``
    get prose."""
    by_caption = {tuple(r[schema.CAPTIONS]): r for r in rows if schema.CAPTIONS in r}
    by_clips = {
        tuple(base64.b64encode(c["bytes"]).decode() for c in r[schema.CLIPS]): r
        for r in rows
        if schema.CLIPS in r
    }

    def script(request: fake.Request) -> fake.Reply:
        text = fake.prompt_text(request)
        row = None
        for captions, r in by_caption.items():
            if all(f"Video {k}: {c}" in text for k, c in enumerate(captions, 1)):
                assert row is None or row[schema.ANSWER] == r[schema.ANSWER], "ambiguous rows"
                row = r
        videos = [p for p in fake.media_parts(request) if p["type"] == "video_url"]
        if videos:
            row = by_clips[tuple(p["video_url"]["url"].split(",", 1)[1] for p in videos)]
        assert row is not None, "request matches no row of the build"
        if row[schema.VIDEO_ID] in wrong:
            return fake.Reply(content="Sorry, I am unable to decide.")
        order = row[schema.ANSWER]["order"]
        return fake.Reply(content="<order>" + ", ".join(f"Video {k}" for k in order) + "</order>")

    return script


def cli(argv: list[str]) -> int:
    return splice_main(["run", *argv])


def debug_cli(argv: list[str]) -> int:
    """The command with --debug: a UserError is raised, not printed."""
    return splice_main(["--debug", "run", *argv])
