"""The retry and error rules hold for every provider, each with its own error body shape.

Error bodies: OpenAI ``{"error": {"message", "type", "code"}}`` (API reference,
"Error codes"); Anthropic ``{"type": "error", "error": {"type", "message"}}``
("Errors"); Gemini ``{"error": {"code", "message", "status"}}`` (Google API
error model); Bedrock ``{"message"}`` with ``x-amzn-ErrorType`` (AWS JSON
protocol errors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)

from . import test_anthropic, test_bedrock, test_gemini, test_openai_responses
from ._helpers import drive, fail, request
from ._server import Reply, WireServer, openai_ok

pytestmark = pytest.mark.usefixtures("clean_env")


def _error(kind: str, status: int, message: str) -> Reply:
    if kind == "anthropic":
        return Reply(status, {"type": "error", "error": {"type": "api_error", "message": message}})
    if kind == "gemini":
        return Reply(status, {"error": {"code": status, "message": message, "status": "X"}})
    if kind == "bedrock":
        return Reply(status, {"message": message})
    return Reply(status, {"error": {"message": message, "type": "x", "code": None}})


CASES: dict[str, tuple[Callable[[str], Any], Callable[[], Reply]]] = {
    "openai": (
        lambda url: OpenAIProvider(
            base_url=f"{url}/v1", api_key="k", model="m", backoff_base_s=0.001
        ),
        openai_ok,
    ),
    "openai-responses": (
        lambda url: OpenAIResponsesProvider(
            base_url=f"{url}/v1", api_key="k", model="m", backoff_base_s=0.001
        ),
        test_openai_responses.text_reply,
    ),
    "anthropic": (
        lambda url: AnthropicProvider(base_url=url, api_key="k", model="m", backoff_base_s=0.001),
        test_anthropic.text_reply,
    ),
    "gemini": (
        lambda url: GeminiProvider(base_url=url, api_key="k", model="m", backoff_base_s=0.001),
        test_gemini.text_reply,
    ),
    "bedrock": (
        lambda url: BedrockProvider(endpoint_url=url, api_key="k", model="m", backoff_base_s=0.001),
        lambda: test_bedrock.stream_reply(*test_bedrock.text_frames()),
    ),
}


@pytest.fixture(params=sorted(CASES))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_500_is_retried_then_succeeds(wire: WireServer, kind: str) -> None:
    make, ok = CASES[kind]
    wire.push(_error(kind, 500, "internal"), ok())
    run = drive(make(wire.url))
    assert run.message.text == "ok"
    assert [r.error.http_status for r in run.retries] == [500]
    assert run.retries[0].error.provider == kind


def test_a_500_exhausts_the_retries(wire: WireServer, kind: str) -> None:
    make, _ = CASES[kind]
    wire.push(*[_error(kind, 500, "internal")] * 3)
    err = fail(make(wire.url), request("hi", max_retries=2)).failure
    assert (err.reason, err.attempts, err.provider_message) == ("server", 3, "internal")


def test_a_400_is_final(wire: WireServer, kind: str) -> None:
    make, ok = CASES[kind]
    wire.push(_error(kind, 400, "bad field"), ok())
    err = fail(make(wire.url)).failure
    assert (err.reason, err.http_status, err.attempts) == ("invalid_request", 400, 1)
    assert err.provider_message == "bad field"
    assert wire.pending == 1


def test_a_401_is_an_auth_error(wire: WireServer, kind: str) -> None:
    make, _ = CASES[kind]
    wire.push(_error(kind, 401, "bad credentials"))
    err = fail(make(wire.url)).failure
    assert (err.reason, err.retryable) == ("auth", False)


def test_a_429_with_retry_after_is_honoured(wire: WireServer, kind: str) -> None:
    make, ok = CASES[kind]
    limited = _error(kind, 429, "slow down")
    limited.headers = {"retry-after-ms": "50"}
    wire.push(limited, ok())
    run = drive(make(wire.url))
    assert run.retries[0].delay_s == pytest.approx(0.05)
    assert run.retries[0].error.reason == "rate_limit"


def test_a_stream_cut_before_content_is_retried(wire: WireServer, kind: str) -> None:
    make, ok = CASES[kind]
    # Only preliminaries arrive (an SSE comment; Bedrock's messageStart) before the drop.
    prelude = test_bedrock.text_frames()[0] if kind == "bedrock" else b": nothing yet\n\n"
    wire.push(Reply(chunks=[prelude], cut=True), ok())
    run = drive(make(wire.url))
    assert run.message.text == "ok"
    assert run.retries[0].error.reason == "transport"
