"""The one retry owner: which failures are retried, how long it waits, and the deadline.

Driven through ``OpenAIProvider`` (Chat Completions wire, see ``test_openai``);
``test_errors`` checks the same rules for every other provider.
"""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from typing import Any

import httpx
import pytest

from openprogram.providers import OpenAIProvider

from ._helpers import Run, drive, fail, kinds, request
from ._server import Reply, WireServer, openai_ok, sse

pytestmark = pytest.mark.usefixtures("clean_env")

OK = openai_ok()


def error(status: int, message: str = "nope", **headers: str) -> Reply:
    return Reply(
        status, {"error": {"message": message, "type": "x", "code": None}}, headers=headers
    )


def provider(url: str, **options: Any) -> OpenAIProvider:
    options.setdefault("backoff_base_s", 0.001)
    return OpenAIProvider(base_url=f"{url}/v1", api_key="sk-test", model="gpt-4o-mini", **options)


def test_429_waits_as_long_as_retry_after_says(wire: WireServer) -> None:
    wire.push(error(429, "Rate limit reached", **{"retry-after": "1"}), OK)
    run = drive(provider(wire.url))
    assert run.message.text == "ok"
    (retry,) = run.retries
    assert retry.delay_s == 1.0
    assert retry.error.reason == "rate_limit"
    assert retry.error.retry_after_s == 1.0
    assert kinds(run.events)[:3] == ["RequestSent", "RetryScheduled", "RequestSent"]


def test_retry_after_ms_takes_precedence(wire: WireServer) -> None:
    wire.push(error(429, **{"retry-after-ms": "150", "retry-after": "9"}), OK)
    assert drive(provider(wire.url)).retries[0].delay_s == pytest.approx(0.15)


def test_retry_after_as_an_http_date(wire: WireServer) -> None:
    soon = email.utils.formatdate(time.time() + 1, usegmt=True)
    wire.push(error(429, **{"retry-after": soon}), error(429, **{"retry-after": "soon-ish"}), OK)
    run = drive(provider(wire.url))
    dated, garbled = run.retries
    assert 0.0 <= dated.delay_s <= 2.0
    assert dated.error.retry_after_s == dated.delay_s
    assert garbled.error.retry_after_s is None  # an unreadable hint falls back to backoff
    assert run.message.text == "ok"


def test_400_is_not_retried(wire: WireServer) -> None:
    wire.push(error(400, "Invalid 'messages': empty"), OK)
    err = fail(provider(wire.url)).failure
    assert (err.reason, err.http_status, err.attempts, err.retryable) == (
        "invalid_request",
        400,
        1,
        False,
    )
    assert err.provider_message == "Invalid 'messages': empty"
    assert (err.provider, err.model) == ("openai", "gpt-4o-mini")
    assert wire.pending == 1


@pytest.mark.parametrize(
    ("status", "reason"),
    [(401, "auth"), (403, "auth"), (404, "invalid_request"), (422, "invalid_request")],
)
def test_client_errors_are_never_retried(wire: WireServer, status: int, reason: str) -> None:
    wire.push(error(status), OK)
    err = fail(provider(wire.url)).failure
    assert (err.reason, err.attempts) == (reason, 1)


def test_500_is_retried_up_to_the_limit_with_full_jitter(wire: WireServer) -> None:
    wire.push(*[error(500, "internal")] * 4)
    run = fail(provider(wire.url, max_retries=3, backoff_base_s=0.01))
    err = run.error
    assert err is not None
    assert (err.reason, err.retryable, err.attempts, err.http_status) == ("server", True, 4, 500)
    assert "after 4 attempts" in str(err)
    assert [r.attempt for r in run.retries] == [1, 2, 3]
    for retry in run.retries:  # full jitter: uniform in [0, base * 2**(n-1)]
        assert 0.0 <= retry.delay_s <= 0.01 * 2 ** (retry.attempt - 1)
    assert len(wire.requests) == 4


@pytest.mark.parametrize("status", [408, 409, 429, 502, 503, 504])
def test_retryable_statuses(wire: WireServer, status: int) -> None:
    wire.push(error(status), OK)
    run = drive(provider(wire.url))
    assert run.message.text == "ok"
    assert len(run.retries) == 1


def test_insufficient_quota_is_a_rate_limit_that_waiting_does_not_fix(wire: WireServer) -> None:
    wire.push(
        Reply(
            429,
            {
                "error": {
                    "message": "You exceeded your current quota",
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                }
            },
        )
    )
    err = fail(provider(wire.url)).failure
    assert (err.reason, err.retryable, err.attempts) == ("rate_limit", False, 1)


def test_context_length_and_content_filter_are_named(wire: WireServer) -> None:
    wire.push(
        Reply(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        ),
        Reply(
            400,
            {
                "error": {
                    "message": "flagged",
                    "type": "invalid_request_error",
                    "code": "content_filter",
                }
            },
        ),
    )
    first, second = fail(provider(wire.url)).error, fail(provider(wire.url)).failure
    assert first is not None
    assert first.reason == "context_length"
    assert second is not None
    assert second.reason == "content_filter"


def test_a_request_can_lower_the_retry_count(wire: WireServer) -> None:
    wire.push(error(503), error(503), OK)
    err = fail(provider(wire.url), request("hi", max_retries=1)).failure
    assert err.attempts == 2


def test_retry_after_beyond_the_cap_is_returned_not_slept(wire: WireServer) -> None:
    wire.push(error(429, **{"retry-after": "3600"}), OK)
    err = fail(provider(wire.url)).failure
    assert err.retry_after_s == 3600.0
    assert err.attempts == 1
    assert "3600" in str(err)


def test_retry_after_past_the_deadline_is_not_attempted(wire: WireServer) -> None:
    wire.push(error(429, **{"retry-after": "5"}), OK)
    req = request("hi", deadline=time.monotonic() + 2.0)
    err = fail(provider(wire.url), req).failure
    assert err.reason == "rate_limit"
    assert "deadline" in str(err)
    assert wire.pending == 1


def test_malformed_json_is_a_server_error_and_not_retried(wire: WireServer) -> None:
    wire.push(Reply(body="{not json"), OK)
    err = fail(provider(wire.url, stream=False)).failure
    assert (err.reason, err.retryable) == ("server", False)
    assert "malformed JSON" in str(err)


def test_a_malformed_stream_event_is_a_server_error(wire: WireServer) -> None:
    wire.push(Reply(chunks=[b'data: {"choices": [\n\n']), OK)
    err = fail(provider(wire.url)).failure
    assert err.reason == "server"
    assert "malformed JSON" in str(err)


def test_a_slow_server_hits_the_deadline_instead_of_hanging(wire: WireServer) -> None:
    wire.push(Reply(delay_s=60, chunks=[]))  # would hold the test for a minute if awaited
    err = fail(provider(wire.url), request("hi", deadline=time.monotonic() + 0.3)).failure
    assert (err.reason, err.retryable) == ("timeout", False)
    assert "timeout_s" in str(err)


def test_a_stream_that_stalls_hits_the_deadline(wire: WireServer) -> None:
    first = sse({"choices": [{"index": 0, "delta": {"content": "slo"}}]})
    wire.push(Reply(chunks=[first, b": keep-alive\n\n"], chunk_delay_s=60))
    err = fail(provider(wire.url), request("hi", deadline=time.monotonic() + 0.5)).failure
    assert err.reason == "timeout"


def test_a_read_timeout_is_retried(wire: WireServer) -> None:
    wire.push(Reply(delay_s=30, chunks=[]), OK)
    run = drive(provider(wire.url, timeout=0.3))
    assert run.retries[0].error.reason == "timeout"
    assert run.retries[0].error.retryable
    assert run.message.text == "ok"


def test_timeout_also_applies_to_an_injected_client(wire: WireServer) -> None:
    wire.push(Reply(delay_s=30, chunks=[]), OK)

    async def main() -> Run:
        run = Run([])
        async with httpx.AsyncClient(timeout=60) as client:
            p = provider(wire.url, client=client, timeout=0.3)
            run.events.extend([e async for e in p.stream(request())])
        return run

    run = asyncio.run(main())
    assert run.retries[0].error.reason == "timeout"
    assert run.message.text == "ok"


def test_a_deadline_already_past_sends_nothing(wire: WireServer) -> None:
    err = fail(provider(wire.url), request("hi", deadline=time.monotonic() - 1)).failure
    assert err.reason == "timeout"
    assert wire.requests == []


@pytest.mark.model_requests  # a real request to a closed loopback port
def test_connection_refused_is_a_transport_error_retried_to_the_limit() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    run = fail(provider(f"http://127.0.0.1:{port}", max_retries=2))
    assert run.error is not None
    assert (run.error.reason, run.error.retryable, run.error.attempts) == ("transport", True, 3)
    assert len(run.retries) == 2
