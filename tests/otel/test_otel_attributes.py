"""GenAI attributes, the data policy, failures and retries on the spans."""

from __future__ import annotations

import asyncio
import doctest
import pickle
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

import openprogram.otel._observer
from openprogram import Budget, BudgetExceeded
from openprogram.decorators import agentic_function, function
from openprogram.events import Event, ProviderResponseReceived, ToolCallCompleted
from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage, TextContent, Usage
from openprogram.otel import OpenTelemetryObserver
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    RetryScheduled,
)
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call

from .conftest import Traced

SECRET_ARG = "s3cret-argument"
SECRET_OUT = "s3cret-output"
SECRET_PROMPT = "s3cret-prompt"
SECRET_ANSWER = "s3cret-answer"


@function(register_globally=False)
def vault(key: str) -> str:
    """Read a value from the vault.

    Args:
        key: Which value.
    """
    return f"{SECRET_OUT} for {key}"


@function(register_globally=False)
def explode(n: int) -> str:
    """Always fails.

    Args:
        n: Anything.
    """
    raise RuntimeError("kaboom")


def attrs(span: ReadableSpan) -> dict[str, Any]:
    assert span.attributes is not None
    return dict(span.attributes)


def every_value(traced: Traced) -> str:
    """All span and span-event attribute values and status texts, as one string."""
    parts: list[str] = []
    for span in traced.spans:
        parts += [str(v) for v in attrs(span).values()]
        parts += [str(span.status.description)]
        for event in span.events:
            parts += [str(v) for v in (event.attributes or {}).values()]
    return "\n".join(parts)


def secret_run(traced: Traced, *, trace_payloads: bool) -> list[Event]:
    events: list[Event] = []
    rt = Runtime(
        ScriptedProvider([call("vault", key=SECRET_ARG), SECRET_ANSWER]),
        observers=[traced.observer, events.append],
        trace_payloads=trace_payloads,
    )
    rt.exec(SECRET_PROMPT, tools=[vault])
    return events


def test_spans_carry_the_genai_attributes(traced: Traced) -> None:
    events = secret_run(traced, trace_payloads=False)
    root = traced.one("invoke_agent")
    assert root.kind is SpanKind.INTERNAL
    assert attrs(root)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs(root)["gen_ai.provider.name"] == attrs(root)["gen_ai.system"] == "scripted"
    assert attrs(root)["gen_ai.request.model"] == "scripted"
    assert attrs(root)["openprogram.tools.offered"] == ("vault",)

    chats = traced.named("chat scripted")
    responses = [e for e in events if isinstance(e, ProviderResponseReceived)]
    assert len(chats) == len(responses) == 2
    for chat, response in zip(chats, responses, strict=True):
        assert chat.kind is SpanKind.CLIENT
        assert attrs(chat)["gen_ai.operation.name"] == "chat"
        assert attrs(chat)["gen_ai.usage.input_tokens"] == response.tokens["input"]
        assert attrs(chat)["gen_ai.usage.output_tokens"] == response.tokens["output"]
        assert attrs(chat)["gen_ai.response.model"] == "scripted"
        assert chat.end_time == int(response.at * 1e9)
    assert attrs(chats[0])["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attrs(root)["gen_ai.usage.input_tokens"] == sum(r.tokens["input"] for r in responses)

    tool = traced.one("execute_tool vault")
    done = next(e for e in events if isinstance(e, ToolCallCompleted))
    assert tool.kind is SpanKind.INTERNAL
    assert attrs(tool)["gen_ai.operation.name"] == "execute_tool"
    assert attrs(tool)["gen_ai.tool.name"] == "vault"
    assert attrs(tool)["gen_ai.tool.call.id"] == done.call_id
    assert attrs(tool)["openprogram.output.hash"] == done.output_hash
    assert tool.status.status_code is StatusCode.UNSET


def test_without_trace_payloads_no_value_reaches_a_span(traced: Traced) -> None:
    secret_run(traced, trace_payloads=False)
    values = every_value(traced)
    for secret in (SECRET_ARG, SECRET_OUT, SECRET_PROMPT, SECRET_ANSWER):
        assert secret not in values
    assert not any(k.startswith("gen_ai.tool.call.a") for s in traced.spans for k in attrs(s))


def test_with_trace_payloads_the_values_use_the_genai_attributes(traced: Traced) -> None:
    secret_run(traced, trace_payloads=True)
    tool = attrs(traced.one("execute_tool vault"))
    assert tool["gen_ai.tool.call.arguments"] == f'{{"key": "{SECRET_ARG}"}}'
    assert tool["gen_ai.tool.call.result"] == f"{SECRET_OUT} for {SECRET_ARG}"
    root = attrs(traced.one("invoke_agent"))
    assert SECRET_PROMPT in root["gen_ai.input.messages"]
    assert '"role": "assistant"' in root["gen_ai.output.messages"]
    assert SECRET_ANSWER in root["gen_ai.output.messages"]


def test_span_times_follow_the_events(traced: Traced) -> None:
    @function(register_globally=False)
    async def nap() -> str:
        """Sleep a little."""
        await asyncio.sleep(0.03)
        return "rested"

    events: list[Event] = []
    rt = Runtime(ScriptedProvider([call("nap"), "ok"]), observers=[traced.observer, events.append])
    rt.exec("rest", tools=[nap])
    tool = traced.one("execute_tool nap")
    assert tool.start_time is not None
    assert tool.end_time is not None
    assert tool.end_time - tool.start_time >= 30_000_000
    assert attrs(tool)["openprogram.duration_ms"] >= 30
    root = traced.one("invoke_agent")
    assert root.start_time == int(events[0].at * 1e9)
    assert root.end_time == int(events[-1].at * 1e9)


def test_a_failing_tool_marks_its_span_without_leaking_the_error_text(traced: Traced) -> None:
    rt = Runtime(ScriptedProvider([call("explode", n=1), "sorry"]), observers=[traced.observer])
    assert rt.exec("go", tools=[explode]) == "sorry"
    tool = traced.one("execute_tool explode")
    assert tool.status.status_code is StatusCode.ERROR
    assert attrs(tool)["error.type"] == "exception"
    assert "kaboom" not in every_value(traced)
    assert traced.one("invoke_agent").status.status_code is StatusCode.UNSET


def test_invalid_arguments_become_a_span_event(traced: Traced) -> None:
    rt = Runtime(ScriptedProvider([call("explode", n="x"), "ok"]), observers=[traced.observer])
    rt.exec("go", tools=[explode])
    tool = traced.one("execute_tool explode")
    assert attrs(tool)["error.type"] == "invalid_arguments"
    (event,) = tool.events
    assert event.name == "openprogram.tool.validation_failed"
    assert "n:" in str((event.attributes or {})["openprogram.violations"])


def test_progress_reports_become_span_events(traced: Traced) -> None:
    from openprogram.tools import ToolContext

    @function(register_globally=False)
    def work(context: ToolContext) -> str:
        """Work and report."""
        context.report("half way")
        return "done"

    rt = Runtime(ScriptedProvider([call("work"), "ok"]), observers=[traced.observer])
    rt.exec("go", tools=[work])
    (event,) = traced.one("execute_tool work").events
    assert event.name == "openprogram.tool.progress"
    assert (event.attributes or {})["openprogram.size_bytes"] == len("half way")


def test_a_provider_failure_fails_the_chat_and_the_run(traced: Traced) -> None:
    boom = LLMError("bad key", reason="auth", http_status=401, provider="scripted")
    rt = Runtime(ScriptedProvider([boom]), observers=[traced.observer])
    with pytest.raises(LLMError):
        rt.exec("go", tools=[])
    root = traced.one("invoke_agent")
    assert root.status.status_code is StatusCode.ERROR
    assert attrs(root)["error.type"] == "error"
    assert attrs(root)["openprogram.stop_reason"] == "error"
    # The fake raises before it reports sending a request: the failure is an event of the run.
    (event,) = root.events
    assert event.name == "openprogram.provider.error"
    assert (event.attributes or {})["error.type"] == "401"


class RetryingProvider:
    """Reports a rate limit and a server error, then answers on the third attempt."""

    name = "anthropic"
    model = "claude-x"
    native_structured_output = False

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        limited = LLMError("slow down", reason="rate_limit", retryable=True, retry_after_s=1.5)
        server = LLMError("overloaded", reason="server", retryable=True, http_status=529)
        yield RequestSent(attempt=1, prompt_size_bytes=10)
        yield RetryScheduled(attempt=1, delay_s=0.0, error=limited)
        yield RequestSent(attempt=2, prompt_size_bytes=10)
        yield RetryScheduled(attempt=2, delay_s=0.0, error=server)
        yield RequestSent(attempt=3, prompt_size_bytes=10)
        message = AssistantMessage((TextContent("finally"),), usage=Usage(4, 2, cached_tokens=3))
        yield ResponseDone(message)


def test_retries_stay_in_one_chat_span_with_events(traced: Traced) -> None:
    Runtime(RetryingProvider(), observers=[traced.observer]).exec("x", tools=[])
    chat = traced.one("chat claude-x")
    assert attrs(chat)["gen_ai.provider.name"] == "anthropic"
    assert attrs(chat)["openprogram.attempts"] == 3
    assert attrs(chat)["gen_ai.usage.cache_read.input_tokens"] == 3
    assert [e.name for e in chat.events] == [
        "openprogram.provider.rate_limited",
        "openprogram.provider.error",
    ]
    assert chat.status.status_code is StatusCode.UNSET


def test_a_stream_that_dies_after_sending_fails_the_open_chat_span(traced: Traced) -> None:
    class Dying(RetryingProvider):
        async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
            yield RequestSent(attempt=1, prompt_size_bytes=10)
            raise LLMError("reset", reason="network", retryable=False, provider="anthropic")

    with pytest.raises(LLMError):
        Runtime(Dying(), observers=[traced.observer]).exec("x", tools=[])
    chat = traced.one("chat claude-x")
    assert chat.status.status_code is StatusCode.ERROR
    assert attrs(chat)["error.type"] == "network"
    assert chat.parent is not None


@pytest.mark.parametrize(
    ("provider_id", "expected"),
    [("gemini", "gcp.gemini"), ("bedrock", "aws.bedrock"), ("openai-responses", "openai")],
)
def test_provider_ids_map_to_well_known_names(
    traced: Traced, provider_id: str, expected: str
) -> None:
    rt = Runtime(FunctionProvider(lambda r: "ok", name=provider_id), observers=[traced.observer])
    rt.exec("x", tools=[])
    assert attrs(traced.one("chat function"))["gen_ai.provider.name"] == expected
    assert attrs(traced.one("chat function"))["openprogram.provider_id"] == provider_id


def test_skipped_calls_are_zero_length_spans(traced: Traced) -> None:
    script = [call("explode", n=1)] * 3 + ["gave up"]
    rt = Runtime(ScriptedProvider(script), observers=[traced.observer])
    rt.exec("go", tools=[explode])
    spans = traced.named("execute_tool explode")
    assert [attrs(s).get("openprogram.skipped") for s in spans] == [
        None,
        None,
        "repeated_failure",
    ]
    assert spans[-1].start_time == spans[-1].end_time


def test_max_iterations_raise_marks_the_run_failed(traced: Traced) -> None:
    rt = Runtime(ScriptedProvider([call("vault", key="k")] * 2), observers=[traced.observer])
    with pytest.raises(Exception, match="max_iterations"):
        rt.exec("go", tools=[vault], max_iterations=1, on_max_iterations="raise")
    root = traced.one("invoke_agent")
    assert attrs(root)["error.type"] == "max_iterations"
    assert [e.name for e in root.events] == ["openprogram.max_iterations"]


def test_a_timed_out_run_ends_its_unfinished_tool_spans(traced: Traced) -> None:
    @function(register_globally=False)
    async def slow() -> str:
        """Take too long."""
        await asyncio.sleep(30)
        return "late"

    rt = Runtime(ScriptedProvider([call("slow"), "never"]), observers=[traced.observer])
    with pytest.raises(TimeoutError):
        # Long enough for the call to start even on a loaded machine, then the deadline fires.
        rt.exec("go", tools=[slow], timeout_s=1.0)
    traced.settled("execute_tool slow", "invoke_agent")
    tool = traced.one("execute_tool slow")
    # The cancelled call now closes with its own ToolCallFailed(failure="cancelled").
    assert (attrs(tool)["error.type"], tool.status.status_code) == ("cancelled", StatusCode.ERROR)
    assert attrs(traced.one("invoke_agent"))["error.type"] == "timeout"
    assert repr(traced.observer) == "OpenTelemetryObserver(open_runs=0, open_calls=0)"


def test_a_body_that_clears_the_context_still_nests_under_the_calling_run(
    traced: Traced,
) -> None:
    inner_rt = Runtime(ScriptedProvider(["inner"]))

    @agentic_function(register_globally=False)
    def isolated(task: str) -> str:
        """Run a nested exec with the OpenTelemetry context cleared.

        Args:
            task: The task.
        """
        token = otel_context.attach(otel_context.Context())
        try:
            return str(inner_rt.exec(task, tools=[]))
        finally:
            otel_context.detach(token)

    rt = Runtime(ScriptedProvider([call("isolated", task="t"), "ok"]), observers=[traced.observer])
    rt.exec("go", tools=[isolated])
    inner, outer = traced.one("invoke_agent isolated"), traced.one("invoke_agent")
    assert inner.parent is not None
    assert outer.context is not None
    assert inner.parent.span_id == outer.context.span_id


def test_the_module_docstring_example_runs() -> None:
    failed, attempted = doctest.testmod(openprogram.otel._observer, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failed == 0


def test_an_observer_on_the_global_provider_pickles_as_a_fresh_one(traced: Traced) -> None:
    copy = pickle.loads(pickle.dumps(OpenTelemetryObserver()))
    assert isinstance(copy, OpenTelemetryObserver)
    assert repr(copy) == "OpenTelemetryObserver(open_runs=0, open_calls=0)"
    with pytest.raises(TypeError, match="own tracer_provider cannot be pickled"):
        pickle.dumps(traced.observer)


def test_budget_warnings_and_exhaustion_are_run_span_events(traced: Traced) -> None:
    @function(register_globally=False)
    def ping() -> str:
        """Ping."""
        return "pong"

    greedy = FunctionProvider(lambda request: call("ping"))  # ignores the withdrawal
    rt = Runtime(greedy, observers=[traced.observer], budget=Budget(model_calls=2))
    with pytest.raises(BudgetExceeded):
        rt.exec("go", tools=[ping])
    run = traced.one("invoke_agent")
    names = [e.name for e in run.events]
    assert "openprogram.budget.warning" in names
    assert "openprogram.budget.exhausted" in names
    exhausted = next(e for e in run.events if e.name == "openprogram.budget.exhausted")
    assert exhausted.attributes is not None
    assert exhausted.attributes["openprogram.budget.limit"] == "model_calls"
    assert (attrs(run)["error.type"], run.status.status_code) == ("budget", StatusCode.ERROR)
