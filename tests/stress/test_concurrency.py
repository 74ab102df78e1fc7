"""Concurrent runs never see each other's menu, runtime, steering queue or events, and leak nothing.

200 ``async_exec`` runs on one event loop (the fake provider), and 32 threads
calling sync ``exec`` against a loopback OpenAI-wire server (real httpx
clients, one event loop per exec), each run nested three deep:

- level 1: ``tools=[agents, own tool, shared, forbidden]`` with ``tools_deny``
  (every run denies ``forbidden``; every third also denies ``shared``);
- level 2: a sync agentic function (worker thread) whose exec inherits the menu;
- level 3: an async agentic function whose exec passes an explicit list that
  the inherited vetoes still narrow.

Every run has its own ``Runtime`` (deps, observer, approval hook, steering
message). Each model request is checked against the menu its run and level
must have; each tool checks the runtime and deps it sees. Afterwards thread,
task and file-descriptor counts return to their baselines (idle pool workers
retire after ``openprogram._threads.IDLE_SECONDS``: the checks poll for that,
bounded), and any ``ResourceWarning`` fails the test (see ``conftest.py``).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from providers._server import Reply, Seen, WireServer, sse

from openprogram import (
    Runtime,
    Tool,
    ToolCall,
    ToolContext,
    _threads,
    agentic_function,
    function,
    get_current_runtime,
)
from openprogram.events import AgentInvoked, Event
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.providers import OpenAIProvider
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call

pytestmark = pytest.mark.model_requests  # loopback wire servers: real requests on purpose

_PROMPT = re.compile(r"^L(\d) run (\d+)$")


@dataclass
class Run:
    """One run's own objects and what it observed."""

    number: int
    events: list[Event] = field(default_factory=list)
    consulted: list[str] = field(default_factory=list)
    tool_calls: list[tuple[int, int]] = field(default_factory=list)  # (level, run seen in deps)
    problems: list[str] = field(default_factory=list)
    runtime: Runtime | None = None

    @property
    def denies_shared(self) -> bool:
        return self.number % 3 == 0

    def approve(self, c: ToolCall) -> str | None:
        self.consulted.append(c.name)
        return None

    def menu(self, level: int) -> set[str]:
        """The names a request of this run at ``level`` must offer."""
        names = {f"own_{self.number}"} | (set() if self.denies_shared else {"shared"})
        return names if level == 3 else names | {"level2_agent", "level3_agent"}


class World:
    """Every run, and what the model saw."""

    def __init__(self, count: int) -> None:
        self.runs = [Run(i) for i in range(count)]
        self.forbidden_ran: list[int] = []
        self.lock = threading.Lock()

    def problem(self, text: str) -> None:
        with self.lock:
            self.runs[0].problems.append(text)

    def decide(self, first: str, turn: int, offered: list[str], steering: list[str]) -> Any:
        """The model: checks what it was offered, then calls the next level or answers."""
        match = _PROMPT.match(first)
        if match is None:
            self.problem(f"unexpected prompt {first!r}")
            return "?"
        level, number = int(match[1]), int(match[2])
        run = self.runs[number]
        if set(offered) != run.menu(level):
            self.problem(f"run {number} level {level} offered {sorted(offered)}")
        expected_steering = [f"steer-{number}"] if level == 1 else []
        if steering != expected_steering:
            self.problem(f"run {number} level {level} saw steering {steering}")
        if turn > 0:
            return f"answer L{level} run {number}"
        calls = [call(f"own_{number}"), call("forbidden")]
        if level < 3:
            calls.append(call(f"level{level + 1}_agent"))
        return calls


def _own_tool(world: World, number: int) -> Tool:
    def own(ctx: ToolContext) -> str:
        run = world.runs[number]
        seen = ctx.deps["run"] if isinstance(ctx.deps, dict) else None
        # A tool body gets a view of the run's runtime bound to its call: equal, not identical.
        if ctx.runtime != run.runtime or get_current_runtime() != run.runtime:
            world.problem(f"own_{number} ran with another run's runtime")
        run.tool_calls.append((0, seen))
        return f"own {number}"

    return function(
        own, name=f"own_{number}", description="This run's own tool.", register_globally=False
    )


def _agents(world: World) -> tuple[Any, Any, Tool, Tool]:
    @function(register_globally=False)
    def shared() -> str:
        """A tool every run may share."""
        return "shared"

    @function(register_globally=False)
    def forbidden(ctx: ToolContext) -> str:
        """Denied in every run."""
        world.forbidden_ran.append(ctx.deps["run"])
        return "must not run"

    @agentic_function(register_globally=False)
    def level2_agent(runtime: Runtime) -> str:
        """Level 2: a sync body on a worker thread; its exec inherits the menu."""
        number = runtime.deps["run"]
        return str(runtime.exec(f"L2 run {number}"))

    @agentic_function(register_globally=False)
    async def level3_agent(runtime: Runtime) -> str:
        """Level 3: an async body; its explicit list is still narrowed by the outer vetoes."""
        number = runtime.deps["run"]
        tools = [world_tools[number], shared, forbidden]
        return str(await runtime.async_exec(f"L3 run {number}", tools=tools))

    world_tools = [_own_tool(world, run.number) for run in world.runs]
    world.own_tools = world_tools  # type: ignore[attr-defined]
    return level2_agent, level3_agent, shared, forbidden


def _start(world: World, provider: Any, number: int) -> tuple[Runtime, str, dict[str, Any]]:
    level2, level3, shared, forbidden = world.agents  # type: ignore[attr-defined]
    run = world.runs[number]
    rt = Runtime(provider, deps={"run": number}, observers=[run.events.append],
                 approval=run.approve)  # fmt: skip
    run.runtime = rt
    rt.steer(f"steer-{number}")
    deny = ["forbidden", "shared"] if run.denies_shared else ["forbidden"]
    tools = [level2, level3, world.own_tools[number], shared, forbidden]  # type: ignore[attr-defined]
    return rt, f"L1 run {number}", {"tools": tools, "tools_deny": deny}


def _check(world: World, outputs: list[Any]) -> None:
    problems = [p for run in world.runs for p in run.problems]
    assert problems == []
    assert world.forbidden_ran == []
    assert outputs == [f"answer L1 run {run.number}" for run in world.runs]
    for run in world.runs:
        invoked = [e for e in run.events if isinstance(e, AgentInvoked)]
        assert sorted(e.depth for e in invoked) == [1, 2, 3]
        ids = {e.run_id for e in invoked}
        assert {e.run_id for e in run.events} == ids  # nothing from another run
        by_depth = {e.depth: e for e in invoked}
        assert by_depth[2].parent_run_id == by_depth[1].run_id
        assert by_depth[3].parent_run_id == by_depth[2].run_id
        assert [seen for _, seen in run.tool_calls] == [run.number] * 3  # own tool, each level
        own = f"own_{run.number}"
        assert set(run.consulted) <= {own, "shared", "level2_agent", "level3_agent"}
        assert run.consulted.count(own) == 3


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 15.0) -> None:
    """Poll ``condition`` (idle pool workers retire after IDLE_SECONDS, sockets close lazily)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not back to baseline after {timeout_s} s: {what}")
        gc.collect()
        time.sleep(0.05)


def _new_threads(before: set[threading.Thread]) -> list[str]:
    """Threads alive now that were not before (those of earlier tests may end meanwhile)."""
    return [t.name for t in threading.enumerate() if t not in before]


def _open_clients() -> int:
    return sum(isinstance(o, httpx.AsyncClient) and not o.is_closed for o in gc.get_objects())


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _function_model(world: World) -> FunctionProvider:
    def reply(request: ProviderRequest) -> Any:
        users = [m.text for m in request.messages if isinstance(m, UserMessage)]
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        offered = [spec["name"] for spec in request.tools]
        return world.decide(users[0], turn, offered, [u for u in users if u.startswith("steer")])

    return FunctionProvider(reply)


def test_200_concurrent_async_execs_nested_three_deep_stay_isolated() -> None:
    world = World(200)
    world.agents = _agents(world)  # type: ignore[attr-defined]
    provider = _function_model(world)
    threads_before = set(threading.enumerate())

    async def main() -> list[Any]:
        started = [_start(world, provider, run.number) for run in world.runs]
        outputs = await asyncio.gather(*(rt.async_exec(text, **kw) for rt, text, kw in started))
        assert asyncio.all_tasks() == {asyncio.current_task()}  # no task left running
        return list(outputs)

    outputs = asyncio.run(main())
    _check(world, outputs)
    _wait_for(lambda: _threads.active_workers() == 0, "idle tool workers")
    _wait_for(lambda: _new_threads(threads_before) == [], "threads started by the runs")


# -- 32 threads, real HTTP -------------------------------------------------------------------


def _openai_reply(world: World) -> Callable[[Seen], Reply]:
    """The same model, speaking the OpenAI Chat Completions wire."""

    def reply(seen: Seen) -> Reply:
        body = seen.json
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        offered = [t["function"]["name"] for t in body.get("tools", ())]
        decided = world.decide(users[0], turn, offered, [u for u in users if u.startswith("steer")])
        chunks: list[Any] = []
        if isinstance(decided, str):
            chunks.append({"choices": [{"index": 0, "delta": {"content": decided}}]})
            finish = "stop"
        else:
            calls = [{"index": i, "id": f"c{i}", "type": "function",
                      "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))}}
                     for i, c in enumerate(decided)]  # fmt: skip
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
            finish = "tool_calls"
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        return Reply(chunks=[sse(*chunks, "[DONE]")])

    return reply


def test_32_threads_of_sync_execs_over_http_nested_three_deep_stay_isolated() -> None:
    world = World(32)
    world.agents = _agents(world)  # type: ignore[attr-defined]
    with WireServer() as wire:
        wire.push(*[_openai_reply(world)] * (32 * 3 * 2))
        provider = OpenAIProvider(base_url=f"{wire.url}/v1", api_key="k-test", model="m")
        gc.collect()
        threads_before, fds_before = set(threading.enumerate()), _fds()
        clients_before = _open_clients()
        outputs: list[Any] = [None] * 32
        errors: list[BaseException] = []

        def worker(number: int) -> None:
            try:
                rt, text, kw = _start(world, provider, number)
                outputs[number] = rt.exec(text, **kw)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        _check(world, outputs)
        assert len(wire.requests) == 32 * 3 * 2
        _wait_for(lambda: _threads.active_workers() == 0, "idle tool workers")
        _wait_for(lambda: _new_threads(threads_before) == [], "threads started by the runs")
        _wait_for(lambda: _fds() <= fds_before, "file descriptors (sockets)")
        # One client per exec's event loop, each closed when its loop shut down.
        _wait_for(lambda: _open_clients() <= clients_before, "open httpx clients")
