"""Loop invariants as hypothesis properties, with the shipped fakes."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram.decorators import agentic_function, function
from openprogram.exceptions import MaxIterationsExceeded
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Runtime
from openprogram.runtime._options import OnMaxIterations
from openprogram.testing import FunctionProvider, ScriptedProvider, call

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@function(register_globally=False)
def ok(n: int) -> int:
    """Return n."""
    return n


@function(register_globally=False)
def fails(n: int) -> int:
    """Always fails."""
    raise RuntimeError(f"failure {n}")


@function(register_globally=False, parallel_safe=False)
def serial(n: int) -> int:
    """Not parallel safe."""
    return n


_one_call = st.one_of(
    st.builds(lambda n: call("ok", n=n), st.integers(0, 3)),
    st.builds(lambda n: call("fails", n=n), st.integers(0, 1)),
    st.builds(lambda n: call("serial", n=n), st.integers(0, 3)),
    st.just(call("missing")),
    st.just(call("ok", n="not a number")),
    st.just(ToolCall("", "ok", {}, arguments_error="Unterminated string")),
)
_turn = st.one_of(st.just("a text answer"), st.lists(_one_call, min_size=1, max_size=5))


@FAST
@given(
    turns=st.lists(_turn, min_size=1, max_size=8),
    max_iterations=st.integers(-2, 9),
    on_max=st.sampled_from(["return", "raise", "finish"]),
    parallel=st.booleans(),
)
def test_loop_invariants(
    turns: list[Any], max_iterations: int, on_max: OnMaxIterations, parallel: bool
) -> None:
    script = [*turns, *(["final"] * 12)]  # enough replies for any cap and the finish call
    provider = ScriptedProvider(script)
    rt = Runtime(provider)
    try:
        rt.exec(
            "go",
            tools=[ok, fails, serial],
            max_iterations=max_iterations,
            on_max_iterations=on_max,
            parallel_tool_calls=parallel,
        )
    except MaxIterationsExceeded:
        assert on_max == "raise"
    run = rt.last_run
    assert run is not None
    cap = max(1, min(50, max_iterations))
    # The number of model calls never exceeds the clamp (+1 only for "finish").
    assert len(provider.requests) <= cap + (1 if on_max == "finish" else 0)
    assert run.iterations == len(provider.requests)
    # Every tool call gets exactly one result, and results follow call order.
    messages = list(run.messages)
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            ids = [c.id for c in message.tool_calls]
            following = messages[index + 1 : index + 1 + len(ids)]
            assert [m.call_id for m in following if isinstance(m, ToolResultMessage)] == ids
    answered = [m.call_id for m in messages if isinstance(m, ToolResultMessage)]
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert sorted(answered) == sorted(asked)
    assert len(set(answered)) == len(answered)


_NAMES = ["a", "b", "c", "d", "e"]
_subset = st.lists(st.sampled_from(_NAMES), unique=True)


def _pool() -> list[Any]:
    return [
        function(lambda: "x", name=n, description=f"Tool {n}.", register_globally=False)
        for n in _NAMES
    ]


@FAST
@given(
    outer_tools=_subset,
    outer_deny=_subset,
    outer_allow=st.one_of(st.none(), _subset),
    inner_deny=_subset,
    inner_allow=st.one_of(st.none(), _subset),
    inner_explicit=st.one_of(st.none(), _subset),
)
def test_a_nested_exec_never_widens_its_parents_menu_or_vetoes(
    *,
    outer_tools: list[str],
    outer_deny: list[str],
    outer_allow: list[str] | None,
    inner_deny: list[str],
    inner_allow: list[str] | None,
    inner_explicit: list[str] | None,
) -> None:
    pool = {t.name: t for t in _pool()}
    menus: dict[str, list[str]] = {}

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Inner loop."""
        tools = [pool[n] for n in inner_explicit] if inner_explicit is not None else None
        return str(
            runtime.exec("inner", tools=tools, tools_deny=inner_deny, tools_allow=inner_allow)
        )

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        menus.setdefault(first.text, [spec["name"] for spec in request.tools])
        if first.text == "outer" and len(request.messages) == 1:
            return call("agent")
        return "done"

    rt = Runtime(FunctionProvider(reply))
    cap = None if outer_allow is None else [*outer_allow, "agent"]  # keep the agent callable
    outer_menu = [agent, *(pool[n] for n in outer_tools)]
    rt.exec("outer", tools=outer_menu, tools_deny=outer_deny, tools_allow=cap)
    outer, inner = set(menus["outer"]), set(menus["inner"])
    assert not inner & (set(outer_deny) | set(inner_deny))  # vetoes are inherited (law 7)
    if cap is not None:
        assert inner <= set(cap)  # so is the outer allow cap, even over an explicit list
    if inner_allow is not None:
        assert inner <= set(inner_allow)
    if inner_explicit is None:
        assert inner <= outer  # the inherited menu is a subset of the parent's
    else:
        assert inner <= set(inner_explicit)
