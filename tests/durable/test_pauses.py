"""Pauses for a person: PAUSE, RunPaused, resume (approve, deny, undecided), decisions bound."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprogram import (
    PAUSE,
    ConfigurationError,
    DecisionError,
    PendingCall,
    RunPaused,
    Runtime,
    UserError,
    agentic_function,
    function,
)
from openprogram.events import ToolCallPaused
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import Decision
from openprogram.testing import FunctionProvider, ScriptedProvider, call

ran: list[str] = []


@function(effect="side_effect", register_globally=False)
def refund(order: str, amount: int) -> str:
    """Refund an order.

    Args:
        order: The order.
        amount: Euros.
    """
    ran.append(f"refund {order} {amount}")
    return f"refunded {amount} for {order}"


@function(register_globally=False)
def lookup(order: str) -> str:
    """Look an order up.

    Args:
        order: The order.
    """
    ran.append(f"lookup {order}")
    return f"{order}: 40 EUR"


@agentic_function(register_globally=False)
def handle(order: str, runtime: Runtime) -> str:
    """Handle one order.

    Args:
        order: The order.
    """
    try:
        return runtime.exec(f"Handle {order}", tools=[lookup, refund])
    except Exception as exc:  # noqa: BLE001 - a user's catch-all must not swallow the pause
        return f"swallowed {type(exc).__name__}"


def model(request: ProviderRequest) -> Any:
    first = request.messages[0].text
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    if first.startswith("Handle"):
        order = first.split()[1]
        if not results:
            return [call("lookup", order=order), call("refund", order=order, amount=40)]
        return "; ".join(r.content for r in results)
    if not results:
        return [call("handle", order="A"), call("handle", order="B")]
    return " | ".join(r.content for r in results)


def manager_needed(tool_call: ToolCall) -> Any:
    if tool_call.name == "refund" and tool_call.arguments["order"] == "B":
        return PAUSE
    return None


def never_asked(tool_call: ToolCall) -> Any:
    raise AssertionError(f"the hook was asked about {tool_call.name}")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def _paused(store: Any, run_id: str = "p") -> RunPaused:
    runtime = Runtime(FunctionProvider(model), store=store, approval=manager_needed)
    with pytest.raises(RunPaused) as caught:
        runtime.exec("Refund A and B", tools=[handle], run_id=run_id)
    return caught.value


def test_a_pause_two_levels_deep_pauses_the_tree_after_its_siblings_finish(store: Any) -> None:
    paused = _paused(store)
    assert paused.run_id == "p"
    (pending,) = paused.pending
    assert isinstance(pending, PendingCall)
    assert (pending.path, pending.tool_name) == ("1.1/0/1.1", "refund")
    assert dict(pending.arguments) == {"order": "B", "amount": 40}
    assert pending.call_id.startswith("call_")
    # Everything else ran (the other branch to its end), and none of it was swallowed.
    assert sorted(ran) == ["lookup A", "lookup B", "refund A 40"]
    stored = asyncio.run(store.load_run("p"))
    assert stored is not None
    assert stored.record.status == "paused"
    assert stored.record.pending == paused.pending
    results = {s.key for s in stored.steps if s.kind == "result"}
    assert results == {"1.0", "1.0/0/1.0", "1.0/0/1.1", "1.1/0/1.0"}


def test_the_paused_call_ends_with_its_own_event(store: Any) -> None:
    runtime = Runtime(FunctionProvider(model), store=store, approval=manager_needed)
    with pytest.raises(RunPaused):
        runtime.exec("Refund A and B", tools=[handle], run_id="e")
    assert runtime.last_run is not None
    paused = runtime.last_run.events_of(ToolCallPaused)
    assert [(e.tool_name, e.path) for e in paused] == [("refund", "1.1/0/1.1"), ("handle", "1.1")]
    assert runtime.last_run.stop_reason == "paused"


def test_an_approved_call_runs_once_without_asking_the_hook_again(store: Any) -> None:
    paused = _paused(store)
    again = FunctionProvider(model)
    runtime = Runtime(again, store=store, approval=never_asked)
    output = runtime.resume("p", approve=[paused.pending[0].call_id], tools=[handle])
    assert output == ("A: 40 EUR; refunded 40 for A | B: 40 EUR; refunded 40 for B")
    assert sorted(ran) == ["lookup A", "lookup B", "refund A 40", "refund B 40"]
    assert len(again.requests) == 2  # B's last turn and the root's; the rest replayed
    # Done: resuming again returns the recorded output and runs nothing.
    quiet = FunctionProvider(model)
    assert Runtime(quiet, store=store).resume("p", tools=[handle]) == output
    assert quiet.requests == []
    assert ran.count("refund B 40") == 1


def test_a_denied_call_never_runs_and_the_model_reads_the_reason(store: Any) -> None:
    paused = _paused(store)
    call_id = paused.pending[0].call_id
    output = Runtime(FunctionProvider(model), store=store).resume(
        "p", deny={call_id: "over the limit; ask finance"}, tools=[handle]
    )
    assert "Tool call 'refund' was denied: over the limit; ask finance" in output
    assert "refund B 40" not in ran


def test_an_undecided_call_waits_again_without_the_hook(store: Any) -> None:
    paused = _paused(store)
    runtime = Runtime(FunctionProvider(model), store=store, approval=never_asked)
    with pytest.raises(RunPaused) as again:
        runtime.resume("p", tools=[handle])
    assert again.value.pending == paused.pending
    assert "refund B 40" not in ran


def test_a_decision_is_bound_to_the_arguments_it_was_shown(store: Any) -> None:
    paused = _paused(store)
    (pending,) = paused.pending
    # A decision for other arguments at that position (as if the call had changed).
    stale = Decision(
        path=pending.path,
        call_id=pending.call_id,
        approved=True,
        reason=None,
        arguments_hash="for-other-arguments",
    )
    asyncio.run(store.record_decisions("p", [stale]))
    with pytest.raises(RunPaused):
        Runtime(FunctionProvider(model), store=store).resume("p", tools=[handle])
    assert "refund B 40" not in ran


def test_resume_refuses_decisions_it_cannot_place(store: Any) -> None:
    paused = _paused(store)
    call_id = paused.pending[0].call_id
    runtime = Runtime(FunctionProvider(model), store=store)
    with pytest.raises(UserError, match="is not a call the run waits on; it waits on: call_"):
        runtime.resume("p", approve=["call_nope"], tools=[handle])
    with pytest.raises(UserError, match="both approved and denied"):
        runtime.resume("p", approve=[call_id], deny={call_id: "no"}, tools=[handle])
    with pytest.raises(UserError, match="holds no run 'nope'"):
        runtime.resume("nope")
    with pytest.raises(ConfigurationError, match="needs the store"):
        Runtime(FunctionProvider(model)).resume("p")
    with pytest.raises(UserError, match="not in the runtime's registry"):
        runtime.resume("p", approve=[call_id])
    # A decision may name the call by its path too.
    assert "refunded 40 for B" in runtime.resume("p", approve=["1.1/0/1.1"], tools=[handle])


def test_pausing_without_a_store_names_store() -> None:
    script = ScriptedProvider([call("refund", order="B", amount=1), "done"])
    runtime = Runtime(script, approval=manager_needed)
    with pytest.raises(ConfigurationError, match=r"store="):
        runtime.exec("x", tools=[refund])
    assert ran == []


def test_a_pick_may_pause_and_resume_runs_it(store: Any) -> None:
    def pick_refund(request: ProviderRequest) -> Any:
        return '{"call": "refund", "args": {"order": "B", "amount": 5}}'

    runtime = Runtime(FunctionProvider(pick_refund), store=store, approval=manager_needed)
    with pytest.raises(RunPaused) as caught:
        runtime.exec("decide", choices=[refund, lookup], run_id="pick")
    (pending,) = caught.value.pending
    assert (pending.call_id, pending.path) == ("decision:refund", "1.0")
    assert ran == []
    resumed = Runtime(FunctionProvider(pick_refund), store=store)
    assert resumed.resume("pick", approve=["decision:refund"]) == "refunded 5 for B"
    assert ran == ["refund B 5"]
    denied = Runtime(FunctionProvider(pick_refund), store=store, approval=manager_needed)
    with pytest.raises(RunPaused):
        denied.exec("decide", choices=[refund, lookup], run_id="pick2")
    with pytest.raises(DecisionError, match="not today"):
        denied.resume("pick2", deny={"decision:refund": "not today"})
