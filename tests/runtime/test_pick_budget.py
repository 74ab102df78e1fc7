"""A ``choices=`` pick is a tool call for the budget, the thread cap and usage.

A picked function is code the model chose to run, exactly as a tool call
is: ``exec(choices=...)`` and ``decision.make`` charge it as one (an agentic
call too when it is an agentic function), a sync pick holds a thread slot
while it runs, and a pick the budget no longer allows raises
``BudgetExceeded`` without running anything. Value and schema options run
no code and are not charged.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from openprogram import Budget, BudgetExceeded, DecisionError, Runtime, agentic_function
from openprogram.decision import make
from openprogram.events import BudgetExhausted
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call

RAN: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def act() -> str:
    """Do something with a side effect."""
    RAN.append("act")
    return "acted"


def first_text(request: ProviderRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text.split("\n", 1)[0]  # choices= adds its menu below the prompt


def turn(request: ProviderRequest) -> int:
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


@pytest.mark.parametrize("how", ["exec", "make"])
def test_a_picked_function_counts_as_a_tool_call_in_usage(how: str) -> None:
    rt = Runtime(ScriptedProvider(['{"call": "act"}']), budget=Budget(tool_calls=5))
    if how == "exec":
        assert rt.exec("go", tools=[], choices=[act, "skip"]) == "acted"
    else:
        assert make("go", [act, "skip"], runtime=rt) == "acted"
    assert RAN == ["act"]
    assert rt.last_run is not None
    usage = rt.last_run.budget_usage
    assert (usage.tool_calls, usage.agentic_calls) == (1, 0)


def test_a_picked_value_runs_no_code_and_is_not_charged() -> None:
    rt = Runtime(ScriptedProvider(['{"call": "skip"}']), budget=Budget(tool_calls=1))
    assert rt.exec("go", tools=[], choices=[act, "skip"]) == "skip"
    assert rt.last_run is not None
    assert rt.last_run.budget_usage.tool_calls == 0


def test_a_pick_beyond_the_tool_call_budget_raises_and_runs_nothing() -> None:
    """The outer tool call spends the only tool call: the pick in its body is refused."""

    @agentic_function(register_globally=False)
    async def agent(runtime: Runtime) -> str:
        """Decide something."""
        return str(await runtime.async_exec("decide", tools=[], choices=[act, "skip"]))

    def model(request: ProviderRequest) -> Any:
        if first_text(request) == "decide":
            return '{"call": "act"}'
        return call("agent") if turn(request) == 0 else "done"

    rt = Runtime(FunctionProvider(model), budget=Budget(tool_calls=1))
    assert rt.exec("go", tools=[agent]) == "done"
    assert RAN == []
    assert rt.last_run is not None
    (result,) = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert "tool_calls" in result.content
    assert rt.last_run.budget_usage.tool_calls == 1
    exhausted = [e.limit for e in rt.last_run.events if isinstance(e, BudgetExhausted)]
    assert exhausted == ["tool_calls"]


def test_self_picking_agentic_functions_stop_at_the_agentic_call_budget() -> None:
    """The second pick is refused; the picked agentic function's failure ends the outer exec."""
    bodies: list[int] = []

    @agentic_function(register_globally=False)
    def again(runtime: Runtime) -> str:
        """Go one level deeper."""
        bodies.append(1)
        return str(runtime.exec("again", tools=[], choices=[again, "stop"]))

    rt = Runtime(ScriptedProvider(['{"call": "again"}'] * 10), budget=Budget(agentic_calls=1))
    with pytest.raises(DecisionError, match=r"BudgetExceeded: .*agentic_calls \(1 of 1\)"):
        rt.exec("go", tools=[], choices=[again, "stop"])
    assert bodies == [1]
    assert rt.last_run is not None
    usage = rt.last_run.budget_usage
    assert (usage.agentic_calls, usage.tool_calls) == (1, 1)


def test_a_pick_the_budget_refuses_raises_budget_exceeded_from_its_exec() -> None:
    def note() -> str:
        """Take a note."""
        return "noted"

    model = ScriptedProvider([call("note"), '{"call": "act"}'])
    rt = Runtime(model, budget=Budget(tool_calls=1))
    with pytest.raises(BudgetExceeded) as caught:
        rt.exec("go", tools=[note], choices=[act, "skip"])
    assert caught.value.limit == "tool_calls"
    assert RAN == []
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "budget"


class Overlap:
    """The most bodies inside ``held()`` at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.peak = 0

    def held(self, seconds: float) -> None:
        with self.lock:
            self.inside += 1
            self.peak = max(self.peak, self.inside)
        time.sleep(seconds)  # long enough for a second pick to arrive while this one runs
        with self.lock:
            self.inside -= 1


def test_sync_picks_hold_a_thread_slot_so_the_thread_cap_bounds_them() -> None:
    overlap = Overlap()

    def slow() -> str:
        """Block a thread for a while."""
        overlap.held(0.2)
        return "slow done"

    @agentic_function(register_globally=False)
    async def agent(n: int, runtime: Runtime) -> str:
        """Decide something.

        Args:
            n: Which agent.
        """
        return str(await runtime.async_exec(f"decide {n}", tools=[], choices=[slow, "skip"]))

    def model(request: ProviderRequest) -> Any:
        if first_text(request).startswith("decide"):
            return '{"call": "slow"}'
        return [call("agent", n=0), call("agent", n=1)] if turn(request) == 0 else "done"

    rt = Runtime(FunctionProvider(model), budget=Budget(threads=1))
    assert rt.exec("go", tools=[agent]) == "done"
    assert overlap.peak == 1
    assert rt.last_run is not None
    usage = rt.last_run.budget_usage
    assert usage.threads == 1
    assert usage.tool_calls == 4  # two agent calls, two picks
