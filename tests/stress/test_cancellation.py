"""Cancellation and deadlines reach every tool, at every depth, and nothing runs on afterwards.

- Cancelling an ``async_exec`` cancels its running async tools, sets
  ``ToolContext.cancel`` for sync ones, and the cancelled exec returns at once
  (hang guards of several seconds stand in for "promptly": the tools here
  would otherwise wait forever).
- An exec nested in a *sync* agentic function runs on a worker thread with its
  own event loop: cancelling the outer exec, or the agentic call timing out,
  stops it too; no model call and no tool starts afterwards.
- ``timeout_s`` bounds the whole exec: model calls, retries, approval and tool
  time, nested execs included.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from providers._server import Reply, WireServer
from providers.test_errors import _error

from openprogram import LLMError, Runtime, ToolContext, agentic_function, function
from openprogram.testing import FunctionProvider, ScriptedProvider, call

from ._paths import Conversations

pytestmark = pytest.mark.model_requests  # loopback wire servers: real requests on purpose

HANG_GUARD_S = 10.0
"""Far beyond any legitimate wait here; reaching it means something hung."""


class Probe:
    """What the tools under test saw."""

    def __init__(self) -> None:
        self.started = threading.Semaphore(0)
        self.cancelled: list[str] = []
        self.finished: list[str] = []
        self.contexts: list[ToolContext] = []
        self.model_calls: list[float] = []

    def wait_started(self, count: int) -> None:
        for _ in range(count):
            assert self.started.acquire(timeout=HANG_GUARD_S), "a tool never started"


def _tools(probe: Probe) -> tuple[Any, Any]:
    @function(register_globally=False)
    async def waits_async(tag: str) -> str:
        """Wait until cancelled."""
        probe.started.release()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled.append(tag)
            raise
        return "never"

    @function(register_globally=False)
    def waits_sync(tag: str, ctx: ToolContext) -> str:
        """Poll the cancel event, as long sync bodies should."""
        probe.contexts.append(ctx)
        probe.started.release()
        ctx.cancel.wait(HANG_GUARD_S)
        probe.finished.append(tag)
        return "stopped"

    return waits_async, waits_sync


def _model(probe: Probe, scripts: dict[str, list[Any]]) -> FunctionProvider:
    conversations = Conversations(scripts)

    def reply(request: Any) -> Any:
        probe.model_calls.append(time.monotonic())
        return conversations(request)

    return FunctionProvider(reply)


async def _cancel_after_start(rt: Runtime, probe: Probe, started: int, **options: Any) -> float:
    task = asyncio.ensure_future(rt.async_exec("go", **options))
    await asyncio.to_thread(probe.wait_started, started)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_GUARD_S)
    return cancelled_at


def test_cancelling_async_exec_cancels_async_tools_and_signals_sync_ones() -> None:
    probe = Probe()
    waits_async, waits_sync = _tools(probe)
    batch = [call("waits_async", tag=f"a{i}") for i in range(3)]
    batch += [call("waits_sync", tag=f"s{i}") for i in range(3)]
    rt = Runtime(ScriptedProvider([batch, "never"]))
    asyncio.run(_cancel_after_start(rt, probe, 6, tools=[waits_async, waits_sync]))
    assert sorted(probe.cancelled) == ["a0", "a1", "a2"]
    assert all(ctx.cancel.is_set() for ctx in probe.contexts)
    deadline = time.monotonic() + HANG_GUARD_S
    while len(probe.finished) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)  # the sync bodies saw the signal and returned
    assert sorted(probe.finished) == ["s0", "s1", "s2"]
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "aborted"


@pytest.mark.parametrize("inner_tool", ["waits_async", "waits_sync"])
def test_cancelling_reaches_an_exec_nested_in_a_sync_agentic_function(inner_tool: str) -> None:
    probe = Probe()
    waits_async, waits_sync = _tools(probe)

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Runs an inner exec on its worker thread."""
        return str(runtime.exec("inner", tools=[waits_async, waits_sync]))

    inner = [call(inner_tool, tag="inner"), call(inner_tool, tag="again"), "inner done"]
    rt = Runtime(_model(probe, {"go": [call("agent"), "done"], "inner": inner}))
    cancelled_at = asyncio.run(_cancel_after_start(rt, probe, 1, tools=[agent]))
    time.sleep(0.5)  # give a runaway inner exec time to show itself
    assert [t for t in probe.model_calls if t > cancelled_at] == []
    if inner_tool == "waits_async":
        assert probe.cancelled == ["inner"]
    else:
        assert probe.contexts[0].cancel.is_set()
        assert probe.finished == ["inner"]
    assert "again" not in probe.finished + probe.cancelled


def test_a_timed_out_agentic_call_stops_its_nested_exec() -> None:
    probe = Probe()
    waits_async, _ = _tools(probe)

    @agentic_function(register_globally=False, timeout=0.3)
    def agent(runtime: Runtime) -> str:
        """Runs an inner exec that outlives the call's timeout."""
        return str(runtime.exec("inner", tools=[waits_async]))

    inner = [call("waits_async", tag="inner"), "inner done"]
    rt = Runtime(_model(probe, {"go": [call("agent"), "done"], "inner": inner}))
    assert rt.exec("go", tools=[agent]) == "done"
    assert rt.last_run is not None
    assert "timed out" in str(rt.last_run.messages[2])
    timed_out_at = time.monotonic()
    deadline = timed_out_at + HANG_GUARD_S
    while not probe.cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert probe.cancelled == ["inner"]  # the abandoned inner exec did not run on
    assert len(probe.model_calls) == 3  # outer, inner, outer: none after the timeout


@pytest.mark.parametrize("where", ["tool", "nested_tool", "approval"])
def test_timeout_s_bounds_tool_approval_and_nested_time(where: str) -> None:
    probe = Probe()
    _, waits_sync = _tools(probe)

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Nests an exec with a slow tool; inherits the outer deadline."""
        return str(runtime.exec("inner", tools=[waits_sync]))

    def slow_approval(_: Any) -> None:
        time.sleep(2)  # a human who does not answer in time

    scripts = {
        "go": [call("agent") if where == "nested_tool" else call("waits_sync", tag="t"), "x"],
        "inner": [call("waits_sync", tag="inner"), "x"],
    }
    rt = Runtime(_model(probe, scripts), approval=slow_approval if where == "approval" else None)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"timeout_s=0\.3"):
        rt.exec("go", tools=[agent, waits_sync], timeout_s=0.3)
    assert time.monotonic() - started < 0.3 + 1.5  # bounded (generous slack for a busy box)
    if where != "approval":  # the inner exec, on its worker thread, learns of it a moment later
        assert probe.contexts
        assert all(ctx.cancel.wait(HANG_GUARD_S) for ctx in probe.contexts)


def test_timeout_s_bounds_retries_of_a_failing_provider() -> None:
    from openprogram.providers import OpenAIProvider

    with WireServer() as wire:
        limited = _error("openai", 503, "busy")
        limited.headers = {"retry-after-ms": "100"}
        wire.push(*[limited] * 60)
        provider = OpenAIProvider(base_url=f"{wire.url}/v1", api_key="k-test", model="m")
        rt = Runtime(provider, max_retries=100)
        started = time.monotonic()
        with pytest.raises((LLMError, TimeoutError)):
            rt.exec("go", tools=[], timeout_s=1.2)
        elapsed = time.monotonic() - started
        attempts = len(wire.requests)
    assert elapsed < 1.2 + 2.5
    # About one attempt per 100 ms until the deadline (a loaded machine makes fewer), never
    # all 60: the retries stop at the deadline, not at max_retries or the scripted errors.
    assert 2 <= attempts <= 14


def test_cancelling_during_a_streaming_http_call_returns_and_closes_the_connection() -> None:
    from openprogram.providers import OpenAIProvider

    with WireServer() as wire:
        wire.push(Reply(chunks=[b": keep-alive\n\n"] * 100, chunk_delay_s=0.1))
        provider = OpenAIProvider(base_url=f"{wire.url}/v1", api_key="k-test", model="m")

        async def main() -> None:
            task = asyncio.ensure_future(Runtime(provider).async_exec("go", tools=[]))
            while not wire.requests:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)  # mid-stream
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, HANG_GUARD_S)
            await provider.aclose()

        asyncio.run(main())  # an unclosed response or socket fails the test (conftest)
