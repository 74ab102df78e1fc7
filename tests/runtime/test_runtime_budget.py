"""Run-tree budgets (docs/budgets.md): one budget for an exec and every exec nested in it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from openprogram import (
    Budget,
    BudgetExceeded,
    OpenProgramError,
    Runtime,
    UserError,
    agentic_function,
)
from openprogram.budget import DEFAULT_AGENTIC_CALLS, DEFAULT_THREADS
from openprogram.events import BudgetExhausted, BudgetWarning, ToolCallFailed
from openprogram.messages import AssistantMessage, ToolResultMessage, Usage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call


def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text


def is_first(request: ProviderRequest) -> bool:
    return len(request.messages) == 1 and isinstance(request.messages[0], UserMessage)


class Gauge:
    """Counts bodies and the most of them running at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies = 0
        self.running = 0
        self.peak = 0

    def __enter__(self) -> None:
        with self.lock:
            self.bodies += 1
            self.running += 1
            self.peak = max(self.peak, self.running)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.running -= 1


def fan_out(width: int, gauge: Gauge) -> tuple[FunctionProvider, Any]:
    """A model that calls ``fan`` ``width`` times in the first reply of every exec."""

    def answer(request: ProviderRequest) -> Any:
        if is_first(request) and request.tools and request.tool_choice != "none":
            return [call("fan", n=i) for i in range(width)]
        return "done"

    @agentic_function(register_globally=False)
    def fan(n: int, runtime: Runtime) -> str:
        """Fan out once more.

        Args:
            n: Which branch.
        """
        with gauge:
            return str(runtime.exec(f"branch {n}"))

    return FunctionProvider(answer), fan


# -- the fan-out of the issue -------------------------------------------------------------------


def test_default_budget_bounds_the_fan_out_of_sync_agentic_functions() -> None:
    gauge = Gauge()
    provider, fan = fan_out(8, gauge)
    rt = Runtime(provider, max_depth=5)
    assert rt.exec("root", tools=[fan]) == "done"  # the top level still answers
    assert gauge.bodies == DEFAULT_AGENTIC_CALLS  # without a budget: 4,680 bodies
    assert gauge.peak <= DEFAULT_THREADS  # without a budget: about a thousand at once
    assert rt.last_run is not None
    spent = rt.last_run.budget_usage
    assert spent.agentic_calls == DEFAULT_AGENTIC_CALLS
    assert spent.model_calls == len(provider.requests)
    assert spent.threads <= DEFAULT_THREADS
    exhausted = rt.last_run.events_of(BudgetExhausted)
    assert [e.limit for e in exhausted] == ["agentic_calls"]
    refused = [e for e in rt.last_run.events_of(ToolCallFailed) if e.failure == "budget"]
    assert refused


# -- model calls -------------------------------------------------------------------------------


def test_near_the_model_call_limit_tools_are_withdrawn_and_the_model_answers() -> None:
    def answer(request: ProviderRequest) -> Any:
        return "final" if request.tool_choice == "none" else call("echo", text="again")

    provider = FunctionProvider(answer)
    rt = Runtime(provider, budget=Budget(model_calls=3))
    assert rt.exec("x", tools=[echo]) == "final"
    assert [r.tool_choice for r in provider.requests] == ["auto", "auto", "none"]
    last = provider.requests[-1].messages[-1]
    assert isinstance(last, UserMessage)
    assert "answer now" in last.text
    assert rt.last_run is not None
    (warning,) = rt.last_run.events_of(BudgetWarning)
    assert (warning.limit, warning.used, warning.allowed) == ("model_calls", 3, 3)
    assert rt.last_run.budget_usage.model_calls == 3


def test_a_model_that_ignores_the_withdrawal_gets_budget_exceeded() -> None:
    provider = FunctionProvider(lambda request: call("echo", text="again"))
    rt = Runtime(provider, budget=Budget(model_calls=2))
    with pytest.raises(BudgetExceeded) as info:
        rt.exec("x", tools=[echo])
    error = info.value
    assert isinstance(error, OpenProgramError)
    assert (error.limit, error.used, error.allowed) == ("model_calls", 2, 2)
    assert error.usage.model_calls == 2
    assert error.usage.tool_calls == 1  # the second reply's call was answered, not run
    assert len(provider.requests) == 2
    assert rt.last_run is not None
    assert [e.limit for e in rt.last_run.events_of(BudgetExhausted)] == ["model_calls"]


def test_nested_execs_share_the_budget_and_every_exec_keeps_its_final_answer() -> None:
    def answer(request: ProviderRequest) -> Any:
        if request.tool_choice == "none":
            return "answered"
        if any(t["name"] == "sub" for t in request.tools):
            return call("sub")
        return call("echo", text="inner")

    @agentic_function(register_globally=False)
    def sub(runtime: Runtime) -> str:
        """Delegate."""
        return str(runtime.exec("inner", tools=[echo]))

    provider = FunctionProvider(answer)
    rt = Runtime(provider, budget=Budget(model_calls=4))
    assert rt.exec("outer", tools=[sub]) == "answered"
    assert len(provider.requests) == 4  # outer, inner (tools), inner (answer), outer (answer)
    results = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]  # type: ignore[union-attr]
    assert [r.content for r in results] == ["answered"]


def test_an_inner_exec_that_hits_the_budget_becomes_that_tools_error_result() -> None:
    inner_script = iter([call("echo", text="1"), call("echo", text="2"), call("echo", text="3")])

    def answer(request: ProviderRequest) -> Any:
        if request.messages[0].text == "outer":  # type: ignore[union-attr]
            return call("sub") if is_first(request) else "outer done"
        return next(inner_script)  # ignores the withdrawal

    @agentic_function(register_globally=False)
    def sub(runtime: Runtime) -> str:
        """Delegate."""
        return str(runtime.exec("inner", tools=[echo], budget=Budget(model_calls=2)))

    rt = Runtime(FunctionProvider(answer))
    assert rt.exec("outer", tools=[sub]) == "outer done"
    assert rt.last_run is not None
    (result,) = [
        m for m in rt.last_run.messages if isinstance(m, ToolResultMessage) and m.tool_name == "sub"
    ]
    assert result.is_error
    assert "BudgetExceeded" in result.content
    assert "model_calls" in result.content


def test_an_inner_budget_only_tightens() -> None:
    def answer(request: ProviderRequest) -> Any:
        if request.messages[0].text == "outer":  # type: ignore[union-attr]
            return call("sub") if is_first(request) else "outer done"
        return "inner done" if request.tool_choice == "none" else call("echo", text="x")

    @agentic_function(register_globally=False)
    def sub(runtime: Runtime) -> str:
        """Delegate."""
        return str(runtime.exec("inner", tools=[echo], budget=Budget(model_calls=1_000)))

    provider = FunctionProvider(answer)
    rt = Runtime(provider, budget=Budget(model_calls=6))
    assert rt.exec("outer", tools=[sub]) == "outer done"
    assert len(provider.requests) == 6  # the outer 6, not the inner 1,000


# -- tokens, seconds, tool calls, threads --------------------------------------------------------


def test_tokens_are_debited_from_usage_and_stop_the_tree() -> None:
    def answer(request: ProviderRequest) -> AssistantMessage:  # ignores the withdrawal
        content = (call("echo", text="x"),)
        return AssistantMessage(content, "tool_calls", Usage(input_tokens=60, output_tokens=40))

    provider = FunctionProvider(answer)
    rt = Runtime(provider, budget=Budget(tokens=250))
    with pytest.raises(BudgetExceeded) as info:
        rt.exec("x", tools=[echo])
    assert info.value.limit == "tokens"
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "budget"
    assert info.value.usage.tokens == 300
    # 100 tokens a call: after the first, 150 left is less than two more calls; tools withdrawn
    assert [r.tool_choice for r in provider.requests] == ["auto", "none", "none"]
    assert rt.last_run is not None
    assert [e.limit for e in rt.last_run.events_of(BudgetWarning)] == ["tokens"]


def test_seconds_bound_the_tree_with_budget_exceeded() -> None:
    async def slow() -> str:
        """Take long."""
        await asyncio.sleep(30)
        return "late"

    rt = Runtime(ScriptedProvider([call("slow"), "never"]), budget=Budget(seconds=0.2))
    with pytest.raises(BudgetExceeded) as info:
        rt.exec("x", tools=[slow])
    assert info.value.limit == "seconds"
    assert info.value.allowed == 0.2
    assert rt.last_run is not None
    assert [e.limit for e in rt.last_run.events_of(BudgetExhausted)] == ["seconds"]


def test_tool_calls_beyond_the_limit_are_error_results_and_tools_are_withdrawn() -> None:
    ran: list[str] = []

    def note(text: str) -> str:
        """Note.

        Args:
            text: What.
        """
        ran.append(text)
        return text

    provider = ScriptedProvider(
        [[call("note", text="a"), call("note", text="b"), call("note", text="c")], "ok"]
    )
    rt = Runtime(provider, budget=Budget(tool_calls=2))
    assert rt.exec("x", tools=[note]) == "ok"
    assert sorted(ran) == ["a", "b"]
    assert rt.last_run is not None
    results = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, False, True]
    assert "allows no more tool_calls" in results[2].content
    assert provider.requests[1].tool_choice == "none"


def test_threads_cap_the_sync_bodies_running_at_once() -> None:
    gauge = Gauge()
    barrier = threading.Event()

    def work(n: int) -> int:
        """Work.

        Args:
            n: Which.
        """
        with gauge:
            barrier.wait(0.05)
            return n

    calls = [call("work", n=i) for i in range(6)]
    rt = Runtime(ScriptedProvider([calls, "ok"]), budget=Budget(threads=2))
    assert rt.exec("x", tools=[work]) == "ok"
    assert gauge.bodies == 6
    assert gauge.peak <= 2
    assert rt.last_run is not None
    assert rt.last_run.budget_usage.threads <= 2


def test_nested_sync_bodies_under_a_small_thread_cap_never_deadlock() -> None:
    gauge = Gauge()
    provider, fan = fan_out(3, gauge)
    rt = Runtime(provider, max_depth=4, budget=Budget(threads=2))
    assert rt.exec("root", tools=[fan]) == "done"
    assert gauge.peak <= 2
    assert gauge.bodies >= 3


# -- usage, options ------------------------------------------------------------------------------


def test_last_run_usage_of_the_outermost_run_covers_the_tree() -> None:
    def answer(request: ProviderRequest) -> AssistantMessage:
        outer = request.messages[0].text == "outer"  # type: ignore[union-attr]
        content = (call("sub"),) if outer and is_first(request) else ()
        return AssistantMessage(content, "stop", Usage(input_tokens=10, output_tokens=1))

    @agentic_function(register_globally=False)
    def sub(runtime: Runtime) -> str:
        """Delegate."""
        return str(runtime.exec("inner", tools=[]))

    rt = Runtime(FunctionProvider(answer))
    rt.exec("outer", tools=[sub])
    assert rt.last_run is not None
    assert rt.last_run.usage.input_tokens == 30  # 2 outer calls + 1 inner call
    assert rt.last_run.budget_usage.tokens == 33


@pytest.mark.parametrize(
    "limits",
    [{"model_calls": 0}, {"tokens": -1}, {"seconds": 0}, {"threads": 1.5}, {"tool_calls": True}],
)
def test_bad_limits_are_clear_errors(limits: dict[str, Any]) -> None:
    with pytest.raises(UserError, match=next(iter(limits))):
        Budget(**limits)


def test_budget_options_must_be_budgets() -> None:
    with pytest.raises(UserError, match="budget"):
        Runtime(ScriptedProvider(["x"]), budget={"model_calls": 3})  # type: ignore[arg-type]
    rt = Runtime(ScriptedProvider(["x"]))
    with pytest.raises(UserError, match="budget"):
        rt.exec("x", tools=[], budget=3)  # type: ignore[arg-type]


def test_a_nested_exec_of_another_runtime_is_bound_by_its_budget_too() -> None:
    def answer(request: ProviderRequest) -> Any:
        return "inner done" if request.tool_choice == "none" else call("echo", text="x")

    inner = Runtime(FunctionProvider(answer), budget=Budget(model_calls=2))

    @agentic_function(register_globally=False)
    def sub() -> str:
        """Delegate to another runtime."""
        return str(inner.exec("inner", tools=[echo]))

    outer = Runtime(ScriptedProvider([call("sub"), "outer done"]))
    assert outer.exec("outer", tools=[sub]) == "outer done"
    assert inner.last_run is not None
    assert inner.last_run.iterations == 2  # its own Runtime(budget=...) applied inside the tree
