"""A runtime captured from outside a tool body, used on a thread the body starts, still nests.

The natural way to write it: ``rt = Runtime(...)`` at module level, and a
tool body that starts a thread (``threading.Thread``, a ``ThreadPoolExecutor``,
``loop.run_in_executor``) which calls ``rt.exec(...)`` — not the runtime
injected into the body. Python copies no context into such a thread, so the
exec used to run at top level: the whole registry, the outer ``tools_deny``
dropped, a fresh budget, depth 1. Now a thread started inside a tool call
carries the call's frame, so the exec nests below the call on every path:
``exec``, ``async_exec``, ``stream``, ``choices=``, ``response_format=``,
``tool_search``, an agentic function given the runtime or finding it itself.

A thread started outside every tool call (a server's request thread) is
unrelated to the calls running at that moment: its execs stay top level.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import (
    Budget,
    DecisionError,
    Registry,
    Runtime,
    agentic_function,
    function,
    get_current_runtime,
    set_default_runtime,
)
from openprogram.events import AgentInvoked
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call

RAN: list[str] = []
FORBIDDEN = {"rm_rf", "rm_deferred"}


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def rm_rf() -> str:
    """Remove every file."""
    RAN.append("rm_rf")
    return "removed"


def rm_deferred() -> str:
    """Remove every file, loaded on demand."""
    RAN.append("rm_deferred")
    return "removed"


def notes() -> str:
    """Read the notes, loaded on demand."""
    RAN.append("notes")
    return "the notes"


def helper() -> str:
    """A harmless helper."""
    RAN.append("helper")
    return "helped"


class Answer(BaseModel):
    """The structured answer."""

    text: str


def first_text(request: ProviderRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text.split("\n", 1)[0]  # choices= and response_format add text below it


def turn(request: ProviderRequest) -> int:
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


def model(request: ProviderRequest) -> Any:
    """The outer exec calls the worker; every inner exec reaches for the forbidden tools."""
    text, n = first_text(request), turn(request)
    if text == "outer":
        return call("worker") if n == 0 else "done"
    if text == "pick":
        return '{"call": "rm_rf"}'
    if text == "search":
        script: list[Any] = [
            call("tool_search", query="select:rm_deferred,notes"),
            call("rm_deferred"),
        ]
        return script[n] if n < len(script) else "inner done"
    if text == "structured":
        return [call("rm_rf"), call("helper")] if n == 0 else '{"text": "inner done"}'
    return [call("rm_rf"), call("helper")] if n == 0 else "inner done"


# -- what the thread does with the captured runtime ------------------------------------------


def do_exec(rt: Runtime) -> str:
    return rt.exec("inner")


def do_async_exec(rt: Runtime) -> str:
    return asyncio.run(rt.async_exec("inner"))


def do_stream(rt: Runtime) -> str:
    async def consume() -> str:
        events = [event async for event in rt.stream("inner")]
        return str(events[-1].output)

    return asyncio.run(consume())


def do_choices(rt: Runtime) -> str:
    try:
        return str(rt.exec("pick", tools=[], choices=[rm_rf, "nothing"]))
    except DecisionError as exc:
        return f"DecisionError: {exc.problem}"


def do_response_format(rt: Runtime) -> str:
    return rt.exec("structured", response_format=Answer).text


def do_tool_search(rt: Runtime) -> str:
    return rt.exec("search")


@agentic_function(register_globally=False)
def research(topic: str, runtime: Runtime) -> str:
    """Research a topic in a loop of its own.

    Args:
        topic: The topic.
    """
    return runtime.exec(topic)


def do_agentic(rt: Runtime) -> str:
    return research("inner", runtime=rt)


def do_agentic_finding_its_runtime(rt: Runtime) -> str:
    return research("inner")  # the current runtime: the call's, on this thread too


WHAT: dict[str, Callable[[Runtime], str]] = {
    "exec": do_exec,
    "async_exec": do_async_exec,
    "stream": do_stream,
    "choices": do_choices,
    "response_format": do_response_format,
    "tool_search": do_tool_search,
    "agentic": do_agentic,
    "agentic_current": do_agentic_finding_its_runtime,
}
EXPECTED = {"choices": "DecisionError: vetoed"}


# -- how the tool body reaches a thread ------------------------------------------------------


def on_thread(work: Callable[[], str]) -> str:
    out: list[str] = []
    thread = threading.Thread(target=lambda: out.append(work()))
    thread.start()
    thread.join()
    return out[0]


def on_pool(work: Callable[[], str]) -> str:
    with ThreadPoolExecutor(2) as pool:
        return pool.submit(work).result()


def registry_with(worker: Any) -> Registry:
    registry = Registry()
    for fn, defer in ((rm_rf, False), (helper, False), (rm_deferred, True), (notes, True)):
        registry.register(function(fn, register_globally=False, defer=defer))
    registry.register(worker)
    return registry


def run_outer(how: str, what: str) -> tuple[Runtime, FunctionProvider, str]:
    box: dict[str, Runtime] = {}

    def work() -> str:
        return WHAT[what](box["rt"])  # the captured runtime, not the injected one

    if how == "executor":

        async def worker_async() -> str:
            """Hand work to the loop's default executor."""
            return await asyncio.get_running_loop().run_in_executor(None, work)

        worker = function(worker_async, name="worker", register_globally=False)
    else:
        start = on_thread if how == "thread" else on_pool

        def worker_sync() -> str:
            """Hand work to a thread."""
            return start(work)

        worker = function(worker_sync, name="worker", register_globally=False)
    provider = FunctionProvider(model)
    rt = box["rt"] = Runtime(provider, registry=registry_with(worker))
    answer = rt.exec("outer", tools_deny=sorted(FORBIDDEN), budget=Budget(model_calls=20))
    assert rt.last_run is not None
    (result,) = [m for m in rt.last_run.messages if getattr(m, "tool_name", None) == "worker"]
    return rt, provider, f"{answer}|{result.content}"


@pytest.fixture
def stray_default() -> Any:
    """A default runtime that records what would escape to it (and is cleared afterwards)."""
    escaped = FunctionProvider(lambda request: "escaped to the default runtime")
    set_default_runtime(Runtime(escaped))
    yield escaped
    set_default_runtime(None)


@pytest.mark.usefixtures("stray_default")
@pytest.mark.parametrize("what", sorted(WHAT))
@pytest.mark.parametrize("how", ["thread", "pool", "executor"])
def test_a_captured_runtime_on_a_thread_the_body_started_keeps_every_veto(
    how: str, what: str
) -> None:
    rt, provider, outcome = run_outer(how, what)
    assert not FORBIDDEN & set(RAN)
    assert outcome == f"done|{EXPECTED.get(what, 'inner done')}"
    inner = [r for r in provider.requests if first_text(r) != "outer"]
    assert inner, "the inner exec ran on the outer runtime's provider"
    for request in inner:
        assert not FORBIDDEN & {spec["name"] for spec in request.tools}
    assert rt.last_run is not None
    depths = sorted(e.depth for e in rt.last_run.events if isinstance(e, AgentInvoked))
    assert depths[0] == 1
    assert set(depths[1:]) == {2}  # one tree: the inner exec nests below the worker's call
    assert rt.last_run.budget_usage.model_calls == len(provider.requests)  # one budget


def test_tool_search_on_a_captured_runtime_loads_only_what_the_outer_vetoes_allow() -> None:
    _, provider, _ = run_outer("thread", "tool_search")
    assert RAN == []
    first, second, _ = [r for r in provider.requests if first_text(r) == "search"]
    assert [spec["name"] for spec in first.tools] == ["helper", "worker", "tool_search"]
    assert "notes" in (first.system or "")
    assert "rm_deferred" not in (first.system or "")
    assert [spec["name"] for spec in second.tools] == ["helper", "worker", "notes"]


def test_an_exec_on_a_thread_started_outside_every_tool_call_stays_top_level() -> None:
    """A server thread is not part of the tool call running when it starts its exec."""
    entered, release = threading.Event(), threading.Event()
    seen: list[Runtime | None] = []

    @function(register_globally=False)
    def worker() -> str:
        """Wait while an unrelated thread uses the runtime."""
        entered.set()
        release.wait(10)
        return "worked"

    def outside(request: ProviderRequest) -> Any:
        if first_text(request) == "outer":
            return call("worker") if turn(request) == 0 else "done"
        return call("rm_rf") if turn(request) == 0 else "unrelated done"

    rt = Runtime(FunctionProvider(outside))
    results: list[str] = []
    outer = threading.Thread(
        target=lambda: results.append(rt.exec("outer", tools=[worker, rm_rf], tools_deny=["rm_rf"]))
    )
    outer.start()
    assert entered.wait(10)

    def unrelated() -> None:
        seen.append(get_current_runtime())
        results.append(rt.exec("request", tools=[rm_rf]))

    server = threading.Thread(target=unrelated)  # started by the test, not by the tool body
    server.start()
    server.join(10)
    release.set()
    outer.join(10)
    assert sorted(results) == ["done", "unrelated done"]
    assert seen == [None]
    assert RAN == ["rm_rf"]  # the unrelated exec's own rules allow it
