"""The frame: what nested code inherits, its run-tree positions, and the injected runtime's view.

Positions (``Frame.path``) key the run tree by where a call sits, never by
when it finished: a top-level exec is ``()``, call ``k`` of the reply to model
call ``t`` is ``exec_path + (t, k)``, the ``i``-th exec started inside a call
is ``call_path + (i,)``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from openprogram import Runtime, ToolContext, agentic_function, function
from openprogram.context import EMPTY, get_current_runtime, get_frame
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call


def first_text(request: ProviderRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text


def turn(request: ProviderRequest) -> int:
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


def test_a_tool_call_runs_in_a_frame_that_ends_with_it() -> None:
    seen: list[Any] = []

    @function(register_globally=False)
    def probe(ctx: ToolContext) -> str:
        """Look at the frame."""
        frame = get_frame()
        seen.extend([frame, ctx.runtime])
        return "ok"

    rt = Runtime(ScriptedProvider([call("probe"), "done"]))
    rt.exec("go", tools=[probe])
    frame, injected = seen
    assert frame.runtime is injected
    assert frame.scope is not None
    assert frame.depth == 1
    assert frame.path == (1, 0)
    assert frame.cancel is not None
    assert not frame.cancel[0].is_set()
    assert frame.held == 1  # a sync body holds its thread slot
    assert frame.ledger is not None
    assert get_frame() is EMPTY


def test_parallel_calls_keep_their_positions_whichever_finishes_first() -> None:
    paths: dict[int, tuple[int, ...]] = {}
    finished: list[int] = []

    @function(register_globally=False)
    async def slow(n: int, delay: float) -> str:
        """Wait, then record where this call sits.

        Args:
            n: Which call.
            delay: Seconds to wait.
        """
        await asyncio.sleep(delay)
        paths[n] = get_frame().path
        finished.append(n)
        return "ok"

    model = ScriptedProvider(
        [
            call("slow", n=0, delay=0.01),
            [call("slow", n=1, delay=0.2), call("slow", n=2, delay=0)],
            "done",
        ]
    )
    Runtime(model).exec("go", tools=[slow])
    assert finished == [0, 2, 1]
    assert paths == {0: (1, 0), 1: (2, 0), 2: (2, 1)}


def test_execs_started_in_a_call_are_numbered_in_the_order_they_start() -> None:
    paths: dict[str, tuple[int, ...]] = {}

    @function(register_globally=False)
    def where(label: str) -> str:
        """Record where this call sits.

        Args:
            label: Which exec called it.
        """
        paths[label] = get_frame().path
        return "here"

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Run two execs, one after the other."""
        return f"{runtime.exec('first', tools=[where])} {runtime.exec('second', tools=[where])}"

    def model(request: ProviderRequest) -> Any:
        text = first_text(request)
        if turn(request) == 0:
            return call("agent") if text == "go" else call("where", label=text)
        return "done"

    Runtime(FunctionProvider(model)).exec("go", tools=[agent])
    assert paths == {"first": (1, 0, 0, 1, 0), "second": (1, 0, 1, 1, 0)}


def test_gathered_agentic_functions_keep_positions_by_start_order_not_by_finish() -> None:
    paths: dict[str, tuple[int, ...]] = {}

    @function(register_globally=False)
    async def where(label: str) -> str:
        """Record where this call sits (the first label waits, so it finishes last).

        Args:
            label: Which exec called it.
        """
        await asyncio.sleep(0.2 if label == "a" else 0)
        paths[label] = get_frame().path
        return "here"

    @agentic_function(register_globally=False)
    async def sub(label: str, runtime: Runtime) -> str:
        """One branch.

        Args:
            label: Its name.
        """
        return str(await runtime.async_exec(label, tools=[where]))

    @agentic_function(register_globally=False)
    async def agent(runtime: Runtime) -> str:
        """Run two branches at once."""
        done = await asyncio.gather(sub("a", runtime=runtime), sub("b", runtime=runtime))
        return " ".join(done)

    def model(request: ProviderRequest) -> Any:
        text = first_text(request)
        if turn(request) == 0:
            return call("agent") if text == "go" else call("where", label=text)
        return "done"

    Runtime(FunctionProvider(model)).exec("go", tools=[agent])
    assert paths == {"a": (1, 0, 0, 1, 0), "b": (1, 0, 1, 1, 0)}


def test_the_injected_runtime_is_a_view_of_the_runtime_carrying_its_calls_frame() -> None:
    seen: list[Any] = []

    @function(register_globally=False)
    def probe(runtime: Runtime, ctx: ToolContext) -> str:
        """Look at the injected runtime."""
        seen.extend([runtime, ctx.runtime, get_current_runtime()])
        runtime.system = "changed through the view"
        return "ok"

    rt = Runtime(ScriptedProvider([call("probe"), "done"]))
    rt.exec("go", tools=[probe])
    injected, from_context, current = seen
    assert injected is from_context is current
    assert isinstance(injected, Runtime)
    assert injected == rt
    assert rt == injected
    assert hash(injected) == hash(rt)
    assert injected is not rt
    assert vars(injected) is not vars(rt)  # its own state is the frame, not a shared __dict__
    assert rt.system == "changed through the view"
    assert injected.last_run is rt.last_run is not None
    assert repr(injected) == repr(rt)


def test_the_view_of_a_runtime_subclass_is_of_that_subclass_with_its_overrides() -> None:
    calls: list[str] = []

    class Logged(Runtime):
        def exec(self, content: Any, **options: Any) -> Any:  # type: ignore[override]
            calls.append(str(content))
            return super().exec(content, **options)

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Run an inner exec through the injected runtime."""
        assert isinstance(runtime, Logged)
        return str(runtime.exec("inner", tools=[]))

    rt = Logged(ScriptedProvider([call("agent"), "inner done", "done"]))
    assert rt.exec("go", tools=[agent]) == "done"
    assert calls == ["go", "inner"]


def test_a_thread_the_body_starts_carries_the_calls_frame_and_one_started_outside_does_not() -> (
    None
):
    inside: list[Any] = []
    outside: list[Any] = []

    @function(register_globally=False)
    def spawn() -> str:
        """Start a thread and look at its frame."""
        outer = get_frame()
        thread = threading.Thread(target=lambda: inside.append(get_frame() is outer))
        thread.start()
        thread.join()
        return "spawned"

    rt = Runtime(ScriptedProvider([call("spawn"), "done"]))
    rt.exec("go", tools=[spawn])
    thread = threading.Thread(target=lambda: outside.append(get_frame()))
    thread.start()
    thread.join()
    assert inside == [True]
    assert outside == [EMPTY]


def test_a_thread_keeps_its_frame_after_the_call_that_started_it_ended() -> None:
    """Fail closed: a thread left running nests its execs below the finished call."""
    go, menus = threading.Event(), []
    results: list[str] = []

    @function(register_globally=False)
    def helper() -> str:
        """Help."""
        return "helped"

    def later(rt: Runtime) -> None:
        go.wait(10)
        results.append(rt.exec("late"))

    @function(register_globally=False)
    def fire_and_forget() -> str:
        """Start a thread that outlives this call."""
        threading.Thread(target=later, args=(captured,)).start()
        return "started"

    def model(request: ProviderRequest) -> Any:
        menus.append([spec["name"] for spec in request.tools])
        if first_text(request) == "go":
            return call("fire_and_forget") if turn(request) == 0 else "done"
        return "late done"

    captured = Runtime(FunctionProvider(model))
    captured.exec("go", tools=[fire_and_forget, helper], tools_deny=["helper"])
    go.set()
    deadline = time.monotonic() + 10
    while not results and time.monotonic() < deadline:
        time.sleep(0.01)
    assert results == ["late done"]
    assert menus[-1] == ["fire_and_forget"]  # the finished call's menu, its veto kept


def test_an_exec_in_the_approval_hook_nests_in_its_call_and_is_numbered_with_the_body() -> None:
    paths: dict[str, tuple[int, ...]] = {}
    depths: dict[str, int] = {}

    @function(register_globally=False)
    def where(label: str) -> str:
        """Record where this call sits.

        Args:
            label: Which exec called it.
        """
        paths[label] = get_frame().path
        depths[label] = get_frame().depth
        return "here"

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Do the work in an inner exec."""
        return str(runtime.exec("work", tools=[where]))

    def approve(tool_call: Any) -> None:
        if tool_call.name == "agent":  # a reviewing model looks at the call first
            runtime = get_current_runtime()
            assert runtime is not None
            runtime.exec("review", tools=[where])

    def model(request: ProviderRequest) -> Any:
        text = first_text(request)
        if turn(request) == 0:
            return call("agent") if text == "go" else call("where", label=text)
        return "done"

    Runtime(FunctionProvider(model), approval=approve).exec("go", tools=[agent])
    assert paths == {"review": (1, 0, 0, 1, 0), "work": (1, 0, 1, 1, 0)}
    assert depths == {"review": 2, "work": 2}


def test_work_submitted_to_a_pool_takes_its_submitters_frame_not_its_threads() -> None:
    """A pool thread started inside a call serves later work: that work is not in the call."""
    pool = ThreadPoolExecutor(1)
    inside: list[tuple[int, ...]] = []

    @function(register_globally=False)
    def spawn() -> str:
        """Start the pool's thread from inside this call."""
        inside.append(pool.submit(lambda: get_frame().path).result())
        return "spawned"

    try:
        Runtime(ScriptedProvider([call("spawn"), "done"])).exec("go", tools=[spawn])
        outside = pool.submit(get_frame).result()
    finally:
        pool.shutdown()
    assert inside == [(1, 0)]
    assert outside is EMPTY
