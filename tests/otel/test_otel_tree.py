"""The span tree mirrors the exec tree: nesting, parallel calls, concurrent runs, context."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan

from openprogram import batch
from openprogram.decorators import agentic_function, function
from openprogram.messages import UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call

from .conftest import Traced


@function(register_globally=False)
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: What to look up.
    """
    return f"found {q}"


@agentic_function(register_globally=False)
def research(topic: str, runtime: Runtime) -> str:
    """Research a topic with an inner loop.

    Args:
        topic: The topic.
    """
    return str(runtime.exec(f"inner: {topic}", tools=[lookup]))


@agentic_function(register_globally=False)
async def research_async(topic: str, runtime: Runtime) -> str:
    """Research a topic with an inner loop (async body).

    Args:
        topic: The topic.
    """
    await asyncio.sleep(0.01)  # keep parallel calls overlapping
    return str(await runtime.async_exec(f"inner: {topic}", tools=[lookup]))


def first_text(request: ProviderRequest) -> str:
    message = request.messages[0]
    assert isinstance(message, UserMessage)
    return message.text


def nested_model(agent: str, topics: tuple[str, ...]) -> FunctionProvider:
    """Outer: call ``agent`` once per topic (in one reply), then answer; inner: one lookup."""

    def reply(request: ProviderRequest) -> Any:
        prompt = first_text(request)
        first_turn = len(request.messages) == 1
        if prompt.startswith("inner: "):
            topic = prompt.removeprefix("inner: ")
            return call("lookup", q=topic) if first_turn else f"inner done {topic}"
        if first_turn:
            return [call(agent, topic=topic) for topic in topics]
        return "outer done"

    return FunctionProvider(reply)


INNER = [
    "invoke_agent research",
    [["chat function", []], ["execute_tool lookup", []], ["chat function", []]],
]
INNER_ASYNC = ["invoke_agent research_async", INNER[1]]


def test_nested_exec_spans_form_the_exec_tree(traced: Traced) -> None:
    rt = Runtime(nested_model("research", ("tea",)), observers=[traced.observer])
    assert rt.exec("outer", tools=[research]) == "outer done"
    (root,) = traced.roots()
    assert traced.tree(root) == [
        "invoke_agent",
        [
            ["chat function", []],
            ["execute_tool research", [INNER]],
            ["chat function", []],
        ],
    ]
    assert len({span.context.trace_id for span in traced.spans if span.context}) == 1
    inner = traced.one("invoke_agent research")
    assert inner.attributes is not None
    assert inner.attributes["gen_ai.agent.name"] == "research"
    assert inner.attributes["openprogram.depth"] == 2
    assert root.attributes is not None
    assert inner.attributes["openprogram.parent_run_id"] == root.attributes["openprogram.run_id"]


def _by_argument(traced: Traced, name: str, argument: str) -> dict[str, ReadableSpan]:
    """Spans called ``name`` keyed by one argument of their call (needs ``trace_payloads``)."""
    found = {}
    for span in traced.named(name):
        assert span.attributes is not None
        found[json.loads(str(span.attributes["gen_ai.tool.call.arguments"]))[argument]] = span
    return found


def _assert_each_inner_run_under_its_own_call(traced: Traced, agent: str) -> None:
    outer_calls = _by_argument(traced, f"execute_tool {agent}", "topic")
    lookups = _by_argument(traced, "execute_tool lookup", "q")
    assert sorted(outer_calls) == sorted(lookups) == ["a", "b", "c"]
    for topic, outer_call in outer_calls.items():
        (inner_run,) = traced.children(outer_call)
        assert inner_run.name == f"invoke_agent {agent}"
        # The inner run's own lookup names the same topic: it hangs under the right call.
        assert lookups[topic] in traced.children(inner_run)


def test_parallel_sync_agentic_calls_each_parent_their_own_inner_run(traced: Traced) -> None:
    rt = Runtime(
        nested_model("research", ("a", "b", "c")), observers=[traced.observer], trace_payloads=True
    )
    assert rt.exec("outer", tools=[research]) == "outer done"
    _assert_each_inner_run_under_its_own_call(traced, "research")


def test_parallel_async_agentic_calls_each_parent_their_own_inner_run(traced: Traced) -> None:
    rt = Runtime(
        nested_model("research_async", ("a", "b", "c")),
        observers=[traced.observer],
        trace_payloads=True,
    )
    assert asyncio.run(rt.async_exec("outer", tools=[research_async])) == "outer done"
    _assert_each_inner_run_under_its_own_call(traced, "research_async")


def test_concurrent_runs_get_separate_traces_and_leave_no_state(traced: Traced) -> None:
    rt = Runtime(nested_model("research_async", ("x",)), observers=[traced.observer])

    async def main() -> list[Any]:
        runs = [rt.async_exec("outer", tools=[research_async]) for _ in range(6)]
        return list(await asyncio.gather(*runs))

    assert asyncio.run(main()) == ["outer done"] * 6
    roots = traced.roots()
    assert len(roots) == 6
    assert len({root.context.trace_id for root in roots if root.context}) == 6
    expected = traced.tree(roots[0])
    assert all(traced.tree(root) == expected for root in roots)
    assert repr(traced.observer) == "OpenTelemetryObserver(open_runs=0, open_calls=0)"


def test_a_top_level_exec_joins_the_callers_span_and_restores_the_context(
    traced: Traced,
) -> None:
    tracer = traced.provider.get_tracer("app")
    rt = Runtime(ScriptedProvider(["hi"]), observers=[traced.observer])

    async def main() -> None:
        with tracer.start_as_current_span("request") as request:
            await rt.async_exec("hello", tools=[])
            # the exec span was made current only while the exec ran
            assert trace.get_current_span() is request

    asyncio.run(main())
    request = traced.one("request")
    assert [span.name for span in traced.children(request)] == ["invoke_agent"]
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_spans_opened_in_a_tool_body_nest_under_the_tool_span(traced: Traced) -> None:
    tracer = traced.provider.get_tracer("app")

    @function(register_globally=False)
    def fetch(url: str) -> str:
        """Fetch a page.

        Args:
            url: The address.
        """
        with tracer.start_as_current_span("http get"):
            return "page"

    rt = Runtime(ScriptedProvider([call("fetch", url="u"), "ok"]), observers=[traced.observer])
    rt.exec("go", tools=[fetch])
    assert [span.name for span in traced.children(traced.one("execute_tool fetch"))] == ["http get"]


def test_a_nested_runtime_with_its_own_observer_list_still_joins_the_tree(
    traced: Traced,
) -> None:
    inner_rt = Runtime(ScriptedProvider([call("lookup", q="z"), "inner"]))

    @agentic_function(register_globally=False)
    def delegate(task: str) -> str:
        """Delegate to another runtime.

        Args:
            task: The task.
        """
        return str(inner_rt.exec(task, tools=[lookup]))

    outer = ScriptedProvider([call("delegate", task="t"), "outer"])
    Runtime(outer, observers=[traced.observer]).exec("go", tools=[delegate])
    (root,) = traced.roots()
    delegate_span = traced.one("execute_tool delegate")
    assert [span.name for span in traced.children(delegate_span)] == ["invoke_agent delegate"]
    assert traced.tree(root)[0] == "invoke_agent"


def test_each_item_of_a_batch_is_a_trace_of_its_own(traced: Traced) -> None:
    result = batch.map(
        research_async,
        ["a", "b", "c"],
        provider=nested_model("research_async", ()),
        runtime_options={"observers": [traced.observer]},
        concurrency=3,
    )
    assert result.ok
    roots = traced.roots()
    assert [root.name for root in roots] == ["invoke_agent research_async"] * 3
    assert len({root.context.trace_id for root in roots if root.context}) == 3
    assert all(traced.tree(root) == INNER_ASYNC for root in roots)
