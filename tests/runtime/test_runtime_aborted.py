"""An aborted reply (its model call was cancelled) under ``response_format=`` and ``choices=``.

A plain exec ends with the text so far (``test_runtime_loop.py``); an exec whose
result is typed raises instead, on every path that reaches the reply: the main
loop, ``on_max_iterations="finish"``, ``async_exec``, ``stream``, ``decision.make``
and execs nested in agentic functions. Nothing of the aborted reply runs: no
tool call, no pick, no submission.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic
import pytest

from openprogram import (
    DecisionError,
    Runtime,
    StructuredOutputError,
    agentic_function,
    decision,
)
from openprogram.events import AgentEnd
from openprogram.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import StreamFinal, StreamTextDelta
from openprogram.testing import FunctionProvider, ScriptedProvider, call


class City(pydantic.BaseModel):
    name: str
    population: int


PARIS = '{"name": "Paris", "population": 2100000}'
PICK = '{"call": "escalate", "args": {"reason": "lost"}}'


def aborted(*blocks: TextContent | ToolCall) -> AssistantMessage:
    return AssistantMessage(blocks, stop_reason="aborted")


class Calls:
    """Records what ran: the option function and the tool."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def escalate(self, reason: str) -> str:
        """Hand the case to a human."""
        self.ran.append(f"escalate {reason}")
        return f"escalated: {reason}"

    def lookup(self, order_id: str) -> str:
        """Look an order up."""
        self.ran.append(f"lookup {order_id}")
        return f"order {order_id}: lost"


def choices(calls: Calls) -> dict[str, Any]:
    return {"escalate": calls.escalate, "wait": ("waiting", "Ask the customer to wait.")}


def assert_structured_abort(err: StructuredOutputError, raw: str) -> None:
    assert type(err) is StructuredOutputError  # the base class: not a validation problem
    assert err.raw == raw
    assert err.violations == ()
    assert "aborted before a structured answer came back" in str(err)


def assert_decision_abort(err: DecisionError, reply: str) -> None:
    assert err.problem == "aborted"
    assert err.reply == reply
    assert "aborted before a pick came back, so no option was run" in str(err)


def assert_last_run_aborted(rt: Runtime) -> None:
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "aborted"
    end = rt.last_run.events[-1]
    assert isinstance(end, AgentEnd)
    assert end.stop_reason == "aborted"


# -- response_format= ----------------------------------------------------------------------


def test_aborted_reply_raises_even_when_its_text_is_a_valid_answer() -> None:
    calls = Calls()
    provider = ScriptedProvider([aborted(TextContent(PARIS), call("lookup", order_id="A1"))])
    rt = Runtime(provider)
    with pytest.raises(StructuredOutputError) as info:
        rt.exec("Paris?", tools=[calls.lookup], response_format=City)
    assert_structured_abort(info.value, PARIS)
    assert len(provider.requests) == 1  # no repair turn
    assert calls.ran == []  # the aborted reply's tool call did not run
    assert_last_run_aborted(rt)
    assert rt.last_run is not None
    assert not any(isinstance(m, ToolResultMessage) for m in rt.last_run.messages)


@pytest.mark.parametrize(
    ("schema", "partial"),
    [({"type": "integer"}, "4"), ({"type": "array", "items": {"type": "string"}}, '["a", "b"]')],
    ids=["integer", "array"],
)
def test_aborted_reply_raises_for_a_json_schema(schema: dict[str, Any], partial: str) -> None:
    provider = ScriptedProvider([aborted(TextContent(partial))])
    rt = Runtime(provider)
    with pytest.raises(StructuredOutputError) as info:
        rt.exec("Answer.", tools=[], response_format=schema)
    assert_structured_abort(info.value, partial)
    assert len(provider.requests) == 1
    assert_last_run_aborted(rt)


def test_aborted_reply_with_a_complete_submission_is_not_accepted() -> None:
    provider = ScriptedProvider(
        [aborted(TextContent("Here:"), call("submit_result", name="Lyon", population=5))],
        native_structured_output=False,  # the hidden submit tool is the strategy
    )
    rt = Runtime(provider)
    with pytest.raises(StructuredOutputError) as info:
        rt.exec("Lyon?", tools=[], response_format=City)
    assert_structured_abort(info.value, "Here:")
    assert len(provider.requests) == 1
    assert_last_run_aborted(rt)


# -- choices= ------------------------------------------------------------------------------


def test_aborted_reply_with_a_complete_pick_runs_no_option() -> None:
    calls = Calls()
    provider = ScriptedProvider([aborted(TextContent(PICK), call("lookup", order_id="A1"))])
    rt = Runtime(provider)
    with pytest.raises(DecisionError) as info:
        rt.exec("Handle A1.", tools=[calls.lookup], choices=choices(calls))
    assert_decision_abort(info.value, PICK)
    assert calls.ran == []  # neither the picked option nor the tool call ran
    assert len(provider.requests) == 1  # no re-ask
    assert_last_run_aborted(rt)


def test_decision_make_and_async_make_raise_on_an_aborted_reply() -> None:
    calls = Calls()
    rt = Runtime(ScriptedProvider([aborted(TextContent(PICK)), aborted(TextContent(PICK))]))
    with pytest.raises(DecisionError) as info:
        decision.make("Handle A1.", choices(calls), runtime=rt)
    assert_decision_abort(info.value, PICK)
    assert_last_run_aborted(rt)
    with pytest.raises(DecisionError) as info:
        asyncio.run(decision.async_make("Handle A1.", choices(calls), runtime=rt))
    assert_decision_abort(info.value, PICK)
    assert_last_run_aborted(rt)
    assert calls.ran == []


# -- on_max_iterations="finish" -----------------------------------------------------------


def finish_aborts(answer: str) -> FunctionProvider:
    """Calls a tool until the finish call (tool_choice="none"), whose reply is aborted."""

    def reply(request: ProviderRequest) -> object:
        if request.tool_choice == "none":
            return aborted(TextContent(answer))
        return call("lookup", order_id="A1")

    return FunctionProvider(reply)


def test_finish_at_the_cap_with_response_format_raises_on_an_aborted_reply() -> None:
    calls = Calls()
    provider = finish_aborts(PARIS)
    rt = Runtime(provider)
    with pytest.raises(StructuredOutputError) as info:
        rt.exec(
            "Paris?",
            tools=[calls.lookup],
            response_format=City,
            max_iterations=1,
            on_max_iterations="finish",
        )
    assert_structured_abort(info.value, PARIS)
    assert [r.tool_choice for r in provider.requests] == ["auto", "none"]
    assert_last_run_aborted(rt)


def test_finish_at_the_cap_with_choices_raises_and_runs_no_option() -> None:
    calls = Calls()
    provider = finish_aborts(PICK)
    rt = Runtime(provider)
    with pytest.raises(DecisionError) as info:
        rt.exec(
            "Handle A1.",
            tools=[calls.lookup],
            choices=choices(calls),
            max_iterations=1,
            on_max_iterations="finish",
        )
    assert_decision_abort(info.value, PICK)
    assert calls.ran == ["lookup A1"]  # the capped turn's call ran; the pick did not
    assert_last_run_aborted(rt)


# -- async_exec, stream, nested execs -----------------------------------------------------


def test_async_exec_raises_on_an_aborted_reply() -> None:
    calls = Calls()
    rt = Runtime(ScriptedProvider([aborted(TextContent(PARIS)), aborted(TextContent(PICK))]))
    with pytest.raises(StructuredOutputError) as structured:
        asyncio.run(rt.async_exec("Paris?", tools=[], response_format=City))
    assert_structured_abort(structured.value, PARIS)
    assert_last_run_aborted(rt)
    with pytest.raises(DecisionError) as picked:
        asyncio.run(rt.async_exec("Handle A1.", tools=[], choices=choices(calls)))
    assert_decision_abort(picked.value, PICK)
    assert calls.ran == []
    assert_last_run_aborted(rt)


@pytest.mark.parametrize("typed", ["response_format", "choices"])
def test_stream_raises_on_an_aborted_reply_without_a_final_event(typed: str) -> None:
    calls = Calls()
    partial = PARIS if typed == "response_format" else PICK
    rt = Runtime(ScriptedProvider([aborted(TextContent(partial))]))
    options: dict[str, Any] = (
        {"response_format": City} if typed == "response_format" else {"choices": choices(calls)}
    )
    seen: list[Any] = []

    async def collect() -> None:
        async for event in rt.stream("Go.", tools=[], **options):
            seen.append(event)

    error = StructuredOutputError if typed == "response_format" else DecisionError
    with pytest.raises(error, match="aborted before"):
        asyncio.run(collect())
    assert "".join(e.text for e in seen if isinstance(e, StreamTextDelta)) == partial
    assert not any(isinstance(e, StreamFinal) for e in seen)
    assert calls.ran == []
    assert_last_run_aborted(rt)


def test_a_nested_exec_raises_inside_the_agentic_body() -> None:
    calls = Calls()

    @agentic_function(register_globally=False)
    def research(runtime: Runtime) -> str:
        """Research the city, then decide."""
        caught = []
        try:
            runtime.exec("Paris?", tools=[], response_format=City)
        except StructuredOutputError as err:
            caught.append(f"structured: {err.raw}")
        try:
            runtime.exec("Handle A1.", tools=[], choices=choices(calls))
        except DecisionError as err:
            caught.append(f"decision: {err.problem}")
        return "; ".join(caught) or "nothing raised"

    provider = ScriptedProvider(
        [call("research"), aborted(TextContent(PARIS)), aborted(TextContent(PICK)), "Done."]
    )
    rt = Runtime(provider)
    assert rt.exec("Go.", tools=[research]) == "Done."
    result = provider.requests[-1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.content == f"structured: {PARIS}; decision: aborted"
    assert calls.ran == []
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "stop"  # the outer exec finished normally
