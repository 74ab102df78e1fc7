"""Budgets as a path of the laws: whatever the model does, a run tree stays within its budget.

Hypothesis draws a model (how many agentic and plain sync calls per reply,
how many tool rounds, whether it obeys the withdrawal of its tools), a
``max_depth`` and a budget; the tree of nested sync agentic functions must
end (an answer or ``BudgetExceeded``) without spending more than any limit.
"""

from __future__ import annotations

import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram import Budget, BudgetExceeded, Runtime, agentic_function, function
from openprogram.budget import DEFAULT_AGENTIC_CALLS, DEFAULT_THREADS
from openprogram.events import Event, ProviderRequestSent, TokensConsumed
from openprogram.messages import AssistantMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call

TREES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Tally:
    """Bodies run, by kind, and the most sync bodies running at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.agentic = 0
        self.plain = 0
        self.running = 0
        self.peak = 0

    def enter(self, agentic: bool) -> None:
        with self.lock:
            if agentic:
                self.agentic += 1
            else:
                self.plain += 1
            self.running += 1
            self.peak = max(self.peak, self.running)

    def leave(self) -> None:
        with self.lock:
            self.running -= 1


_limit = st.one_of(st.none(), st.integers(1, 25))
budgets = st.builds(
    Budget,
    model_calls=_limit,
    tool_calls=_limit,
    agentic_calls=_limit,
    tokens=st.one_of(st.none(), st.integers(50, 3_000)),
    threads=st.one_of(st.none(), st.integers(1, 6)),
)


@TREES
@given(
    agentic=st.integers(0, 3),
    plain=st.integers(0, 2),
    rounds=st.integers(1, 2),
    obeys=st.booleans(),
    max_depth=st.integers(2, 4),
    budget=budgets,
)
def test_a_run_tree_never_spends_more_than_its_budget(
    *, agentic: int, plain: int, rounds: int, obeys: bool, max_depth: int, budget: Budget
) -> None:
    tally = Tally()

    def model(request: ProviderRequest) -> Any:
        if request.tool_choice == "none" and obeys:
            return "answer"
        done = sum(isinstance(m, AssistantMessage) for m in request.messages)
        batch = [call("sub")] * agentic + [call("work")] * plain
        return batch if done < rounds and batch else "answer"

    @agentic_function(register_globally=False)
    def sub(runtime: Runtime) -> str:
        """Delegate."""
        tally.enter(agentic=True)
        try:
            return str(runtime.exec("inner"))
        finally:
            tally.leave()

    @function(register_globally=False)
    def work() -> str:
        """Work."""
        tally.enter(agentic=False)
        tally.leave()
        return "worked"

    tokens_at_request: list[int] = []
    consumed = [0]

    def observe(event: Event) -> None:  # called from the threads of the tree
        with tally.lock:
            if isinstance(event, TokensConsumed):
                consumed[0] += event.total_tokens
            elif isinstance(event, ProviderRequestSent):
                tokens_at_request.append(consumed[0])

    provider = FunctionProvider(model)
    rt = Runtime(provider, max_depth=max_depth, budget=budget, observers=[observe])
    try:
        rt.exec("root", tools=[sub, work])
        assert rt.last_run is not None
        spent = rt.last_run.budget_usage
    except BudgetExceeded as error:
        spent = error.usage
    limits = budget.with_defaults()
    model_calls = len(provider.requests)
    assert model_calls == spent.model_calls
    assert model_calls <= (limits.model_calls or model_calls)
    assert tally.agentic + tally.plain == spent.tool_calls
    assert spent.tool_calls <= (limits.tool_calls or spent.tool_calls)
    assert tally.agentic <= (limits.agentic_calls or DEFAULT_AGENTIC_CALLS)
    assert tally.peak <= (limits.threads or DEFAULT_THREADS)
    assert spent.threads <= (limits.threads or DEFAULT_THREADS)
    assert spent.tokens == consumed[0]
    if limits.tokens is not None and limits.threads == 1:
        # One body at a time: no model call starts once the tokens are spent. (Concurrent
        # calls may all start before any of them reports its tokens.)
        assert all(before < limits.tokens for before in tokens_at_request)
