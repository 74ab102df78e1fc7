"""An exec on a thread the user starts in a tool body belongs to that tool call.

The runtime injected into a tool body is bound to its call (issue 13,
follow-up): an exec started on a ``threading.Thread`` or in a
``ThreadPoolExecutor`` inside the body stops when the call is cancelled (the
outer exec cancelled, its ``timeout_s`` or the call's own ``timeout`` firing),
and counts the thread slots its callers hold, so a small ``Budget(threads=...)``
never waits on itself. Python copies no context into such threads, so neither
reaches them through contextvars.

The inner model calls block until released (or cancelled); hang guards of
several seconds stand in for "promptly", and every test releases what it
started, so nothing outlives it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from openprogram import Budget, Runtime, agentic_function, function
from openprogram.events import ToolCallFailed
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call

HANG_GUARD_S = 10.0
"""Far beyond any legitimate wait here; reaching it means something hung."""


class BlockingModel:
    """Outer conversations follow a script; inner ones block until released or cancelled."""

    def __init__(self, outer: list[Any], inner: list[Any] | None = None) -> None:
        self.outer = outer
        self.inner = inner
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.cancelled: list[str] = []
        self.calls: list[tuple[str, float]] = []

    async def __call__(self, request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        self.calls.append((first.text, time.monotonic()))
        if first.text.split("\n", 1)[0] == "go":  # choices= adds its menu below the prompt
            return self.outer[turn] if turn < len(self.outer) else "done"
        if self.inner is not None:
            return self.inner[turn] if turn < len(self.inner) else "inner done"
        self.started.release()
        try:
            deadline = time.monotonic() + HANG_GUARD_S
            while not self.release.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled.append(first.text)
            raise
        return "inner done"

    def wait_started(self, count: int) -> None:
        for _ in range(count):
            assert self.started.acquire(timeout=HANG_GUARD_S), "an inner exec never started"


class Fan:
    """What the threads of a fan-out saw: one outcome per inner exec, and the threads."""

    def __init__(self) -> None:
        self.outcomes: list[str] = []
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def run(self, runtime: Runtime, query: str, **options: Any) -> None:
        with self.lock:
            self.threads.append(threading.current_thread())
        try:
            outcome = str(runtime.exec(query, **options))
        except BaseException as exc:  # noqa: BLE001 - the test records how each inner exec ended
            outcome = type(exc).__name__
        with self.lock:
            self.outcomes.append(outcome)

    def fan_out(self, how: str, runtime: Runtime, **options: Any) -> None:
        queries = ["inner 1", "inner 2"]
        if how == "pool":
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(lambda q: self.run(runtime, q, **options), queries))
            return
        threads = [
            threading.Thread(target=self.run, args=(runtime, q), kwargs=options) for q in queries
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def wait_done(self, count: int) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while len(self.outcomes) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        assert [t.name for t in self.threads if t.is_alive()] == [], "leaked threads"


def _agent(fan: Fan, how: str, timeout: float | None = None, **options: Any) -> Any:
    @agentic_function(register_globally=False, timeout=timeout)
    def agent(runtime: Runtime) -> str:
        """Run inner execs on threads of its own."""
        fan.fan_out(how, runtime, **options)
        return "fanned out"

    return agent


@pytest.fixture
def cleanup() -> Iterator[list[Callable[[], None]]]:
    steps: list[Callable[[], None]] = []
    yield steps
    for step in steps:
        step()  # release blocked inner execs even when an assertion failed


HOWS = ["pool", "thread"]


@pytest.mark.parametrize("how", HOWS)
def test_cancelling_the_outer_exec_stops_execs_on_threads_the_body_started(
    how: str, cleanup: list[Callable[[], None]]
) -> None:
    model, fan = BlockingModel([call("agent"), "done"]), Fan()
    cleanup.append(model.release.set)
    rt = Runtime(FunctionProvider(model))

    async def cancel_when_started() -> float:
        task = asyncio.ensure_future(rt.async_exec("go", tools=[_agent(fan, how)]))
        await asyncio.to_thread(model.wait_started, 2)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, HANG_GUARD_S)
        return cancelled_at

    cancelled_at = asyncio.run(cancel_when_started())
    fan.wait_done(2)
    assert fan.outcomes == ["CancelledError", "CancelledError"]
    assert sorted(model.cancelled) == ["inner 1", "inner 2"]
    assert [text for text, at in model.calls if at > cancelled_at] == []


@pytest.mark.parametrize("how", HOWS)
def test_the_calls_own_timeout_stops_execs_on_threads_the_body_started(
    how: str, cleanup: list[Callable[[], None]]
) -> None:
    model, fan = BlockingModel([call("agent"), "done"]), Fan()
    cleanup.append(model.release.set)
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("go", tools=[_agent(fan, how, timeout=0.5)]) == "done"
    assert rt.last_run is not None
    (result,) = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert "timed out" in result.content
    fan.wait_done(2)
    assert fan.outcomes == ["CancelledError", "CancelledError"]
    assert sorted(model.cancelled) == ["inner 1", "inner 2"]


@pytest.mark.parametrize("how", HOWS)
def test_the_outer_timeout_s_stops_execs_on_threads_the_body_started(
    how: str, cleanup: list[Callable[[], None]]
) -> None:
    model, fan = BlockingModel([call("agent"), "done"]), Fan()
    cleanup.append(model.release.set)
    rt = Runtime(FunctionProvider(model))
    with pytest.raises(TimeoutError, match=r"timeout_s=0\.5"):
        rt.exec("go", tools=[_agent(fan, how)], timeout_s=0.5)
    fan.wait_done(2)
    # Each inner exec ends by the call's cancellation or by the deadline it inherited.
    assert set(fan.outcomes) <= {"CancelledError", "TimeoutError"}
    assert sorted(model.cancelled) == ["inner 1", "inner 2"]


def test_an_exec_on_the_body_thread_with_a_bound_runtime_of_the_call_is_not_watched_twice() -> None:
    model = BlockingModel([call("agent"), "done"], inner=["inner done"])

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Run an inner exec on the body's own thread."""
        return str(runtime.exec("inner", tools=[]))

    rt = Runtime(FunctionProvider(model))
    assert rt.exec("go", tools=[agent]) == "done"
    assert [text for text, _ in model.calls] == ["go", "inner", "go"]


# -- thread slots ------------------------------------------------------------------------------

RAN: list[str] = []


@function(register_globally=False)
def work() -> str:
    """Do some synchronous work."""
    RAN.append("work")
    return "worked"


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("threads", [1, 2])
def test_an_exec_on_a_user_thread_counts_the_slots_its_callers_hold(how: str, threads: int) -> None:
    """The sync agent holds a slot while its threads' execs call a sync tool.

    Counting 0 held slots, the inner calls would wait for the agent's slot,
    which frees only when they finish: the tree would wait on itself. The
    ``timeout_s`` guard turns such a hang into a failure.
    """
    RAN.clear()
    model = BlockingModel([call("agent"), "done"], inner=[call("work"), "inner done"])
    fan = Fan()
    agent = _agent(fan, how, tools=[work])
    rt = Runtime(FunctionProvider(model), budget=Budget(threads=threads))
    assert rt.exec("go", tools=[agent], timeout_s=HANG_GUARD_S) == "done"
    fan.wait_done(2)
    assert fan.outcomes == ["inner done", "inner done"]
    assert rt.last_run is not None
    failed = [e.failure for e in rt.last_run.events if isinstance(e, ToolCallFailed)]
    if threads == 1:  # the agent holds the only slot: refused at once, as on the body's thread
        assert RAN == []
        assert failed == ["budget", "budget"]
    else:  # one slot is left for the deeper level: the two calls take it in turn
        assert RAN == ["work", "work"]
    assert rt.last_run.budget_usage.threads <= threads


# -- a function picked through choices= is the exec's next step: it stops with the exec too ----


@pytest.mark.parametrize("how", ["body", *HOWS])
def test_cancelling_an_exec_stops_execs_in_the_function_it_picked(
    how: str, cleanup: list[Callable[[], None]]
) -> None:
    model, fan = BlockingModel(['{"call": "research"}']), Fan()
    cleanup.append(model.release.set)

    def research(runtime: Runtime) -> str:
        """Research in nested execs."""
        if how == "body":
            fan.threads.append(threading.current_thread())
            fan.run(runtime, "inner 1")
            fan.run(runtime, "inner 2")
        else:
            fan.fan_out(how, runtime)
        return "researched"

    rt = Runtime(FunctionProvider(model))

    async def cancel_when_started() -> float:
        task = asyncio.ensure_future(rt.async_exec("go", tools=[], choices=[research, "stop"]))
        await asyncio.to_thread(model.wait_started, 1 if how == "body" else 2)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, HANG_GUARD_S)
        return cancelled_at

    cancelled_at = asyncio.run(cancel_when_started())
    fan.wait_done(2)
    assert fan.outcomes == ["CancelledError", "CancelledError"]
    assert sorted(model.cancelled) == (["inner 1"] if how == "body" else ["inner 1", "inner 2"])
    assert [text for text, at in model.calls if at > cancelled_at] == []


@pytest.mark.parametrize("threads", [2, 3])
def test_two_levels_of_user_threads_never_wait_on_their_own_slots(threads: int) -> None:
    """outer → agent (sync) → thread → exec → deeper (sync) → thread → exec → work (sync)."""
    RAN.clear()
    inner_fan, deeper_fan = Fan(), Fan()

    @agentic_function(register_globally=False)
    def deeper(runtime: Runtime) -> str:
        """Run the innermost execs on threads of its own."""
        deeper_fan.fan_out("thread", runtime, tools=[work])
        return "deeper done"

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Run inner execs on a thread pool of its own."""
        inner_fan.fan_out("pool", runtime, tools=[deeper])
        return "fanned out"

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        menu = {spec["name"] for spec in request.tools}
        if turn:
            return "done" if first.text == "go" else "inner done"
        return call("agent" if first.text == "go" else "deeper" if "deeper" in menu else "work")

    rt = Runtime(FunctionProvider(reply), budget=Budget(threads=threads))
    assert rt.exec("go", tools=[agent], timeout_s=HANG_GUARD_S) == "done"
    inner_fan.wait_done(2)
    deeper_fan.wait_done(4)
    assert inner_fan.outcomes == ["inner done"] * 2
    assert deeper_fan.outcomes == ["inner done"] * 4
    assert rt.last_run is not None
    assert rt.last_run.budget_usage.threads <= threads
    # With 2 slots the two levels of agents hold them all: the innermost calls are refused;
    # with 3 one is left for them, taken in turn.
    expected = [] if threads == 2 else ["work"] * 4
    assert len(RAN) == len(expected)
    assert set(RAN) <= {"work"}
