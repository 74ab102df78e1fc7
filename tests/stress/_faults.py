"""Provider faults on the loopback wire: a catalogue, an oracle, and one exec per sequence.

Each fault is one scripted HTTP response in a provider's own wire format. A
*sequence* is what the server answers to successive attempts of one model call.
``expected`` says what the retry rules (docs/providers.md) make of a sequence;
``run_sequence`` drives a real ``Runtime.exec`` through it and reports what
happened, so tests and ``bench/reliability/faults.py`` share one definition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from providers import test_anthropic, test_bedrock, test_gemini, test_openai_responses
from providers._aws import event as aws_event
from providers._server import Reply, WireServer, sse
from providers.test_errors import CASES, _error

from openprogram import LLMError, Runtime
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)

READ_TIMEOUT_S = 0.15
"""Per-read timeout of the providers under test: a ``stall`` outlasts it."""

RETRYABLE = ("429", "500", "503", "529", "stall", "cut_before", "empty")
"""Faults after which the provider tries again (while retries are left)."""
FINAL = ("400", "cut_after", "garbage")
"""Faults that end the call at once: a client error, a reply broken after content
(repeating it would repeat content), a body that is not the wire format."""
FAULTS = ("ok", *RETRYABLE, *FINAL)
KINDS = tuple(sorted(CASES))


def _make(kind: str, url: str) -> Any:
    common: dict[str, Any] = {"model": "m", "backoff_base_s": 0.001, "timeout": READ_TIMEOUT_S}
    if kind == "openai":
        return OpenAIProvider(base_url=f"{url}/v1", api_key="k-test", **common)
    if kind == "openai-responses":
        return OpenAIResponsesProvider(base_url=f"{url}/v1", api_key="k-test", **common)
    if kind == "anthropic":
        return AnthropicProvider(base_url=url, api_key="k-test", **common)
    if kind == "gemini":
        return GeminiProvider(base_url=url, api_key="k-test", **common)
    return BedrockProvider(endpoint_url=url, api_key="k-test", region="us-east-1", **common)


def _partial(kind: str) -> Reply:
    """Content ("ok") arrives, then the connection drops before the reply is complete."""
    if kind == "openai":
        delta = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]}
        return Reply(chunks=[sse(delta)], cut=True)
    if kind == "openai-responses":
        text = test_openai_responses.e(
            "response.output_text.delta",
            output_index=0,
            content_index=0,
            item_id="msg_1",
            delta="ok",
        )
        return Reply(chunks=[sse(text)], cut=True)
    if kind == "anthropic":
        a = test_anthropic
        events = [
            a.start(),
            a.block(0, {"type": "text", "text": ""}),
            a.delta(0, type="text_delta", text="ok"),
        ]
        return Reply(chunks=[sse(*events)], cut=True)
    if kind == "gemini":
        return Reply(chunks=[sse(test_gemini.chunk({"text": "ok"}))], cut=True)
    frames = test_bedrock.text_frames()[:2]  # messageStart, the "ok" delta
    return Reply(chunks=frames, content_type=test_bedrock.STREAM, cut=True)


def _prelude(kind: str) -> bytes:
    return test_bedrock.text_frames()[0] if kind == "bedrock" else b": nothing yet\n\n"


def reply_for(kind: str, fault: str) -> Reply:
    """The server's answer for ``fault`` in ``kind``'s wire format."""
    ok = CASES[kind][1]
    if fault == "ok":
        return ok()
    if fault == "429":
        limited = _error(kind, 429, "slow down")
        limited.headers = {"retry-after-ms": "5"}
        return limited
    if fault in ("500", "503", "529", "400"):
        return _error(kind, int(fault), f"fault {fault}")
    if fault == "stall":
        return Reply(delay_s=READ_TIMEOUT_S * 3)  # no status line before the read timeout
    if fault == "cut_before":
        return Reply(chunks=[_prelude(kind)], cut=True)
    if fault == "cut_after":
        return _partial(kind)
    if fault == "empty":
        return Reply(chunks=[], content_type=test_bedrock.STREAM if kind == "bedrock" else None)
    if fault == "garbage":
        if kind == "bedrock":  # a frame whose CRC cannot match
            frame = aws_event("x", {})[:-4] + b"\0\0\0\0"
            return Reply(chunks=[frame], content_type=test_bedrock.STREAM)
        return Reply(chunks=[b"data: {this is not json\n\n"])
    raise ValueError(f"unknown fault {fault!r}")


@dataclass(frozen=True)
class Expected:
    """What the retry rules make of a sequence."""

    ok: bool
    attempts: int


def expected(faults: list[str], max_retries: int) -> Expected:
    """The oracle: walk the sequence as the rules say (ignoring deadlines)."""
    for number, fault in enumerate(faults, start=1):
        if fault == "ok":
            return Expected(True, number)
        if fault in FINAL or number == max_retries + 1:
            return Expected(False, number)
    raise ValueError("the sequence ran out before the call ended: script more faults")


@dataclass(frozen=True)
class Outcome:
    """What one exec through a sequence did."""

    kind: str
    faults: tuple[str, ...]
    result: str
    """``"ok"``, ``"LLMError:<reason>"``, ``"TimeoutError"`` or ``"<other exception>"``."""
    attempts: int
    """Requests the server received."""
    reported_attempts: int | None
    """``LLMError.attempts``, when one was raised."""
    elapsed_s: float


def run_sequence(
    kind: str,
    faults: list[str],
    *,
    max_retries: int,
    timeout_s: float,
    wire: WireServer | None = None,
) -> Outcome:
    """One ``exec`` whose model calls meet ``faults`` in order."""
    owned = wire is None
    server = wire if wire is not None else WireServer()
    try:
        before = len(server.requests)
        server.push(*(reply_for(kind, f) for f in faults))
        rt = Runtime(_make(kind, server.url), max_retries=max_retries)
        started = time.monotonic()
        reported = None
        try:
            result = "ok" if rt.exec("hi", tools=[], timeout_s=timeout_s) == "ok" else "wrong text"
        except LLMError as err:
            result, reported = f"LLMError:{err.reason}", err.attempts
        except TimeoutError:
            result = "TimeoutError"
        except Exception as exc:  # noqa: BLE001 - reported as a violation, never swallowed
            result = f"{type(exc).__name__}: {exc}"
        elapsed = time.monotonic() - started
        attempts = _settled_count(server) - before
        _drain(server)
    finally:
        if owned:
            server.close()
    return Outcome(kind, tuple(faults), result, attempts, reported, elapsed)


def _settled_count(server: WireServer) -> int:
    """Requests the server has seen, once none is still arriving.

    An exec that gave up at its deadline may have sent a request the server
    thread has not logged yet: wait until the count holds still for 50 ms.
    """
    count, stable_since = len(server.requests), time.monotonic()
    while time.monotonic() - stable_since < 0.05:
        time.sleep(0.01)
        if len(server.requests) != count:
            count, stable_since = len(server.requests), time.monotonic()
    return count


def _drain(server: WireServer) -> None:
    # Replies not used by this exec must not answer the next one.
    with server._lock:
        server._replies.clear()


def violations(
    outcome: Outcome, *, max_retries: int, timeout_s: float, slack_s: float
) -> list[str]:
    """Every rule ``outcome`` breaks; empty when it behaved."""
    found = []
    if outcome.result not in ("ok", "TimeoutError") and not outcome.result.startswith("LLMError:"):
        found.append(f"ended with {outcome.result}")
    if outcome.attempts > max_retries + 1:
        found.append(f"{outcome.attempts} attempts > max_retries + 1 = {max_retries + 1}")
    if outcome.elapsed_s > timeout_s + slack_s:
        found.append(f"took {outcome.elapsed_s:.2f} s > timeout_s {timeout_s} + {slack_s}")
    # An attempt the deadline cut short may never have reached the server: it still counts.
    at_deadline = outcome.elapsed_s >= timeout_s - 0.05
    extra = (0, 1) if at_deadline else (0,)
    reported = outcome.reported_attempts
    if reported is not None and reported - outcome.attempts not in extra:
        found.append(f"LLMError.attempts={reported}, server: {outcome.attempts}")
    return found
