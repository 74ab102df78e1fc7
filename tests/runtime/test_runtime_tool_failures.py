"""Every tool-side failure is a result, every option is checked, every event closes (issue 13)."""

from __future__ import annotations

import argparse
import asyncio
import threading

import pytest

from openprogram.decorators import agentic_function
from openprogram.events import (
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallSkipped,
    ToolCallStarted,
    ToolInputValidationFailed,
)
from openprogram.exceptions import UserError
from openprogram.messages import ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import RunResult, Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call
from openprogram.tools import Tool


def results_of(run: RunResult | None) -> list[ToolResultMessage]:
    assert run is not None
    return [m for m in run.messages if isinstance(m, ToolResultMessage)]


# -- 6. tool_choice="none" ------------------------------------------------------------------


def test_calls_in_a_reply_that_ignores_tool_choice_none_are_not_run() -> None:
    ran: list[str] = []

    def wipe() -> str:
        """Wipe everything."""
        ran.append("wipe")
        return "wiped"

    provider = ScriptedProvider([call("wipe"), "Nothing was run."])
    rt = Runtime(provider)
    assert rt.exec("x", tools=[wipe], tool_choice="none") == "Nothing was run."
    assert ran == []
    (result,) = results_of(rt.last_run)
    assert result.is_error
    assert "tool_choice='none'" in result.content
    assert rt.last_run is not None
    skipped = rt.last_run.events_of(ToolCallSkipped)
    assert [e.reason for e in skipped] == ["tools_withdrawn"]
    assert rt.last_run.events_of(ToolCallStarted) == []
    assert all(r.tool_choice == "none" for r in provider.requests)


# -- 7. SystemExit ----------------------------------------------------------------------------


def _argparse_tool() -> Tool:
    def parse(argv: str) -> str:
        """Parse a command line.

        Args:
            argv: The command line.
        """
        parser = argparse.ArgumentParser(prog="tool", exit_on_error=False)
        parser.add_argument("--n", type=int, required=True)
        return str(parser.parse_args(argv.split()).n)  # exits with SystemExit(2) on a bad line

    return Tool.from_function(parse)


async def _exit_async() -> str:
    """Exit from an async body."""
    raise SystemExit(3)


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize("body", ["sync", "async"])
def test_system_exit_in_a_tool_body_is_an_error_result(body: str, timeout: float | None) -> None:
    tool = (
        _argparse_tool()
        if body == "sync"
        else Tool.from_function(_exit_async, name="parse", timeout=timeout)
    )
    if timeout is not None:
        tool.timeout = timeout
    args = {"argv": "--bogus"} if body == "sync" else {}
    rt = Runtime(ScriptedProvider([call("parse", **args), "recovered"]))
    assert rt.exec("x", tools=[tool]) == "recovered"
    (result,) = results_of(rt.last_run)
    assert result.is_error
    assert "SystemExit" in result.content


def test_keyboard_interrupt_in_a_tool_body_still_propagates() -> None:
    def stop() -> str:
        """Stop."""
        raise KeyboardInterrupt

    rt = Runtime(ScriptedProvider([call("stop"), "never"]))
    with pytest.raises(KeyboardInterrupt):
        rt.exec("x", tools=[stop])


# -- 8. a tool's own TimeoutError -----------------------------------------------------------


@pytest.mark.parametrize("body", ["sync", "async"])
def test_a_tools_own_timeout_error_is_its_error_not_ours(body: str) -> None:
    def fetch_sync() -> str:
        """Fetch."""
        raise TimeoutError("read timed out")

    async def fetch_async() -> str:
        """Fetch."""
        raise TimeoutError("upstream deadline")

    fn = fetch_sync if body == "sync" else fetch_async
    tool = Tool.from_function(fn, name="fetch", timeout=30)
    rt = Runtime(ScriptedProvider([call("fetch"), "ok"]))
    rt.exec("x", tools=[tool])
    (result,) = results_of(rt.last_run)
    assert result.is_error
    assert "abandoned" not in result.content
    assert "30" not in result.content
    assert "TimeoutError" in result.content
    assert rt.last_run is not None
    assert [e.failure for e in rt.last_run.events_of(ToolCallFailed)] == ["exception"]


def test_our_timeout_is_still_reported_as_ours() -> None:
    async def slow() -> str:
        """Take too long."""
        await asyncio.sleep(30)
        return "late"

    tool = Tool.from_function(slow, timeout=0.05)
    rt = Runtime(ScriptedProvider([call("slow"), "ok"]))
    rt.exec("x", tools=[tool])
    (result,) = results_of(rt.last_run)
    assert "timed out after 0.05 s and was abandoned" in result.content
    assert rt.last_run is not None
    assert [e.failure for e in rt.last_run.events_of(ToolCallFailed)] == ["timeout"]


# -- 9. cancellation closes every started call -----------------------------------------------


def _closing_pairs(events: list[object]) -> tuple[set[str], set[str]]:
    started = {e.call_id for e in events if isinstance(e, ToolCallStarted)}
    closed = {
        e.call_id
        for e in events
        if isinstance(e, ToolCallCompleted | ToolCallFailed | ToolCallSkipped)
    }
    return started, closed


@pytest.mark.parametrize("body", ["sync", "async"])
def test_exec_timeout_while_tools_run_closes_every_started_call(body: str) -> None:
    release = threading.Event()

    def hang_sync(n: int) -> str:
        """Hang.

        Args:
            n: Which.
        """
        release.wait(5)
        return "late"

    async def hang_async(n: int) -> str:
        """Hang.

        Args:
            n: Which.
        """
        await asyncio.sleep(30)
        return "late"

    fn = hang_sync if body == "sync" else hang_async
    events: list[object] = []
    rt = Runtime(
        ScriptedProvider([[call("hang", n=1), call("hang", n=2)], "never"]),
        observers=[events.append],
    )
    tool = Tool.from_function(fn, name="hang")
    try:
        with pytest.raises(TimeoutError):
            rt.exec("x", tools=[tool], timeout_s=0.2)
    finally:
        release.set()
    # The run's record holds every event; observers past the deadline get theirs off the loop.
    assert rt.last_run is not None
    events = list(rt.last_run.events)
    started, closed = _closing_pairs(events)
    assert len(started) == 2
    assert started <= closed
    failed = [e for e in events if isinstance(e, ToolCallFailed)]
    assert {e.failure for e in failed} == {"cancelled"}


def test_cancelling_the_exec_task_closes_the_running_call() -> None:
    events: list[object] = []
    entered = asyncio.Event()

    async def hang() -> str:
        """Hang."""
        entered.set()
        await asyncio.sleep(30)
        return "late"

    rt = Runtime(ScriptedProvider([call("hang"), "never"]), observers=[events.append])

    async def main() -> None:
        task = asyncio.ensure_future(rt.async_exec("x", tools=[hang]))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # The run's record holds every event; a cancelled exec does not wait for its observers.
    assert rt.last_run is not None
    started, closed = _closing_pairs(list(rt.last_run.events))
    assert len(started) == 1
    assert started <= closed


# -- 10. parallel_tool_calls is a bool --------------------------------------------------------


@pytest.mark.parametrize("value", ["false", 0, None, "no"])
def test_parallel_tool_calls_must_be_a_bool(value: object) -> None:
    rt = Runtime(ScriptedProvider(["never"]))
    with pytest.raises(UserError, match="parallel_tool_calls"):
        rt.exec("x", tools=[], parallel_tool_calls=value)  # type: ignore[arg-type]


# -- 12. validation events carry no model-chosen keys ------------------------------------------


def test_validation_event_hides_keys_chosen_by_the_model() -> None:
    def store(d: dict[str, int]) -> str:
        """Store counters.

        Args:
            d: Counters by name.
        """
        return "ok"

    rt = Runtime(ScriptedProvider([call("store", d={"hunter2SECRET": "x"}), "ok"]))
    rt.exec("x", tools=[store])
    assert rt.last_run is not None
    (event,) = rt.last_run.events_of(ToolInputValidationFailed)
    assert "hunter2SECRET" not in event.violation_description
    assert "expected integer" in event.violation_description
    # The model still sees the whole path, so it can correct itself.
    (result,) = results_of(rt.last_run)
    assert "d.hunter2SECRET: expected integer" in result.content


def test_validation_event_hides_unexpected_argument_names() -> None:
    def add(a: int) -> int:
        """Add.

        Args:
            a: A number.
        """
        return a

    rt = Runtime(ScriptedProvider([call("add", a=1, sk_live_key=2), "ok"]))
    rt.exec("x", tools=[add])
    assert rt.last_run is not None
    (event,) = rt.last_run.events_of(ToolInputValidationFailed)
    assert "sk_live_key" not in event.violation_description
    assert "unexpected" in event.violation_description


def test_validation_event_keeps_schema_paths_and_shows_keys_with_payloads_on() -> None:
    def store(d: dict[str, int], city: str) -> str:
        """Store counters.

        Args:
            d: Counters by name.
            city: A city.
        """
        return "ok"

    script = [call("store", d={"hunter2SECRET": "x"}, city=1), "ok"]
    rt = Runtime(ScriptedProvider(list(script)), trace_payloads=True)
    rt.exec("x", tools=[store])
    assert rt.last_run is not None
    (event,) = rt.last_run.events_of(ToolInputValidationFailed)
    assert "d.hunter2SECRET: expected integer" in event.violation_description
    quiet = Runtime(ScriptedProvider(list(script)))
    quiet.exec("x", tools=[store])
    assert quiet.last_run is not None
    (event,) = quiet.last_run.events_of(ToolInputValidationFailed)
    assert "city: expected string" in event.violation_description


def test_a_nested_execs_timeout_is_the_agentic_tools_error_not_its_timeout() -> None:
    async def slow() -> str:
        """Take long."""
        await asyncio.sleep(30)
        return "late"

    def answer(request: ProviderRequest) -> object:
        first = len(request.messages) == 1
        if request.messages[0].text == "outer":  # type: ignore[union-attr]
            return call("delegate") if first else "outer done"
        return call("slow")

    @agentic_function(register_globally=False, timeout=30)
    def delegate(runtime: Runtime) -> str:
        """Delegate with a short deadline of its own."""
        return str(runtime.exec("inner", tools=[slow], timeout_s=0.1))

    rt = Runtime(FunctionProvider(answer))
    assert rt.exec("outer", tools=[delegate]) == "outer done"
    assert rt.last_run is not None
    (result,) = [m for m in results_of(rt.last_run) if m.tool_name == "delegate"]
    assert "TimeoutError: exec timed out" in result.content
    assert "abandoned" not in result.content
