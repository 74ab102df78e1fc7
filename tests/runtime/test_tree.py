"""runtime.tree(): several top-level execs as one run tree (one budget, one record)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from openprogram import Budget, BudgetExceeded, Runtime, UserError, agentic_function, function
from openprogram.context import get_frame
from openprogram.events import AgentEnd, AgentInvoked
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import RunResult, TreeResult
from openprogram.testing import FunctionProvider, ScriptedProvider, call


@function(register_globally=False)
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny"


@agentic_function(register_globally=False)
async def plan_trip(city: str, runtime: Runtime) -> str:
    """Plan a weekend in a city.

    Args:
        city: Where to go.
    """
    return await runtime.async_exec(f"Plan a weekend in {city}.", tools=[get_weather])


@agentic_function(register_globally=False)
def plan_trip_sync(city: str, runtime: Runtime) -> str:
    """Plan a weekend in a city (a sync body).

    Args:
        city: Where to go.
    """
    return runtime.exec(f"Plan a weekend in {city}.", tools=[get_weather])


def polite(request: ProviderRequest) -> Any:
    """Looks the weather up, then answers; answers at once when tools are withdrawn."""
    if request.tool_choice == "none":
        return "A short plan."
    if len(request.messages) == 1:
        return call("get_weather", city=request.messages[0].text.split()[-1].rstrip("."))
    return "A plan."


def greedy(request: ProviderRequest) -> Any:
    """Calls a tool on every turn, withdrawn or not."""
    return call("get_weather", city="Paris")


CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv"]


# -- the issue: a budget over a fan-out written in Python ---------------------------------------


def test_a_fan_out_under_a_tree_shares_the_runtimes_budget() -> None:
    """5 agentic calls of 2 model calls each: the tree stops at the budget's 6."""
    provider = FunctionProvider(greedy)
    runtime = Runtime(provider, budget=Budget(model_calls=6))

    async def main() -> list[Any]:
        async with runtime.tree():
            return await asyncio.gather(*(plan_trip(c) for c in CITIES), return_exceptions=True)

    outcomes = asyncio.run(main())
    assert len(provider.requests) == 6  # not 10: the 7th model call is refused
    assert any(isinstance(o, BudgetExceeded) for o in outcomes)
    assert all(isinstance(o, BudgetExceeded) for o in outcomes)  # greedy never answers


def test_the_same_fan_out_answers_within_the_budget_when_the_model_obeys() -> None:
    provider = FunctionProvider(polite)
    runtime = Runtime(provider, budget=Budget(model_calls=6))

    async def main() -> tuple[list[Any], TreeResult[None]]:
        async with runtime.tree() as tree:
            outcomes = await asyncio.gather(*(plan_trip(c) for c in CITIES), return_exceptions=True)
        return outcomes, tree.result

    outcomes, record = asyncio.run(main())
    answered = [o for o in outcomes if isinstance(o, str)]
    assert answered
    assert len(provider.requests) == record.budget_usage.model_calls == 6
    assert {type(o) for o in outcomes} <= {str, BudgetExceeded}
    # every exec that started is in the record; its usage and events add up
    assert len(record.runs) == len(outcomes)
    assert record.usage == sum((r.usage for r in record.runs[1:]), record.runs[0].usage)
    assert record.events == tuple(e for r in record.runs for e in r.events)
    assert len(record.events_of(AgentEnd)) == len(record.runs)


def test_a_trees_budget_tightens_the_runtimes_and_never_widens_it() -> None:
    provider = FunctionProvider(polite)
    runtime = Runtime(provider, budget=Budget(model_calls=4))
    with runtime.tree(budget=Budget(model_calls=100)):
        # 2 model calls each; Rome's second is the tree's last: its tools are withdrawn
        assert [plan_trip_sync(c) for c in ("Paris", "Rome")] == ["A plan.", "A short plan."]
        with pytest.raises(BudgetExceeded):
            plan_trip_sync("Oslo")  # the runtime's 4 are spent, whatever the tree allows
    assert len(provider.requests) == 4

    provider = FunctionProvider(greedy)
    runtime = Runtime(provider, budget=Budget(model_calls=100))
    with runtime.tree(budget=Budget(model_calls=3)) as tree:
        with pytest.raises(BudgetExceeded):
            plan_trip_sync("Paris")
        with pytest.raises(BudgetExceeded):
            plan_trip_sync("Rome")
    assert len(provider.requests) == tree.result.budget_usage.model_calls == 3


def test_threads_and_pools_started_in_a_tree_share_its_budget() -> None:
    provider = FunctionProvider(lambda request: "ok")
    runtime = Runtime(provider)
    errors: list[BaseException] = []

    def ask(question: str) -> str:
        try:
            return runtime.exec(question, tools=[])
        except BudgetExceeded as exc:
            errors.append(exc)
            return "refused"

    with runtime.tree(budget=Budget(model_calls=5)) as tree:
        with ThreadPoolExecutor(3) as pool:
            pooled = list(pool.map(ask, [f"q{i}" for i in range(4)]))
        threads = [threading.Thread(target=ask, args=(f"t{i}",)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(provider.requests) == 5  # 7 execs of one model call each, 5 allowed
    assert len(errors) == 2
    assert pooled.count("ok") + pooled.count("refused") == 4
    assert len(tree.result.runs) == 7  # refused execs end too, and are recorded


# -- the record ---------------------------------------------------------------------------------


def test_the_record_holds_every_exec_in_start_order_and_last_run_stays_the_last_exec() -> None:
    runtime = Runtime(ScriptedProvider(["one", "two", "three"]))
    with runtime.tree() as tree:
        assert tree.result.runs == ()
        answers = [runtime.exec(q, tools=[]) for q in ("a", "b")]
        assert [r.output for r in tree.result.runs] == ["one", "two"]  # what finished so far
        answers.append(runtime.exec("c", tools=[]))
    assert answers == ["one", "two", "three"]
    record = tree.result
    assert [r.output for r in record.runs] == answers
    assert record.output is None
    assert runtime.last_run is record.runs[-1]  # last_run is still the last exec that ended
    assert record.budget_usage.model_calls == 3
    assert tree.result is record  # frozen at the block's end


def test_an_agentic_function_run_from_python_returns_its_output_and_its_own_record() -> None:
    runtime = Runtime(FunctionProvider(polite))
    with runtime:
        result = plan_trip_sync.run("Paris")
    assert result.output == "A plan."
    (run,) = result.runs
    assert isinstance(run, RunResult)
    assert (run.iterations, run.output, result.budget_usage.model_calls) == (2, "A plan.", 2)
    assert result.budget_usage.tool_calls == 1
    assert result.usage == run.usage

    explicit = plan_trip.run("Rome", runtime=Runtime(FunctionProvider(polite)))  # async, run sync
    assert (explicit.output, len(explicit.runs)) == ("A plan.", 1)


def test_arun_gives_each_call_of_a_gathered_fan_out_its_own_record() -> None:
    provider = FunctionProvider(polite)
    runtime = Runtime(provider)

    async def main() -> tuple[list[TreeResult[str]], TreeResult[None]]:
        async with runtime.tree(budget=Budget(model_calls=20)) as tree:
            results = await asyncio.gather(
                *(plan_trip.arun(c) for c in CITIES[:3]),
                plan_trip_sync.arun("Kyiv"),  # a sync body runs on a worker thread
            )
        return results, tree.result

    results, record = asyncio.run(main())
    assert [r.output for r in results] == ["A plan."] * 4
    for result in results:
        (run,) = result.runs
        assert result.budget_usage.model_calls == run.iterations == 2
        assert all(e.run_id == run.run_id for e in result.events)
    assert len(record.runs) == 4  # the calls' trees are nodes of the fan-out's
    assert record.budget_usage.model_calls == len(provider.requests) == 8


def test_a_call_raising_in_run_propagates() -> None:
    @agentic_function(register_globally=False)
    def broken(runtime: Runtime) -> str:
        """Fails."""
        raise ValueError("nope")

    with Runtime(ScriptedProvider([])), pytest.raises(ValueError, match="nope"):
        broken.run()


def test_tree_call_runs_any_function_as_one_tree() -> None:
    runtime = Runtime(ScriptedProvider(["x", "y"]))

    def pipeline(a: str, b: str) -> str:
        return runtime.exec(a, tools=[]) + runtime.exec(b, tools=[])

    result = runtime.tree(budget=Budget(model_calls=2)).call(pipeline, "a", "b")
    assert (result.output, len(result.runs), result.budget_usage.model_calls) == ("xy", 2, 2)

    async def async_pipeline() -> str:
        return await runtime.async_exec("c", tools=[])

    runtime = Runtime(ScriptedProvider(["z"]))
    assert runtime.tree().call(async_pipeline).output == "z"


# -- nesting, other runtimes, the end of the block ------------------------------------------------


def test_nested_trees_tighten_and_their_execs_join_the_outer_record() -> None:
    provider = FunctionProvider(lambda request: "ok")
    runtime = Runtime(provider)
    with runtime.tree(budget=Budget(model_calls=10)) as outer:
        runtime.exec("first", tools=[])
        with runtime.tree(budget=Budget(model_calls=2)) as inner:
            runtime.exec("a", tools=[])
            runtime.exec("b", tools=[])
            with pytest.raises(BudgetExceeded):
                runtime.exec("c", tools=[])
        runtime.exec("last", tools=[])
    assert [r.messages[0].text for r in inner.result.runs] == ["a", "b", "c"]
    assert [r.messages[0].text for r in outer.result.runs] == ["first", "a", "b", "c", "last"]
    assert (inner.result.budget_usage.model_calls, outer.result.budget_usage.model_calls) == (2, 4)


def test_an_exec_of_another_runtime_joins_the_tree_bound_by_its_own_budget_too() -> None:
    provider = FunctionProvider(lambda request: "ok")
    first = Runtime(provider)
    second = Runtime(provider, budget=Budget(model_calls=1))
    with first.tree(budget=Budget(model_calls=3)) as tree:
        first.exec("a", tools=[])
        second.exec("b", tools=[])
        first.exec("c", tools=[])
        with pytest.raises(BudgetExceeded):
            first.exec("d", tools=[])  # the tree's 3 are spent, whichever runtime spent them
    assert len(tree.result.runs) == 4
    assert len(provider.requests) == 3


def test_a_tree_in_a_tool_body_is_a_node_of_the_calling_exec() -> None:
    spent: list[int] = []

    @agentic_function(register_globally=False)
    async def survey(runtime: Runtime) -> str:
        """Ask three sub-agents at once, two model calls between them."""
        async with runtime.tree(budget=Budget(model_calls=2)) as tree:
            found = await asyncio.gather(
                *(runtime.async_exec(f"Look at {c}.", tools=[]) for c in "xyz"),
                return_exceptions=True,
            )
        spent.append(tree.result.budget_usage.model_calls)
        assert len(tree.result.runs) == 3
        refused = [f for f in found if isinstance(f, BudgetExceeded)]
        return f"{3 - len(refused)} answered"

    def model(request: ProviderRequest) -> Any:
        if request.messages[0].text == "Survey." and len(request.messages) == 1:
            return call("survey")
        if request.messages[0].text.startswith("Look"):
            return "seen"
        return request.messages[-1].content

    runtime = Runtime(FunctionProvider(model), budget=Budget(model_calls=10))
    assert runtime.exec("Survey.", tools=[survey]) in ("1 answered", "2 answered")
    outer = runtime.last_run
    assert outer is not None
    nested = [e for e in outer.events_of(AgentInvoked) if e.parent_run_id == outer.run_id]
    assert len(nested) == 3  # the tree's execs nest below the call's exec
    (inside,) = spent
    assert 1 <= inside <= 2
    assert outer.budget_usage.model_calls == 2 + inside  # they charge its budget too


def test_an_exec_starting_after_the_block_ended_is_refused_and_the_record_is_frozen() -> None:
    async def main() -> tuple[TreeResult[None], BaseException | None, str]:
        gate = asyncio.Event()
        runtime = Runtime(FunctionProvider(lambda request: "ok"))

        async def late() -> str:
            await gate.wait()
            return await runtime.async_exec("late", tools=[])

        async with runtime.tree() as tree:
            await runtime.async_exec("early", tools=[])
            pending = asyncio.ensure_future(late())  # the block does not wait for it
        gate.set()
        try:
            await pending
        except UserError as exc:
            return tree.result, exc, "refused"
        return tree.result, None, "ran"

    record, error, outcome = asyncio.run(main())
    assert outcome == "refused"
    assert "has ended" in str(error)
    assert [r.output for r in record.runs] == ["ok"]


def test_a_running_exec_at_the_blocks_end_is_left_out_of_the_record() -> None:
    started, finish = threading.Event(), threading.Event()

    @function(register_globally=False)
    def slow() -> str:
        """Waits for the test."""
        started.set()
        finish.wait(10)
        return "done"

    def model(request: ProviderRequest) -> Any:
        return call("slow") if len(request.messages) == 1 else "finished"

    runtime = Runtime(FunctionProvider(model))
    with runtime.tree() as tree:
        worker = threading.Thread(target=runtime.exec, args=("go",), kwargs={"tools": [slow]})
        worker.start()
        started.wait(10)
    finish.set()
    worker.join(10)
    assert tree.result.runs == ()
    assert runtime.last_run is not None
    assert runtime.last_run.output == "finished"


def test_a_tree_is_one_block_and_its_budget_must_be_a_budget() -> None:
    runtime = Runtime(ScriptedProvider([]))
    tree = runtime.tree()
    with tree:
        pass
    with pytest.raises(UserError, match="already opened"), tree:
        pass
    with pytest.raises(UserError, match=r"must be an openprogram\.Budget"):
        runtime.tree(budget={"model_calls": 3})  # type: ignore[arg-type]


def test_execs_in_a_tree_are_numbered_by_start_order_as_in_a_call() -> None:
    """Positions a re-run computes the same way: the ``i``-th exec of a tree is ``(i,)``."""
    paths: dict[str, tuple[int, ...]] = {}

    @function(register_globally=False)
    async def where(label: str) -> str:
        """Record where this call sits (the first label finishes last).

        Args:
            label: Which exec called it.
        """
        await asyncio.sleep(0.2 if label == "a" else 0)
        paths[label] = get_frame().path
        return "here"

    def model(request: ProviderRequest) -> Any:
        label = request.messages[0].text
        return call("where", label=label) if len(request.messages) == 1 else "done"

    runtime = Runtime(FunctionProvider(model))

    async def main() -> None:
        async with runtime.tree():
            await asyncio.gather(*(runtime.async_exec(x, tools=[where]) for x in "abc"))
            async with runtime.tree():  # the tree's fourth child; its execs below it
                await runtime.async_exec("d", tools=[where])

    asyncio.run(main())
    assert paths == {"a": (0, 1, 0), "b": (1, 1, 0), "c": (2, 1, 0), "d": (3, 0, 1, 0)}
