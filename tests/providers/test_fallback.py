"""FallbackProvider over the wire: an OpenAI primary on one loopback server, Anthropic behind it.

The primary fails the way real APIs fail (5xx through its retries, a used-up
quota, a long ``Retry-After``, a refused connection); the secondary, on a
second server, answers. Failures that are the request's or the key's fault,
and failures after part of the reply was streamed, pass through untouched.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import FallbackProvider, Runtime
from openprogram.events import (
    ProviderError,
    ProviderFallback,
    ProviderRequestSent,
    ProviderResponseReceived,
)
from openprogram.exceptions import (
    ConfigurationError,
    StructuredOutputError,
    UserError,
)
from openprogram.providers import (
    AnthropicProvider,
    FallbackScheduled,
    OpenAIProvider,
    resolve_provider,
)
from openprogram.testing import FunctionProvider

from . import test_anthropic as an
from ._helpers import drive, fail, kinds, request
from ._server import Reply, WireServer, openai_ok, sse

pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]


@pytest.fixture
def backup() -> Iterator[WireServer]:
    """The second loopback server, speaking Anthropic's wire format."""
    with WireServer() as server:
        yield server


def primary(wire: WireServer, **options: Any) -> OpenAIProvider:
    options.setdefault("max_retries", 1)
    return OpenAIProvider(
        base_url=f"{wire.url}/v1", api_key="k", model="gpt-primary", backoff_base_s=0.001, **options
    )


def secondary(backup: WireServer) -> AnthropicProvider:
    return AnthropicProvider(
        base_url=backup.url, api_key="k", model="claude-backup", backoff_base_s=0.001
    )


def both(wire: WireServer, backup: WireServer, **options: Any) -> FallbackProvider:
    return FallbackProvider([primary(wire), secondary(backup)], **options)


def openai_error(status: int, message: str = "boom", code: str | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "x", "code": code}})


def test_a_5xx_after_the_retries_moves_on_to_the_next_provider(
    wire: WireServer, backup: WireServer
) -> None:
    wire.push(openai_error(500), openai_error(503))
    backup.push(an.text_reply("from the backup"))
    run = drive(both(wire, backup))
    assert run.message.text == "from the backup"
    assert kinds(run.events) == [
        "RequestSent",
        "RetryScheduled",
        "RequestSent",
        "FallbackScheduled",
        "RequestSent",
        "TextDelta",
        "ResponseDone",
    ]
    switch = next(e for e in run.events if isinstance(e, FallbackScheduled))
    assert (switch.failed, switch.provider) == ("openai", "anthropic")
    assert switch.model == "claude-backup"
    assert (switch.error.http_status, switch.error.attempts) == (503, 2)
    assert len(wire.requests) == 2  # the primary's retries ran first
    assert backup.requests[0].json["model"] == "claude-backup"  # its own model, not the primary's


@pytest.mark.parametrize(
    "reply",
    [
        openai_error(429, "You exceeded your current quota", code="insufficient_quota"),
        Reply(429, {"error": {"message": "slow down"}}, headers={"retry-after": "600"}),
    ],
    ids=["quota", "retry-after-too-long"],
)
def test_a_rate_limit_retrying_cannot_cure_falls_back_at_once(
    wire: WireServer, backup: WireServer, reply: Reply
) -> None:
    wire.push(reply)
    backup.push(an.text_reply())
    run = drive(both(wire, backup))
    assert run.message.text == "ok"
    assert len(wire.requests) == 1
    assert run.attempts[0].attempt == 1


def test_a_refused_connection_falls_back(backup: WireServer) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = OpenAIProvider(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="k", model="m", max_retries=0
    )
    backup.push(an.text_reply("still here"))
    run = drive(FallbackProvider([dead, secondary(backup)]))
    switch = next(e for e in run.events if isinstance(e, FallbackScheduled))
    assert switch.error.reason == "transport"
    assert run.message.text == "still here"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_errors_of_the_request_or_the_key_pass_through(
    wire: WireServer, backup: WireServer, status: int
) -> None:
    wire.push(openai_error(status, "not like this"))
    run = fail(both(wire, backup))
    assert run.failure.http_status == status
    assert run.failure.provider == "openai"
    assert backup.requests == []
    assert "FallbackScheduled" not in kinds(run.events)


def test_a_failure_after_streamed_text_is_final(wire: WireServer, backup: WireServer) -> None:
    """Anthropic first this time: its error event after a text delta cannot be undone."""
    broken = Reply(
        chunks=[
            sse(
                an.start(),
                an.block(0, {"type": "text", "text": ""}),
                an.delta(0, type="text_delta", text="partial"),
                an.ev("error", error={"type": "overloaded_error", "message": "Overloaded"}),
            )
        ]
    )
    backup.push(broken)
    wire.push(openai_ok())
    run = fail(FallbackProvider([secondary(backup), primary(wire)]))
    assert (run.failure.reason, run.failure.retryable) == ("server", True)
    assert run.text == "partial"
    assert wire.requests == []  # falling back would have repeated "partial"


def test_when_every_provider_fails_the_last_failure_is_raised_with_the_earlier_ones(
    wire: WireServer, backup: WireServer
) -> None:
    wire.push(openai_error(500), openai_error(500))
    backup.push(
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
    )
    error = fail(both(wire, backup)).failure
    assert (error.provider, error.http_status, error.attempts) == ("anthropic", 529, 5)
    assert error.__notes__ == [
        "FallbackProvider: tried first: [openai:gpt-primary] server HTTP 500 after 2 attempts: boom"
    ]


def test_which_failures_fall_back_is_configurable(wire: WireServer, backup: WireServer) -> None:
    wire.push(openai_error(401, "bad key"))
    backup.push(an.text_reply("backup key works"))
    run = drive(both(wire, backup, fall_back_on={"auth"}))
    assert run.message.text == "backup key works"

    wire.push(openai_error(500), openai_error(500))
    only_503 = both(wire, backup, fall_back_on=lambda error: error.http_status == 503)
    assert fail(only_503).failure.http_status == 500
    assert len(backup.requests) == 1  # only the first test's call reached it


def test_no_fallback_once_the_exec_deadline_has_passed(
    wire: WireServer, backup: WireServer
) -> None:
    wire.push(Reply(200, {}, delay_s=5))  # hangs past the deadline
    req = request(deadline=time.monotonic() + 0.3)
    run = fail(both(wire, backup), req)
    assert (run.failure.reason, run.failure.provider) == ("timeout", "openai")
    assert "FallbackScheduled" not in kinds(run.events)
    assert backup.requests == []


def test_a_cancelled_call_is_not_fallen_back(wire: WireServer, backup: WireServer) -> None:
    wire.push(Reply(200, {}, delay_s=5))
    provider = both(wire, backup)

    async def main() -> None:
        async def consume() -> None:
            async with aclosing(provider.stream(request())) as events:
                async for _ in events:
                    pass

        task = asyncio.create_task(consume())
        while not wire.requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()

    asyncio.run(main())
    assert backup.requests == []


def test_the_runtime_events_name_the_provider_that_answered(
    wire: WireServer, backup: WireServer, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    clean_env.setenv("OPENAI_API_KEY", "k1")
    clean_env.setenv("ANTHROPIC_BASE_URL", backup.url)
    clean_env.setenv("ANTHROPIC_API_KEY", "k2")
    wire.push(openai_error(502, "bad gateway"))
    backup.push(an.text_reply("answered"))
    runtime = Runtime("openai:gpt-primary | anthropic:claude-backup", max_retries=0)
    assert runtime.exec("hi", tools=[]) == "answered"
    assert runtime.last_run is not None
    events = runtime.last_run.events
    error = runtime.last_run.events_of(ProviderError)[0]
    assert (error.provider_id, error.http_status, error.retrying) == ("openai", 502, True)
    fallback = runtime.last_run.events_of(ProviderFallback)[0]
    assert (fallback.failed_provider_id, fallback.provider_id) == ("openai", "anthropic")
    assert (fallback.model_id, fallback.reason, fallback.http_status) == (
        "claude-backup",
        "server",
        502,
    )
    sent = runtime.last_run.events_of(ProviderRequestSent)
    assert [(e.provider_id, e.model_id) for e in sent] == [
        ("openai", "gpt-primary"),
        ("anthropic", "claude-backup"),
    ]
    answered = runtime.last_run.events_of(ProviderResponseReceived)[0]
    assert answered.provider_id == "anthropic"
    assert answered.model_id == "claude-sonnet-4-5-20250929"  # as the backup reported it
    assert events.index(fallback) < events.index(sent[1])


def test_the_next_model_call_starts_with_the_primary_again(
    wire: WireServer, backup: WireServer
) -> None:
    wire.push(openai_error(500), openai_error(500), openai_ok())
    backup.push(an.text_reply("first"))
    provider = both(wire, backup)
    assert drive(provider).message.text == "first"
    assert drive(provider).message.text == "ok"
    assert len(wire.requests) == 3


# -- without the wire ---------------------------------------------------------------------


class Answer(BaseModel):
    city: str


def test_a_structured_output_error_is_not_a_provider_failure() -> None:
    secondary_asked: list[object] = []
    provider = FallbackProvider(
        [
            FunctionProvider(lambda r: "not json", name="a", model="a1"),
            FunctionProvider(lambda r: secondary_asked.append(r) or "{}", name="b", model="b1"),
        ]
    )
    with pytest.raises(StructuredOutputError):
        Runtime(provider).exec("x", tools=[], response_format=Answer)
    assert secondary_asked == []


def test_native_structured_output_only_when_every_provider_has_it() -> None:
    native = FunctionProvider(lambda r: "x", model="a", native_structured_output=True)
    plain = FunctionProvider(lambda r: "x", model="b", native_structured_output=False)
    assert FallbackProvider([native, native]).native_structured_output
    assert not FallbackProvider([native, plain]).native_structured_output


def test_provider_strings_joined_by_a_bar_make_a_fallback_provider() -> None:
    provider = resolve_provider("openai:gpt-4o-mini|anthropic:claude-haiku-4-5")
    assert isinstance(provider, FallbackProvider)
    assert [(p.name, p.model) for p in provider.providers] == [
        ("openai", "gpt-4o-mini"),
        ("anthropic", "claude-haiku-4-5"),
    ]
    assert (provider.name, provider.model) == ("openai", "gpt-4o-mini")


@pytest.mark.parametrize(
    ("make", "error", "text"),
    [
        (lambda: resolve_provider("openai:gpt-4o-mini||anthropic:x"), ConfigurationError, "empty"),
        (lambda: FallbackProvider(["openai:gpt-4o-mini"]), UserError, "at least two"),
        (lambda: FallbackProvider(["openai:m", "anthropic:"]), ConfigurationError, "no model"),
        (lambda: FallbackProvider(["openai:m", 42]), UserError, "not a provider"),  # type: ignore[list-item]
        (
            lambda: FallbackProvider(["openai:m", "anthropic:n"], fall_back_on={"servers"}),  # type: ignore[arg-type]
            UserError,
            "unknown reason(s) ['servers']",
        ),
    ],
)
def test_bad_configurations_are_refused_with_what_to_do(
    make: Any, error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as info:
        make()
    assert text in str(info.value)
