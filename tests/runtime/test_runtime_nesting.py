"""Nesting: inherited menus and vetoes (laws 7 and 8), depth cap, isolation of concurrent runs."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

from openprogram.context import get_current_tools
from openprogram.decorators import agentic_function, function
from openprogram.events import AgentInvoked
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Runtime, ToolScope
from openprogram.testing import FunctionProvider, ScriptedProvider, call


@function(register_globally=False)
def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


@function(register_globally=False)
def danger() -> str:
    """Something risky."""
    return "boom"


def offered(request: ProviderRequest) -> list[str]:
    return [spec["name"] for spec in request.tools]


def first_user_text(request: ProviderRequest) -> str:
    message = request.messages[0]
    assert isinstance(message, UserMessage)
    return message.text


def test_inner_exec_without_tools_inherits_the_outer_menu() -> None:
    @agentic_function(register_globally=False)
    def research(topic: str, runtime: Runtime) -> str:
        """Research a topic."""
        return str(runtime.exec(f"inner: {topic}"))

    def reply(request: ProviderRequest) -> Any:
        inner = first_user_text(request).startswith("inner")
        if len(request.messages) == 1:
            return call("lookup", q="x") if inner else call("research", topic="t")
        return "inner answer" if inner else "outer answer"

    provider = FunctionProvider(reply)
    rt = Runtime(provider)
    assert rt.exec("outer", tools=[research, lookup]) == "outer answer"
    inner_requests = [r for r in provider.requests if first_user_text(r).startswith("inner")]
    assert inner_requests
    assert all(offered(r) == ["research", "lookup"] for r in inner_requests)
    assert "found x" in [
        m.content for m in inner_requests[-1].messages if isinstance(m, ToolResultMessage)
    ]


def test_inner_exec_narrows_with_its_own_deny_and_keeps_outer_vetoes_on_an_explicit_list() -> None:
    menus: dict[str, list[str]] = {}

    @agentic_function(register_globally=False)
    def agent(mode: str, runtime: Runtime) -> str:
        """Run an inner loop."""
        if mode == "narrow":
            return str(runtime.exec("inner narrow", tools_deny=["lookup"]))
        return str(runtime.exec("inner explicit", tools=[lookup, danger]))

    def reply(request: ProviderRequest) -> Any:
        first = first_user_text(request)
        menus.setdefault(first, offered(request))
        if first == "outer" and len(request.messages) == 1:
            return [call("agent", mode="narrow"), call("agent", mode="explicit")]
        return "done"

    rt = Runtime(FunctionProvider(reply))
    rt.exec("outer", tools=[agent, lookup, danger], tools_deny=["danger"])
    assert menus["outer"] == ["agent", "lookup"]
    assert menus["inner narrow"] == ["agent"]  # narrowed further by the inner deny
    assert menus["inner explicit"] == ["lookup"]  # the outer deny still vets an explicit list


def test_explicit_inner_tools_may_bring_helpers_the_outer_menu_lacks() -> None:
    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Run an inner loop with its own helper."""
        return str(runtime.exec("inner", tools=[lookup]))

    menus: dict[str, list[str]] = {}

    def reply(request: ProviderRequest) -> Any:
        menus.setdefault(first_user_text(request), offered(request))
        if first_user_text(request) == "outer" and len(request.messages) == 1:
            return call("agent")
        return "ok"

    Runtime(FunctionProvider(reply)).exec("outer", tools=[agent])
    assert menus == {"outer": ["agent"], "inner": ["lookup"]}


def test_inner_call_to_an_outer_only_tool_is_never_executed() -> None:
    ran: list[str] = []

    @function(register_globally=False)
    def outer_only() -> str:
        """Only for the outer loop."""
        ran.append("outer_only")
        return "ran"

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Inner loop limited to lookup."""
        return str(runtime.exec("inner", tools=[lookup]))

    def reply(request: ProviderRequest) -> Any:
        if len(request.messages) == 1:
            return call("agent") if first_user_text(request) == "outer" else call("outer_only")
        return "ok"

    provider = FunctionProvider(reply)
    Runtime(provider).exec("outer", tools=[agent, outer_only])
    assert ran == []
    inner_last = [r for r in provider.requests if first_user_text(r) == "inner"][-1].messages[-1]
    assert isinstance(inner_last, ToolResultMessage)
    assert inner_last.is_error


def test_nested_exec_does_not_inherit_tool_choice() -> None:
    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Inner loop."""
        return str(runtime.exec("inner"))

    choices: dict[str, Any] = {}

    def reply(request: ProviderRequest) -> Any:
        choices.setdefault(first_user_text(request), request.tool_choice)
        if first_user_text(request) == "outer" and len(request.messages) == 1:
            return call("agent")
        return "ok"

    Runtime(FunctionProvider(reply)).exec("outer", tools=[agent], tool_choice="required")
    assert choices == {"outer": "required", "inner": "auto"}


def test_depth_cap_is_an_error_result_never_a_recursion_error() -> None:
    @agentic_function(register_globally=False)
    def recurse(runtime: Runtime) -> str:
        """Go one level deeper."""
        return str(runtime.exec("deeper"))

    def reply(request: ProviderRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            return f"level answer ({last.content[:60]})"
        return call("recurse")

    provider = FunctionProvider(reply)
    rt = Runtime(provider, max_depth=3)
    out = rt.exec("top", tools=[recurse])
    assert out.startswith("level answer")
    errors = [
        m.content
        for r in provider.requests
        for m in r.messages
        if isinstance(m, ToolResultMessage) and m.is_error
    ]
    assert errors
    assert all("nesting depth" in e for e in errors)
    assert "max_depth=3" in errors[0]
    assert rt.last_run is not None
    depths = {e.depth for e in rt.last_run.events_of(AgentInvoked)}
    assert depths == {1, 2, 3}


def test_plain_tools_calling_exec_beyond_the_cap_get_an_error_result() -> None:
    rt: Runtime

    @function(register_globally=False)
    def sneaky() -> str:
        """A plain function that opens an exec."""
        return str(rt.exec("inside sneaky", tools=[]))

    def reply(request: ProviderRequest) -> Any:
        if isinstance(request.messages[-1], ToolResultMessage):
            return "done"
        return call("sneaky") if first_user_text(request) == "top" else "inner text"

    rt = Runtime(FunctionProvider(reply), max_depth=1)
    rt.exec("top", tools=[sneaky])
    assert rt.last_run is not None
    result = next(m for m in rt.last_run.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert "nesting depth limit (max_depth=1)" in result.content


def test_nested_runs_leave_steering_and_follow_ups_to_the_top_level() -> None:
    rt: Runtime

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime) -> str:
        """Inner loop."""
        runtime.follow_up("top-level follow-up")
        return str(runtime.exec("inner"))

    def reply(request: ProviderRequest) -> Any:
        first = first_user_text(request)
        if first == "outer" and len(request.messages) == 1:
            return call("agent")
        return f"{first} answer {len(request.messages)}"

    provider = FunctionProvider(reply)
    rt = Runtime(provider)
    rt.exec("outer", tools=[agent])
    inner = [r for r in provider.requests if first_user_text(r) == "inner"]
    outer = [r for r in provider.requests if first_user_text(r) == "outer"]
    assert len(inner) == 1
    assert outer[-1].messages[-1] == UserMessage("top-level follow-up")


def test_sync_exec_inside_an_async_agentic_body_keeps_the_scope() -> None:
    seen: list[Any] = []

    @agentic_function(register_globally=False)
    async def agent(runtime: Runtime) -> str:
        """Async body calling the sync API."""
        seen.append(get_current_tools())
        return str(runtime.exec("inner"))  # inside a running loop: hops to a worker thread

    def reply(request: ProviderRequest) -> Any:
        if first_user_text(request) == "outer" and len(request.messages) == 1:
            return call("agent")
        seen.append(offered(request))
        return "ok"

    Runtime(FunctionProvider(reply)).exec("outer", tools=[agent, lookup])
    assert isinstance(seen[0], ToolScope)
    assert seen[1] == ["agent", "lookup"]


# -- isolation under concurrency --------------------------------------------------------------


def _isolation_provider(log: list[tuple[int, str, list[str]]]) -> FunctionProvider:
    def reply(request: ProviderRequest) -> Any:
        first = first_user_text(request)
        kind, number = first.split()
        log.append((int(number), kind, offered(request)))
        if len(request.messages) == 1:
            return call("agent", n=int(number)) if kind == "outer" else call(f"t{number}")
        return f"{kind} {number} done"

    return FunctionProvider(reply)


def _member_tool(i: int) -> Any:
    def member() -> str:
        return f"member {i}"

    return function(member, name=f"t{i}", description=f"Tool {i}.", register_globally=False)


def _check_isolation(log: list[tuple[int, str, list[str]]], count: int) -> None:
    assert len(log) == 4 * count  # outer: 2 calls, inner: 2 calls, per run
    for n, kind, names in log:
        assert names == ["agent", f"t{n}"], (n, kind, names)


def test_100_concurrent_nested_runs_as_tasks_keep_their_own_menus() -> None:
    @agentic_function(register_globally=False)
    async def agent(n: int, runtime: Runtime) -> str:
        """Async inner loop."""
        await asyncio.sleep(0)  # interleave with the other runs
        return str(await runtime.async_exec(f"inner {n}"))

    @agentic_function(name="agent", register_globally=False)
    def sync_agent(n: int, runtime: Runtime) -> str:
        """Sync inner loop (runs on a worker thread with its own event loop)."""
        return str(runtime.exec(f"inner {n}"))

    log: list[tuple[int, str, list[str]]] = []
    rt = Runtime(_isolation_provider(log))

    async def one(i: int) -> str:
        chosen = agent if i % 2 else sync_agent
        return str(await rt.async_exec(f"outer {i}", tools=[chosen, _member_tool(i)]))

    async def main() -> list[str]:
        return await asyncio.gather(*(one(i) for i in range(100)))

    assert asyncio.run(main()) == [f"outer {i} done" for i in range(100)]
    _check_isolation(log, 100)


def test_concurrent_nested_runs_in_threads_keep_their_own_menus() -> None:
    @agentic_function(register_globally=False)
    def agent(n: int, runtime: Runtime) -> str:
        """Sync inner loop."""
        return str(runtime.exec(f"inner {n}"))

    log: list[tuple[int, str, list[str]]] = []
    rt = Runtime(_isolation_provider(log))
    outputs: dict[int, str] = {}

    def one(i: int) -> None:
        outputs[i] = str(rt.exec(f"outer {i}", tools=[agent, _member_tool(i)]))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outputs == {i: f"outer {i} done" for i in range(24)}
    _check_isolation(log, 24)


def test_scripted_inner_runs_see_the_runtime_and_parent_scope_only_while_a_tool_runs() -> None:
    probes: list[Any] = []

    @function(register_globally=False)
    def probe() -> str:
        """Look at the scope."""
        probes.append(get_current_tools())
        return "ok"

    rt = Runtime(ScriptedProvider([call("probe"), "done"]))
    rt.exec("x", tools=[probe])
    assert isinstance(probes[0], ToolScope)
    assert probes[0].depth == 1
    assert get_current_tools() is None
    assert re.fullmatch(r"run_[0-9a-f]{12}", probes[0].run.run_id)


def test_nested_sync_agentic_functions_never_wait_on_their_parents_threads() -> None:
    barrier = threading.Barrier(8 * 2, timeout=10)  # every inner body of every agent at once

    @function(register_globally=False)
    def leaf(k: int) -> int:
        """Wait for all the other leaves."""
        barrier.wait()
        return k

    @agentic_function(register_globally=False)
    def agent(n: int, runtime: Runtime) -> str:
        """A sync agentic function holding a thread while its inner loop runs tools."""
        return str(runtime.exec(f"inner {n}", tools=[leaf]))

    def reply(request: ProviderRequest) -> Any:
        first = first_user_text(request)
        if len(request.messages) > 1:
            return "done"
        if first == "outer":
            return [call("agent", n=i) for i in range(8)]
        return [call("leaf", k=1), call("leaf", k=2)]

    rt = Runtime(FunctionProvider(reply))
    assert rt.exec("outer", tools=[agent]) == "done"
    assert rt.last_run is not None
    results = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["done"] * 8
