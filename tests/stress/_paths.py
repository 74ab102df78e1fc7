"""Every path by which a model's tool call can reach a tool, as one function each.

A *path* runs one exec (or ``run_tools``) in which the model calls the tool
named ``target`` once, and returns the result messages answering that name.
The model is a ``FunctionProvider`` following one script per conversation, so
nested execs (each with its own first user message) get their own turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from openprogram import (
    Registry,
    Runtime,
    Tool,
    ToolCall,
    ToolResultMessage,
    agentic_function,
    function,
)
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Approval, run_tools_sync
from openprogram.testing import FunctionProvider, call

from ._zoo import JOURNAL

TARGET = "target"


class Conversations:
    """``FunctionProvider`` logic: a script per conversation, keyed by its first user message."""

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        self.scripts = scripts

    def __call__(self, request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        for key, script in self.scripts.items():
            if first.text.startswith(key):
                return script[turn] if turn < len(script) else "done"
        raise AssertionError(f"no script for {first.text!r}")


@function(register_globally=False)
def ok_tool() -> str:
    """A harmless tool that shares batches with the target."""
    return "ok"


@function(register_globally=False, parallel_safe=False)
def serial_tool() -> str:
    """A tool that makes its batch sequential."""
    return "serial"


def _calls_target(text: str) -> list[Any]:
    return [call(TARGET, text=text), "done"]


def _results(messages: Sequence[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage) and m.tool_name == TARGET]


class Setup:
    """What a path runs with: the target's menu entry, vetoes, the approval hook."""

    def __init__(
        self,
        target: Any,
        *,
        deny: Sequence[str] = (),
        approval: Approval | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.target = target
        self.deny = list(deny)
        self.approval = approval
        self.registry = registry if registry is not None else Registry()
        self.all_results: list[ToolResultMessage] = []

    @property
    def tools(self) -> list[Any] | None:
        """``None`` for a registry-only target (a lazy card): the exec uses the registry."""
        return None if self.target is None else [ok_tool, self.target]

    def runtime(self, scripts: dict[str, list[Any]], **options: Any) -> Runtime:
        options.setdefault("approval", self.approval)
        return Runtime(FunctionProvider(Conversations(scripts)), registry=self.registry, **options)

    def options(self, **extra: Any) -> dict[str, Any]:
        return {"tools": self.tools, "tools_deny": self.deny, **extra}

    def collect(self, rt: Runtime) -> list[ToolResultMessage]:
        assert rt.last_run is not None
        found = _results(rt.last_run.messages)
        self.all_results.extend(found)
        return found


def single(s: Setup) -> list[ToolResultMessage]:
    rt = s.runtime({"go": _calls_target("single")})
    assert rt.exec("go", **s.options()) == "done"
    return s.collect(rt)


def parallel(s: Setup) -> list[ToolResultMessage]:
    rt = s.runtime({"go": [[call("ok_tool"), call(TARGET, text="p"), call("ok_tool")], "done"]})
    assert rt.exec("go", **s.options()) == "done"
    return s.collect(rt)


def sequential(s: Setup) -> list[ToolResultMessage]:
    rt = s.runtime({"go": [[call("ok_tool"), call(TARGET, text="s")], "done"]})
    assert rt.exec("go", **s.options(parallel_tool_calls=False)) == "done"
    return s.collect(rt)


def serial_batch(s: Setup) -> list[ToolResultMessage]:
    tools = None if s.tools is None else [*s.tools, serial_tool]
    rt = s.runtime({"go": [[call("serial_tool"), call(TARGET, text="u")], "done"]})
    assert rt.exec("go", **{**s.options(), "tools": tools}) == "done"
    return s.collect(rt)


def async_exec(s: Setup) -> list[ToolResultMessage]:
    rt = s.runtime({"go": _calls_target("async")})
    assert asyncio.run(rt.async_exec("go", **s.options())) == "done"
    return s.collect(rt)


def stream(s: Setup) -> list[ToolResultMessage]:
    rt = s.runtime({"go": _calls_target("stream")})

    async def drain() -> None:
        async for _ in rt.stream("go", **s.options()):
            pass

    asyncio.run(drain())
    return s.collect(rt)


def _nested(s: Setup, inner: Callable[[Runtime], str], *, sync: bool) -> list[ToolResultMessage]:
    if sync:

        @agentic_function(register_globally=False)
        def outer_agent(runtime: Runtime) -> str:
            """Run an inner exec."""
            return inner(runtime)

        agent: Any = outer_agent
    else:

        @agentic_function(register_globally=False, name="outer_agent")
        async def async_agent(runtime: Runtime) -> str:
            """Run an inner exec."""
            return inner(runtime)  # a sync exec inside an async body

        agent = async_agent

    scripts = {"go": [call("outer_agent"), "done"], "inner": _calls_target("nested")}
    rt = s.runtime(scripts)
    tools = None if s.tools is None else [*s.tools, agent]
    if tools is None:  # registry-only target: the agent joins the registry for this run
        s.registry.register(agent.tool, replace=True)
    assert rt.exec("go", **{**s.options(), "tools": tools}) == "done"
    assert rt.last_run is not None
    return _results(s.all_results)


def nested_inherit(s: Setup) -> list[ToolResultMessage]:
    def inner(runtime: Runtime) -> str:
        out = runtime.exec("inner")
        assert runtime.last_run is not None
        s.all_results.extend(_results(runtime.last_run.messages))
        return str(out)

    return _nested(s, inner, sync=True)


def nested_explicit(s: Setup) -> list[ToolResultMessage]:
    def inner(runtime: Runtime) -> str:
        tools = [ok_tool, s.target] if s.target is not None else None
        out = runtime.exec("inner", tools=tools)  # the outer vetoes still apply
        assert runtime.last_run is not None
        s.all_results.extend(_results(runtime.last_run.messages))
        return str(out)

    return _nested(s, inner, sync=False)


def nested_other_runtime(s: Setup) -> list[ToolResultMessage]:
    def inner(runtime: Runtime) -> str:
        # A fresh runtime without the approval hook: vetoes still come from the scope.
        other = Runtime(runtime.provider, registry=s.registry)
        tools = [ok_tool, s.target] if s.target is not None else None
        out = other.exec("inner", tools=tools)
        assert other.last_run is not None
        s.all_results.extend(_results(other.last_run.messages))
        return str(out)

    return _nested(s, inner, sync=True)


def nested_thread(s: Setup) -> list[ToolResultMessage]:
    """The inner exec runs on a thread the agent's body starts (no context is copied there)."""

    def inner(runtime: Runtime) -> str:
        def work() -> str:
            out = runtime.exec("inner")
            assert runtime.last_run is not None
            s.all_results.extend(_results(runtime.last_run.messages))
            return str(out)

        with ThreadPoolExecutor(1) as pool:
            return pool.submit(work).result()

    return _nested(s, inner, sync=True)


def hosted(s: Setup) -> list[ToolResultMessage]:
    """``run_tools`` (no model): a host runs a call from its own loop."""
    if s.target is None:
        return []  # run_tools takes tools, not a registry
    tools = [] if TARGET in s.deny else [ok_tool, s.target]
    results = run_tools_sync(
        [ToolCall("h1", TARGET, {"text": "hosted"})], tools, approval=s.approval
    )
    s.all_results.extend(results)
    return results


PATHS: dict[str, Callable[[Setup], list[ToolResultMessage]]] = {
    "single": single,
    "parallel": parallel,
    "sequential": sequential,
    "serial_batch": serial_batch,
    "async_exec": async_exec,
    "stream": stream,
    "nested_inherit": nested_inherit,
    "nested_explicit": nested_explicit,
    "nested_other_runtime": nested_other_runtime,
    "nested_thread": nested_thread,
    "hosted": hosted,
}


# -- the target in every tool form ---------------------------------------------------------


def _body(text: str = "") -> str:
    JOURNAL.add(TARGET, {"text": text})
    return "TARGET RAN"


async def _async_body(text: str = "") -> str:
    return _body(text)


_PARAMS = {"type": "object", "properties": {"text": {"type": "string"}}}


def target_forms(**options: Any) -> dict[str, Any]:
    """The target in each form; ``options`` (e.g. requires_approval) where a form takes them."""

    def target(text: str = "") -> str:
        """The tool under test."""
        return _body(text)

    async def async_target(text: str = "") -> str:
        """The tool under test (async)."""
        return _body(text)

    def agentic_target(text: str = "") -> str:
        """The tool under test (agentic)."""
        return _body(text)

    forms: dict[str, Any] = {
        "function": function(target, register_globally=False, **options),
        "async": function(async_target, name=TARGET, register_globally=False, **options),
        "agentic": agentic_function(
            agentic_target, name=TARGET, register_globally=False, **options
        ),
        "handwritten": Tool(
            name=TARGET, parameters=_PARAMS, execute=lambda a: _body(a.get("text", "")), **options
        ),
    }
    if not options:  # these forms carry no options of their own
        forms["dict"] = {
            "spec": {"name": TARGET, "parameters": _PARAMS},
            "execute": lambda a: _body(a.get("text", "")),
        }
        forms["object"] = _SpecTarget()
        forms["plain"] = target
    return forms


class _SpecTarget:
    spec: ClassVar[dict[str, Any]] = {
        "name": TARGET,
        "description": "The tool under test.",
        "parameters": _PARAMS,
    }

    async def execute(self, args: dict[str, Any]) -> str:
        return await _async_body(args.get("text", ""))


LAZY_TARGET = Tool(name=TARGET, parameters=_PARAMS, execute=lambda a: _body(a.get("text", "")))
"""Target of a lazy registry card (``stress._paths:LAZY_TARGET``)."""
LAZY_TARGET_APPROVAL = Tool(
    name=TARGET,
    parameters=_PARAMS,
    execute=lambda a: _body(a.get("text", "")),
    requires_approval=True,
)
"""The same, requiring approval."""
