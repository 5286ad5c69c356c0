"""An OpenAI-compatible chat client that survives rate-limited, flaky or hostile endpoints.

vLLM, SGLang, TGI and the commercial APIs all speak the OpenAI chat API, so one client
covers served open models and closed ones alike. ``ChatCaller`` sends one row's messages
to ``{endpoint}/chat/completions`` and retries it:

- every attempt ends by ``timeout`` seconds of wall-clock time and reads at most
  ``max_bytes`` of the reply, whatever the server does (``http_post``: drips, stalls and
  huge bodies included);
- 429, 408, 409 and 5xx answers, timeouts, dropped connections and bodies that are not
  JSON (cut off) are retried with exponential backoff, honouring the server's
  ``Retry-After``; other 4xx answers and replies that are not chat completions are the
  row's error; 401/403/404 (wrong key, model or URL) stop the run at once since every row
  would fail (``EndpointError``);
- the circuit breaker (``breaker``) stops the run when the endpoint is gone;
- the API key and every credential header become ``***`` (``redact``) in every error text,
  since servers echo requests back.
"""

from __future__ import annotations

import email.utils
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from splice_build.remote.breaker import Breaker, EndpointDown
from splice_build.remote.redact import Redactor, url_secrets
from splice_eval.run import http_post

log = logging.getLogger("splice.run")

# Local servers (vLLM, SGLang) accept any key: without one no Authorization header is sent.
NO_KEY_PLACEHOLDER = "EMPTY"
# A chat completion of a few thousand tokens is a few kB; past this the server is broken.
DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024
RETRY_STATUSES = frozenset({408, 409, 429})  # plus every 5xx
FATAL_STATUSES = frozenset({401, 403, 404})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt k (1-based) waits ``base * 2**(k-1)``, capped.

    A server's ``Retry-After`` replaces the computed wait (capped by ``max_retry_after``,
    so a broken header cannot stall a run for hours). Tests pass a tiny ``base``.
    """

    max_retries: int = 5
    base: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 300.0

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        return min(self.cap, self.base * 2 ** (retry_number - 1))


@dataclass(frozen=True)
class CallResult:
    """What one row's request produced, after all its attempts."""

    raw_output: str | None
    usage: dict[str, Any] | None
    attempts: int
    error: str | None = None
    waits: tuple[float, ...] = ()  # backoff waits between attempts, in seconds
    sent: dict[str, Any] | None = None  # a local model's input, counted (``local.adapters``)


class EndpointError(EndpointDown):
    """The endpoint refuses every request (bad key, model or URL): stop the run."""


@dataclass(frozen=True)
class _Outcome:
    """One attempt: an answer, or an error and whether another attempt may fare better."""

    raw_output: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    transient: bool = False
    retry_after: float | None = None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds the server asks us to wait (``Retry-After``: seconds or an HTTP date;
    ``retry-after-ms`` as OpenAI sends), or None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatCaller:
    """Sends one chat request to ``{endpoint}/chat/completions`` and retries it.

    Each attempt ends by ``timeout`` seconds of wall-clock time and reads at most
    ``max_bytes`` (``http_post``), whatever the server does. Every way a reply can be wrong
    (an error status, a cut-off or non-JSON body, a body that is not a chat completion, no
    choices, no text, not UTF-8, too large) becomes the row's error, retried when another
    attempt may fare better; only a refusal of every request (401/403/404) and an open
    circuit breaker (``breaker``) stop the run. Every error text goes through the
    redactor first, since servers echo requests back.
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        policy: RetryPolicy,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        max_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        generation: dict[str, Any] | None = None,
        breaker: Breaker | None = None,
        redactor: Redactor | None = None,
        sleep: Callable[[float], None] | None = None,
    ):
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.model = model
        self.policy = policy
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.generation = dict(generation or {})
        self.breaker = breaker or Breaker()
        self.redactor = redactor or Redactor()
        self.sleep = sleep
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "splice-run",
        }
        if api_key and api_key != NO_KEY_PLACEHOLDER:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.redactor.add(api_key)
        self.redactor.add_headers(self.headers)
        for secret in url_secrets(endpoint):
            self.redactor.add(secret)

    def __call__(self, messages: list[dict[str, Any]]) -> CallResult:
        body = json.dumps(
            {"model": self.model, "messages": messages, **self.generation}, ensure_ascii=False
        ).encode("utf-8")
        waits: list[float] = []
        attempt = 0
        while True:
            attempt += 1
            outcome = self._attempt(body)
            if outcome.error is None:
                return CallResult(outcome.raw_output, outcome.usage, attempt, None, tuple(waits))
            if not outcome.transient or attempt > self.policy.max_retries:
                return CallResult(None, outcome.usage, attempt, outcome.error, tuple(waits))
            wait_s = self.policy.delay(attempt, outcome.retry_after)
            log.debug("attempt %d failed (%s); retrying in %.2fs", attempt, outcome.error, wait_s)
            waits.append(wait_s)
            if self.sleep is not None:
                self.sleep(wait_s)
            else:
                self.breaker.stopped.wait(wait_s)  # a stopping run wakes the sleepers
            self.breaker.check()

    def _attempt(self, body: bytes) -> _Outcome:
        handle = self.breaker.start(http_post.Attempt())
        try:
            reply = http_post.post(
                self.url,
                body,
                self.headers,
                timeout=self.timeout,
                max_bytes=self.max_bytes,
                attempt=handle,
            )
        except http_post.HttpFailure as failure:
            error = self.redactor.text(str(failure))
            if failure.kind == http_post.OVERSIZE:  # the server is there, answering too much
                self.breaker.heard()
                return _Outcome(error=error, transient=False)
            self.breaker.failed(failure.kind == http_post.CONNECT, error)
            self.breaker.check()
            return _Outcome(error=error, transient=True)
        finally:
            self.breaker.end(handle)
        self.breaker.heard()
        return self._read_reply(reply)

    def _read_reply(self, reply: http_post.HttpReply) -> _Outcome:
        if reply.status != 200:
            message = self._server_message(reply.body)
            if reply.status in FATAL_STATUSES:
                reason = (
                    f"endpoint answered HTTP {reply.status} ({message}); "
                    "check --endpoint, --model and the API key variable"
                )
                self.breaker.stop(reason)
                raise EndpointError(reason)
            transient = reply.status in RETRY_STATUSES or reply.status >= 500
            return _Outcome(
                error=f"HTTP {reply.status}: {message}",
                transient=transient,
                retry_after=retry_after_seconds(reply.headers) if transient else None,
            )
        try:
            text = reply.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _Outcome(error=f"answer body is not UTF-8 ({exc.reason} at byte {exc.start})")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:  # most often a body cut off in transit
            return _Outcome(
                error=f"answer body is not valid JSON ({exc.msg} at character {exc.pos} of "
                f"{len(text)}): {self._snippet(text)}",
                transient=True,
            )
        return self._completion(data)

    def _completion(self, data: Any) -> _Outcome:
        """The text of a chat completion, or what is wrong with its shape."""
        if not isinstance(data, dict):
            return _Outcome(error=f"answer is JSON {type(data).__name__}, not a chat completion")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        usage = self.redactor.value(usage) if usage else None
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            why = "has no choices" if not choices else "has 'choices' that is not a list"
            if isinstance(data.get("error"), (dict, str)):
                why += f" (error: {self._server_message(json.dumps(data['error']).encode())})"
            return _Outcome(usage=usage, error=f"answer {why}")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            return _Outcome(usage=usage, error="answer's first choice has no message object")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            texts = [p.get("text") for p in content if isinstance(p, dict)]
            content = "".join(t for t in texts if isinstance(t, str)) if any(texts) else None
        if content is None:
            return _Outcome(usage=usage, error="answer's message has no content")
        if not isinstance(content, str):
            return _Outcome(usage=usage, error=f"answer's content is {type(content).__name__}")
        return _Outcome(raw_output=self.redactor.text(_valid_text(content)), usage=usage)

    def _server_message(self, body: bytes) -> str:
        """The server's own words for an error, redacted first, then shortened."""
        text = body.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            inner = data.get("error")
            found = data.get("message") or (
                inner.get("message") if isinstance(inner, dict) else inner
            )
            if found:
                text = found if isinstance(found, str) else json.dumps(found)
        return self._snippet(text) or "no message"

    def _snippet(self, text: str, limit: int = 300) -> str:
        text = " ".join(self.redactor.text(_valid_text(text)).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _valid_text(text: str) -> str:
    """``text`` without lone surrogates (JSON's ``"\\ud83d"``, an emoji cut in half by
    max_tokens), which no UTF-8 file can hold: each becomes ``?``."""
    return text.encode("utf-8", errors="replace").decode("utf-8")
