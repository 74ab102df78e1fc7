"""Effects: side_effect calls are not run again after an unknown outcome; idempotency keys."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprogram import Runtime, ToolContext, agentic_function, function
from openprogram.events import ToolCallFailed
from openprogram.messages import ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call


class Crash(BaseException):
    """A crash of the whole process, simulated: nothing of the run catches it."""


log: list[tuple[str, str | None]] = []
crash_in: set[str] = set()


@function(effect="side_effect", register_globally=False)
def charge(amount: int, ctx: ToolContext) -> str:
    """Charge a card (never twice).

    Args:
        amount: Euros.
    """
    log.append(("charge", ctx.idempotency_key))
    if "charge" in crash_in:
        crash_in.discard("charge")
        raise Crash  # the process dies inside the body: did the charge happen?
    return f"charged {amount}"


@function(register_globally=False)
def quote(item: str, ctx: ToolContext) -> str:
    """Quote a price (safe to repeat).

    Args:
        item: The item.
    """
    log.append(("quote", ctx.idempotency_key))
    if "quote" in crash_in:
        crash_in.discard("quote")
        raise Crash
    return f"{item}: 5"


def buyer(request: ProviderRequest) -> Any:
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    if not results:
        return [call("quote", item="tea"), call("charge", amount=5)]
    return " / ".join(r.content for r in results)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    log.clear()
    crash_in.clear()


def test_a_side_effect_whose_attempt_died_is_not_run_again(store: Any) -> None:
    crash_in.add("charge")
    with pytest.raises(Crash):
        Runtime(FunctionProvider(buyer), store=store).exec("buy", tools=[quote, charge], run_id="s")
    runtime = Runtime(FunctionProvider(buyer), store=store)
    output = runtime.exec("buy", tools=[quote, charge], run_id="s")
    assert [name for name, _ in log].count("charge") == 1
    assert "may or may not have happened" in output
    assert runtime.last_run is not None
    (failed,) = runtime.last_run.events_of(ToolCallFailed)
    assert failed.failure == "unknown_outcome"
    # The outcome is journaled: every later replay tells the model the same.
    assert (
        Runtime(FunctionProvider(buyer), store=store).exec("buy", tools=[quote, charge], run_id="s")
        == output
    )
    assert [name for name, _ in log].count("charge") == 1


def test_an_idempotent_call_whose_attempt_died_runs_again_with_the_same_key(store: Any) -> None:
    crash_in.add("quote")
    # One call after the other: the crash in quote comes before charge starts.
    options: dict[str, Any] = {"tools": [quote, charge], "parallel_tool_calls": False}
    with pytest.raises(Crash):
        Runtime(FunctionProvider(buyer), store=store).exec("buy", run_id="i", **options)
    output = Runtime(FunctionProvider(buyer), store=store).exec("buy", run_id="i", **options)
    assert output == "tea: 5 / charged 5"
    quotes = [key for name, key in log if name == "quote"]
    assert quotes == ["i:1.0", "i:1.0"]  # at least once, with the same key
    charges = [key for name, key in log if name == "charge"]
    assert len(charges) == 1
    assert charges[0] == "i:1.1"  # another call, another key


def test_the_key_is_handed_out_only_once_the_call_it_names_is_in_the_store(store: Any) -> None:
    seen: list[set[str]] = []

    @function(register_globally=False)
    async def peek(ctx: ToolContext) -> str:
        """Look at the journal while running."""
        stored = await store.load_run("k")
        seen.append({s.key for s in stored.steps if s.kind == "reply"})
        return "ok"

    Runtime(
        FunctionProvider(lambda r: call("peek") if len(r.messages) == 1 else "done"), store=store
    ).exec("peek", tools=[peek], run_id="k")
    assert seen == [{"1"}]  # the reply that made the call was written before its body ran


def test_no_key_without_a_store() -> None:
    Runtime(FunctionProvider(buyer)).exec("buy", tools=[quote, charge])
    assert [key for _, key in log] == [None, None]


def test_nested_calls_get_keys_of_their_position(store: Any) -> None:
    @agentic_function(register_globally=False)
    def shop(item: str, runtime: Runtime) -> str:
        """Shop for an item.

        Args:
            item: The item.
        """
        return runtime.exec(f"shop {item}", tools=[quote, charge])

    def model(request: ProviderRequest) -> Any:
        if request.messages[0].text.startswith("shop"):
            return buyer(request)
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        return [call("shop", item="a"), call("shop", item="b")] if not results else "done"

    Runtime(FunctionProvider(model), store=store).exec("go", tools=[shop], run_id="n")
    assert sorted(key for _, key in log if key) == [
        "n:1.0/0/1.0",
        "n:1.0/0/1.1",
        "n:1.1/0/1.0",
        "n:1.1/0/1.1",
    ]
    stored = asyncio.run(store.load_run("n"))
    marks = {s.key for s in stored.steps if s.kind == "started"}
    assert marks == {"1.0/0/1.1", "1.1/0/1.1"}  # the side effects', written before they ran
