"""Trace events: names, the run tree, the data policy, guarded observers."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from openprogram.decorators import agentic_function, function
from openprogram.events import (
    AgentInvoked,
    Event,
    MaxIterationsReached,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestSent,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallSkipped,
    ToolCallStarted,
    ToolInputValidationFailed,
    ToolsResolved,
)
from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage, TextContent
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    RetryScheduled,
)
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call


@function(register_globally=False)
def weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"Sunny in {city}"


def kinds(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [e.kind for e in events]


def test_a_tool_run_emits_the_documented_sequence() -> None:
    rt = Runtime(ScriptedProvider([call("weather", city="Paris"), "It is sunny."]))
    rt.exec("Weather in Paris?", tools=[weather])
    assert rt.last_run is not None
    assert kinds(rt.last_run.events) == [
        "AgentInvoked",
        "ToolsResolved",
        "ProviderRequestSent",
        "ProviderResponseReceived",
        "TokensConsumed",
        "ToolCallStarted",
        "ToolCallCompleted",
        "ProviderRequestSent",
        "ProviderResponseReceived",
        "TokensConsumed",
        "AgentResponseReceived",
        "AgentEnd",
    ]
    events = rt.last_run.events
    assert {e.run_id for e in events} == {rt.last_run.run_id}
    assert [e.step_id for e in events] == ["s0", "s0"] + ["s1"] * 5 + ["s2"] * 5
    assert all(e.parent_run_id is None for e in events)
    assert all(events[i].at <= events[i + 1].at for i in range(len(events) - 1))


def test_event_fields_follow_section_9() -> None:
    rt = Runtime(ScriptedProvider([call("weather", city="Paris"), "done"]))
    rt.exec("x", tools=[weather], tools_deny=["nothing"])
    assert rt.last_run is not None
    by_kind = {e.kind: e for e in rt.last_run.events}
    resolved = by_kind["ToolsResolved"].to_dict()
    assert resolved["offered"] == ("weather",)
    assert resolved["menu_hash"]
    sent = by_kind["ProviderRequestSent"].to_dict()
    assert (sent["provider_id"], sent["model_id"]) == ("scripted", "scripted")
    assert sent["prompt_size_bytes"] > 0
    received = by_kind["ProviderResponseReceived"].to_dict()
    assert set(received["tokens"]) == {"input", "output", "total"}
    assert received["latency_ms"] >= 0
    started = by_kind["ToolCallStarted"].to_dict()
    assert started["tool_name"] == "weather"
    assert len(started["input_schema_hash"]) == 16
    completed = by_kind["ToolCallCompleted"].to_dict()
    assert completed["output_size_bytes"] == len("Sunny in Paris")
    assert completed["duration_ms"] >= 0
    end = by_kind["AgentEnd"].to_dict()
    assert end["stop_reason"] == "stop"
    assert end["iterations"] == 2
    assert json.dumps([e.to_dict() for e in rt.last_run.events])  # JSON-able for trace sinks


def test_rejected_tools_are_reported_with_their_reasons() -> None:
    rt = Runtime(ScriptedProvider(["ok"]))
    rt.exec("x", tools=[weather], tools_deny=["weather"])
    assert rt.last_run is not None
    resolved = rt.last_run.events_of(ToolsResolved)[0]
    assert resolved.offered == ()
    assert resolved.rejected["weather"].startswith("L5 veto")


def test_validation_failure_event_describes_each_violation() -> None:
    rt = Runtime(ScriptedProvider([call("weather", city=42), "ok"]))
    rt.exec("x", tools=[weather])
    assert rt.last_run is not None
    failed = rt.last_run.events_of(ToolInputValidationFailed)
    assert [e.violation_description for e in failed] == ["city: expected string"]
    terminal = rt.last_run.events_of(ToolCallFailed)
    assert [e.failure for e in terminal] == ["invalid_arguments"]


def test_failure_kinds_are_named() -> None:
    @function(register_globally=False)
    def boom() -> str:
        """Fail."""
        raise ValueError("x")

    guarded = function(lambda: "x", name="guarded", description="Needs approval.",
                       requires_approval=True, register_globally=False)  # fmt: skip
    script = [[call("boom"), call("missing"), call("guarded")], "ok"]
    rt = Runtime(ScriptedProvider(script))
    rt.exec("x", tools=[boom, guarded])
    assert rt.last_run is not None
    failed = rt.last_run.events_of(ToolCallFailed)
    assert sorted(e.failure for e in failed) == ["denied", "exception", "not_in_menu"]


def test_every_call_gets_exactly_one_terminal_event() -> None:
    rt = Runtime(
        ScriptedProvider([[call("weather", city="A"), call("nope"), call("weather", city=1)], "ok"])
    )
    rt.exec("x", tools=[weather])
    assert rt.last_run is not None
    terminal = [
        e
        for e in rt.last_run.events
        if isinstance(e, ToolCallCompleted | ToolCallFailed | ToolCallSkipped)
    ]
    assert sorted(e.call_id for e in terminal) == ["call_1", "call_2", "call_3"]


def test_data_policy_keeps_values_out_of_events_by_default() -> None:
    secret_city = "Atlantis-7f3a"
    rt = Runtime(ScriptedProvider([call("weather", city=secret_city), "The secret answer"]))
    rt.exec(f"Weather in {secret_city}?", tools=[weather])
    assert rt.last_run is not None
    dumped = json.dumps([e.to_dict() for e in rt.last_run.events], default=str)
    assert secret_city not in dumped
    assert "secret answer" not in dumped
    started = rt.last_run.events_of(ToolCallStarted)[0]
    assert started.arguments is None
    assert started.arguments_hash


def test_trace_payloads_opts_in_to_values() -> None:
    rt = Runtime(ScriptedProvider([call("weather", city="Rome"), "Sunny."]), trace_payloads=True)
    rt.exec("Weather in Rome?", tools=[weather])
    assert rt.last_run is not None
    by_kind = {e.kind: e.to_dict() for e in rt.last_run.events}
    assert by_kind["AgentInvoked"]["content"] == "Weather in Rome?"
    assert by_kind["ToolCallStarted"]["arguments"] == {"city": "Rome"}
    assert by_kind["ToolCallCompleted"]["output"] == "Sunny in Rome"
    assert by_kind["AgentResponseReceived"]["text"] == "Sunny."


def test_observers_receive_events_and_a_raising_one_is_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("observer bug")

    rt = Runtime(ScriptedProvider(["ok"]), observers=[broken, lambda e: seen.append(e.kind)])
    with caplog.at_level(logging.ERROR, logger="openprogram"):
        assert rt.exec("x", tools=[]) == "ok"
    assert rt.last_run is not None
    assert seen == kinds(rt.last_run.events)
    assert "observer" in caplog.text
    assert "observer bug" in caplog.text


def test_nested_runs_form_a_tree_and_reach_the_outer_observers() -> None:
    inner_rt = Runtime(ScriptedProvider(["inner answer"]))

    @agentic_function(register_globally=False)
    def helper(runtime: Runtime) -> str:
        """Delegate to another runtime."""
        return str(inner_rt.exec("inner", tools=[]))

    outer_seen: list[Event] = []
    rt = Runtime(ScriptedProvider([call("helper"), "outer answer"]), observers=[outer_seen.append])
    rt.exec("outer", tools=[helper])
    assert rt.last_run is not None
    assert inner_rt.last_run is not None
    outer_id, inner_id = rt.last_run.run_id, inner_rt.last_run.run_id
    inner_events = [e for e in rt.last_run.events if e.run_id == inner_id]
    assert inner_events
    assert all(e.parent_run_id == outer_id for e in inner_events)
    assert kinds(inner_events) == kinds(inner_rt.last_run.events)
    assert [e.run_id for e in outer_seen] == [e.run_id for e in rt.last_run.events]
    started = rt.last_run.events_of(ToolCallStarted)[0]
    inner_start = next(e for e in inner_events if isinstance(e, AgentInvoked))
    assert inner_start.step_id == "s0"
    assert started.step_id == "s1"


class RetryingProvider:
    """A provider whose first two attempts fail retryably, as a real one reports them."""

    name = "flaky"
    model = "m1"
    native_structured_output = False

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        limited = LLMError("slow down", reason="rate_limit", retryable=True, retry_after_s=1.5)
        server = LLMError("overloaded", reason="server", retryable=True, http_status=529)
        yield RequestSent(attempt=1, prompt_size_bytes=100)
        yield RetryScheduled(attempt=1, delay_s=0.0, error=limited)
        yield RequestSent(attempt=2, prompt_size_bytes=100)
        yield RetryScheduled(attempt=2, delay_s=0.2, error=server)
        yield RequestSent(attempt=3, prompt_size_bytes=100)
        yield ResponseDone(AssistantMessage((TextContent("finally"),)))


def test_provider_retries_become_rate_limit_and_error_events() -> None:
    rt = Runtime(RetryingProvider())
    assert rt.exec("x", tools=[]) == "finally"
    assert rt.last_run is not None
    sent = rt.last_run.events_of(ProviderRequestSent)
    assert [e.attempt for e in sent] == [1, 2, 3]
    limited = rt.last_run.events_of(ProviderRateLimited)[0]
    assert limited.retry_after_seconds == 1.5
    error = rt.last_run.events_of(ProviderError)[0]
    assert (error.retrying, error.http_status, error.reason) == (True, 529, "server")


def test_a_stream_without_response_done_is_an_llm_error() -> None:
    class Broken(RetryingProvider):
        async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
            yield RequestSent(attempt=1, prompt_size_bytes=1)

    with pytest.raises(LLMError, match="without a ResponseDone"):
        Runtime(Broken()).exec("x", tools=[])


def test_max_iterations_event_says_what_happens() -> None:
    rt = Runtime(FunctionProvider(lambda r: call("weather", city="x")))
    rt.exec("x", tools=[weather], max_iterations=2, on_max_iterations="return")
    assert rt.last_run is not None
    reached: Any = rt.last_run.events_of(MaxIterationsReached)[0]
    assert (reached.iterations, reached.max_iterations, reached.action) == (2, 2, "return")
