"""The shipped fakes: ScriptedProvider, FunctionProvider, call, text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprogram.events import ProviderRequestSent
from openprogram.exceptions import LLMError
from openprogram.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UserMessage,
)
from openprogram.providers.base import (
    Provider,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
)
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, ScriptExhaustedError, call, text


def request(*messages: Any, tools: tuple[dict[str, Any], ...] = ()) -> ProviderRequest:
    return ProviderRequest(model=None, system=None, messages=tuple(messages), tools=tools)


async def drain(provider: Any, req: ProviderRequest) -> list[Any]:
    return [event async for event in provider.stream(req)]


def final(events: list[Any]) -> AssistantMessage:
    assert isinstance(events[-1], ResponseDone)
    return events[-1].message


def test_call_and_text_build_reply_blocks() -> None:
    assert call("add", a=1, b=2) == ToolCall("", "add", {"a": 1, "b": 2})
    assert call("add", {"a": 1}, b=2).arguments == {"a": 1, "b": 2}
    assert text("hi") == TextContent("hi")


def test_fakes_satisfy_the_provider_protocol() -> None:
    assert isinstance(ScriptedProvider([]), Provider)
    assert isinstance(FunctionProvider(lambda r: "x"), Provider)
    assert ScriptedProvider([]).native_structured_output is True


def test_every_script_form_becomes_one_reply() -> None:
    thought = AssistantMessage((ThinkingContent("hmm"), TextContent("as is")))
    provider = ScriptedProvider(
        ["plain", call("x"), [call("x"), call("y")], [text("looking"), call("z", q=1)], thought]
    )
    replies = [final(asyncio.run(drain(provider, request(UserMessage("go"))))) for _ in range(5)]
    assert replies[0].text == "plain"
    assert replies[0].stop_reason == "stop"
    assert [c.name for c in replies[1].tool_calls] == ["x"]
    assert replies[1].stop_reason == "tool_calls"
    assert [c.name for c in replies[2].tool_calls] == ["x", "y"]
    assert replies[3].text == "looking"
    assert replies[3].tool_calls[0].arguments == {"q": 1}
    assert replies[4].content == thought.content  # as given (only empty usage is filled in)
    ids = [c.id for r in replies for c in r.tool_calls]
    assert ids == ["call_1", "call_2", "call_3", "call_4"]  # unique across the script
    assert provider.remaining == 0


def test_calls_without_ids_get_unique_ones_even_in_assistant_messages() -> None:
    given = AssistantMessage((call("x"), ToolCall("mine", "y", {}), call("z")))
    provider = ScriptedProvider([given])
    reply = final(asyncio.run(drain(provider, request())))
    assert [c.id for c in reply.tool_calls] == ["call_1", "mine", "call_2"]


def test_stream_events_look_like_a_real_provider() -> None:
    provider = ScriptedProvider([[text("Hello world"), call("f", a=1)]])
    events = asyncio.run(drain(provider, request(UserMessage("hi there"))))
    assert isinstance(events[0], RequestSent)
    assert events[0].prompt_size_bytes == len("hi there")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello ", "world"]
    delta = next(e for e in events if isinstance(e, ToolCallDelta))
    assert (delta.index, delta.id, delta.name, delta.arguments_delta) == (
        0,
        "call_1",
        "f",
        '{"a": 1}',
    )
    usage = final(events).usage
    assert usage.input_tokens > 0
    assert usage.output_tokens > 0


def test_scripted_usage_is_kept_when_given() -> None:
    given = AssistantMessage((TextContent("x"),), usage=Usage(input_tokens=7, output_tokens=3))
    assert final(asyncio.run(drain(ScriptedProvider([given]), request()))).usage == given.usage


def test_requests_are_recorded_in_order() -> None:
    provider = ScriptedProvider([call("f"), "done"])

    def f() -> str:
        """F."""
        return "ran"

    Runtime(provider).exec("go", tools=[f])
    assert len(provider.requests) == 2
    assert provider.requests[0].messages == (UserMessage("go"),)
    assert [s["name"] for s in provider.requests[1].tools] == ["f"]


def test_an_exhausted_script_says_which_request_had_no_answer_and_what_it_contained() -> None:
    def f() -> str:
        """F."""
        return "the tool result"

    provider = ScriptedProvider([call("f")])
    with pytest.raises(ScriptExhaustedError) as info:
        Runtime(provider).exec("go", tools=[f])
    message = str(info.value)
    assert "no reply for request #2" in message
    assert "its script has 1 reply" in message
    assert "the result of 'f': 'the tool result'" in message
    assert "tools offered: f" in message
    assert "tool_choice: 'auto'" in message
    assert "Add a reply" in message


def test_an_exception_in_the_script_is_raised_for_that_request() -> None:
    boom = LLMError("overloaded", reason="server")
    provider = ScriptedProvider(["first", boom])
    rt = Runtime(provider)
    assert rt.exec("a", tools=[]) == "first"
    with pytest.raises(LLMError) as info:
        rt.exec("b", tools=[])
    assert info.value is boom


@pytest.mark.parametrize("bad", [42, [call("x"), 3.5]])
def test_a_bad_script_entry_is_rejected_at_construction_with_its_position(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"script\[1\]"):
        ScriptedProvider(["ok", bad])


def test_a_string_script_is_rejected() -> None:
    with pytest.raises(TypeError, match="list of replies"):
        ScriptedProvider("hello")


def test_function_provider_decides_each_turn_sync_or_async() -> None:
    def decide(req: ProviderRequest) -> Any:
        return call("f") if len(req.messages) == 1 else f"saw {len(req.messages)} messages"

    async def decide_async(req: ProviderRequest) -> Any:
        return decide(req)

    def f() -> str:
        """F."""
        return "ok"

    for fn in (decide, decide_async):
        provider = FunctionProvider(fn)
        assert Runtime(provider).exec("go", tools=[f]) == "saw 3 messages"
        assert len(provider.requests) == 2


def test_function_provider_reports_a_bad_reply_with_the_request_number() -> None:
    provider = FunctionProvider(lambda req: {"not": "a reply"})
    with pytest.raises(TypeError, match="request #1"):
        Runtime(provider).exec("go", tools=[])
    with pytest.raises(TypeError, match="callable"):
        FunctionProvider("nope")  # type: ignore[arg-type]


def test_name_and_model_are_configurable() -> None:
    provider = ScriptedProvider(["x"], model="gpt-fake", name="openai")
    rt = Runtime(provider)
    rt.exec("go", tools=[])
    assert provider.requests[0].model == "gpt-fake"
    assert rt.last_run is not None
    assert {e.provider_id for e in rt.last_run.events_of(ProviderRequestSent)} == {"openai"}
