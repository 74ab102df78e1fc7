"""Replay: a run run again with its run_id takes every finished step from its journal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprogram import (
    Budget,
    ConfigurationError,
    JournalDivergence,
    Runtime,
    Tool,
    UserError,
    agentic_function,
    function,
)
from openprogram.events import (
    ProviderRequestSent,
    ProviderResponseReceived,
    ToolCallCompleted,
    ToolCallStarted,
)
from openprogram.messages import AssistantMessage, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import RunStore, Step
from openprogram.testing import FunctionProvider, ScriptedProvider, call

bodies: list[str] = []


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: First.
        b: Second.
    """
    bodies.append(f"add({a},{b})")
    return a + b


@agentic_function(register_globally=False)
def twice(n: int, runtime: Runtime) -> str:
    """Add n to itself with the model's help.

    Args:
        n: The number.
    """
    return runtime.exec(f"double {n}", tools=[add])


def adder(request: ProviderRequest) -> Any:
    """Three additions, then the sum as text; nested execs add n to n once."""
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    first = request.messages[0].text
    if first.startswith("double"):
        n = int(first.split()[1])
        return call("add", a=n, b=n) if not results else f"twice {n} is {results[0].content}"
    if len(results) < 3:
        return call("add", a=len(results), b=10)
    return "sum: " + ", ".join(r.content for r in results)


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    bodies.clear()


def test_a_run_run_again_makes_no_request_and_runs_no_body(store: Any) -> None:
    first = FunctionProvider(adder)
    live = Runtime(first, store=store)
    output = live.exec("go", tools=[add], run_id="r1")
    assert output == "sum: 10, 11, 12"
    assert (len(first.requests), len(bodies)) == (4, 3)
    assert live.last_run is not None

    again = FunctionProvider(adder)
    runtime = Runtime(again, store=store)
    assert runtime.exec("go", tools=[add], run_id="r1") == output
    assert again.requests == []
    assert len(bodies) == 3  # no body ran again
    run = runtime.last_run
    assert run is not None
    assert run.run_id == "r1"
    assert run.events_of(ProviderRequestSent) == []
    replies = run.events_of(ProviderResponseReceived)
    assert len(replies) == 4
    assert all(e.replayed for e in replies)
    assert all(e.replayed for e in run.events_of(ToolCallStarted))
    assert all(e.replayed for e in run.events_of(ToolCallCompleted))
    assert run.iterations == 4
    assert run.usage == live.last_run.usage  # replayed replies carry their recorded usage
    assert run.messages == live.last_run.messages


def test_a_run_goes_on_live_from_its_first_unfinished_step(store: Any) -> None:
    class Crash(Exception):
        pass

    def failing_third_turn(request: ProviderRequest) -> Any:
        if sum(isinstance(m, ToolResultMessage) for m in request.messages) == 2:
            raise Crash("the provider is down")
        return adder(request)

    with pytest.raises(Crash):
        Runtime(FunctionProvider(failing_third_turn), store=store).exec(
            "go", tools=[add], run_id="r2"
        )
    assert bodies == ["add(0,10)", "add(1,10)"]
    again = FunctionProvider(adder)
    output = Runtime(again, store=store).exec("go", tools=[add], run_id="r2")
    assert output == "sum: 10, 11, 12"
    assert bodies == ["add(0,10)", "add(1,10)", "add(2,10)"]  # only the new call ran
    assert len(again.requests) == 2  # the failed turn and the last one


def test_nested_execs_replay_by_position_and_get_run_ids_from_the_root(store: Any) -> None:
    def model(request: ProviderRequest) -> Any:
        if request.messages[0].text.startswith("double"):
            return adder(request)
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        if not results:
            return [call("twice", n=1), call("twice", n=2)]
        return " | ".join(r.content for r in results)

    first = Runtime(FunctionProvider(model), store=store)
    output = first.exec("go", tools=[twice], run_id="tree")
    assert output == "twice 1 is 2 | twice 2 is 4"
    assert first.last_run is not None
    live_ids = {e.run_id for e in first.last_run.events}
    assert live_ids == {"tree", "tree/1.0/0", "tree/1.1/0"}

    again = FunctionProvider(model)
    runtime = Runtime(again, store=store)
    assert runtime.exec("go", tools=[twice], run_id="tree") == output
    assert again.requests == []
    assert sorted(bodies) == ["add(1,1)", "add(2,2)"]  # the first run's, not again


def test_a_run_whose_agentic_call_did_not_finish_runs_its_body_again_and_replays_inside(
    store: Any,
) -> None:
    class Crash(BaseException):
        pass

    crashed: list[bool] = []

    def model(request: ProviderRequest) -> Any:
        first = request.messages[0].text
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        if first.startswith("double") and results and not crashed:
            crashed.append(True)
            raise Crash  # inside the nested exec, after its call ran: a crash of the tree
        if first.startswith("double"):
            return adder(request)
        return call("twice", n=3) if not results else results[0].content

    with pytest.raises(Crash):
        Runtime(FunctionProvider(model), store=store).exec("go", tools=[twice], run_id="t3")
    assert bodies == ["add(3,3)"]
    again = FunctionProvider(model)
    assert Runtime(again, store=store).exec("go", tools=[twice], run_id="t3") == "twice 3 is 6"
    assert bodies == ["add(3,3)"]  # the nested call replayed inside the body run again
    assert len(again.requests) == 2  # the nested exec's last turn, the root's last turn


def test_budgets_count_replayed_steps(store: Any) -> None:
    class Crash(Exception):
        pass

    def failing_third_turn(request: ProviderRequest) -> Any:
        if sum(isinstance(m, ToolResultMessage) for m in request.messages) == 2:
            raise Crash("the provider is down")
        return adder(request)

    with pytest.raises(Crash):
        Runtime(FunctionProvider(failing_third_turn), store=store).exec(
            "go", tools=[add], run_id="b"
        )
    # Two calls are in the journal: a budget of two calls has none left for the third.
    tight = Runtime(FunctionProvider(adder), store=store, budget=Budget(tool_calls=2))
    output = tight.exec("go", tools=[add], run_id="b")
    assert output.startswith("sum: 10, 11, Not run: the budget of this task is nearly spent")
    assert bodies == ["add(0,10)", "add(1,10)"]
    assert tight.last_run is not None
    assert tight.last_run.budget_usage.tool_calls == 2
    assert tight.last_run.budget_usage.model_calls == 4


def test_divergence_is_raised_before_anything_runs_live_and_says_what_differs(
    store: Any,
) -> None:
    Runtime(FunctionProvider(adder), store=store).exec("go", tools=[add], run_id="d")
    other = FunctionProvider(adder)
    with pytest.raises(JournalDivergence) as caught:
        Runtime(other, store=store).exec("go on", tools=[add], run_id="d")
    assert caught.value.path == "1"
    assert "message 0" in str(caught.value)
    assert other.requests == []
    with pytest.raises(JournalDivergence, match="system prompt differs"):
        Runtime(FunctionProvider(adder), store=store, system="Be terse.").exec(
            "go", tools=[add], run_id="d"
        )

    @function(name="add", register_globally=False)
    def add_other(a: int, b: int, c: int = 0) -> int:
        """Add numbers."""
        return a + b + c

    with pytest.raises(JournalDivergence, match=r"tools offered differ.*'add'"):
        Runtime(FunctionProvider(adder), store=store).exec("go", tools=[add_other], run_id="d")
    assert bodies == ["add(0,10)", "add(1,10)", "add(2,10)"]
    # The divergent attempts left the run as it was: the program as it was replays it.
    assert Runtime(FunctionProvider(adder), store=store).exec("go", tools=[add], run_id="d") == (
        "sum: 10, 11, 12"
    )
    record = asyncio.run(store.load_run("d")).record
    assert record.status == "finished"


def test_a_call_recorded_with_other_arguments_diverges(store: Any) -> None:
    Runtime(FunctionProvider(adder), store=store).exec("go", tools=[add], run_id="c")
    asyncio.run(
        store.record_steps("c", [Step(key="1.0", kind="result", fingerprint="x", data="{}")])
    )
    with pytest.raises(JournalDivergence) as caught:
        Runtime(FunctionProvider(adder), store=store).exec("go", tools=[add], run_id="c")
    assert caught.value.path == "1.0"
    assert "'add' was called with other arguments" in str(caught.value)


def test_every_exec_with_a_store_is_a_run_and_says_its_id(store: Any) -> None:
    runtime = Runtime(ScriptedProvider(["hi"]), store=store)
    assert runtime.exec("hello", tools=[]) == "hi"
    assert runtime.last_run is not None
    run_id = runtime.last_run.run_id
    stored = asyncio.run(store.load_run(run_id))
    assert stored is not None
    assert stored.record.status == "finished"
    assert isinstance(store, RunStore)
    assert [r.run_id for r in asyncio.run(store.list_runs())] == [run_id]


def test_run_id_needs_a_store_and_belongs_to_the_outermost_exec(store: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"store=SQLiteStore\(path\)"):
        Runtime(ScriptedProvider(["x"])).exec("hello", tools=[], run_id="r")
    with pytest.raises(UserError, match="run_id"):
        Runtime(ScriptedProvider(["x"]), store=store).exec("hello", tools=[], run_id="a b")

    @function(register_globally=False)
    def nested(runtime: Runtime) -> str:
        """Run an exec with its own run id."""
        return runtime.exec("inner", tools=[], run_id="mine")

    runtime = Runtime(ScriptedProvider([call("nested"), "done"]), store=store)
    assert runtime.exec("outer", tools=[nested]) == "done"
    assert runtime.last_run is not None
    result = next(m for m in runtime.last_run.messages if isinstance(m, ToolResultMessage))
    assert "pass run_id= to the outermost exec only" in result.content


def test_a_conversation_send_is_a_durable_run(store: Any) -> None:
    runtime = Runtime(ScriptedProvider(["hi", "again"]), store=store)
    chat = runtime.conversation("c")
    assert chat.send("hello", tools=[]) == "hi"
    assert chat.send("more", tools=[]) == "again"
    runs = asyncio.run(store.list_runs())
    assert [r.status for r in runs] == ["finished", "finished"]
    assert len(chat.messages) == 4


def _grow(arguments: dict[str, Any]) -> str:
    arguments["items"].append(99)  # a hand-written execute gets the model's own list
    return f"{len(arguments['items'])} items"


grow = Tool(
    name="grow",
    description="Append 99 to the list it is given, in place, and say how long it is.",
    parameters={"type": "object", "properties": {"items": {"type": "array"}}},
    execute=_grow,
)


def test_a_tool_changing_its_arguments_in_place_does_not_change_what_was_journaled(
    store: Any,
) -> None:
    live = Runtime(ScriptedProvider([call("grow", items=[1, 2]), "done"]), store=store)
    assert live.exec("go", tools=[grow], run_id="g1") == "done"
    again = Runtime(ScriptedProvider([]), store=store)  # any request would find no reply
    assert again.exec("go", tools=[grow], run_id="g1") == "done"  # no divergence either
    assert again.last_run is not None
    reply = again.last_run.messages[1]
    assert isinstance(reply, AssistantMessage)
    assert reply.tool_calls[0].arguments == {"items": [1, 2]}  # as the model sent it
