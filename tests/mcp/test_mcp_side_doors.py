"""No side door reaches an MCP tool the caller vetoed (issue 13, follow-up).

An outer exec vetoes the server's ``add`` tool (by name, by allow cap, or
through a channel the server is unsafe in) and calls an agentic function
whose body reaches for it another way: an inner exec in the body or on a
thread the body starts (its model loads the deferred tool with
``tool_search``, then calls it), a ``choices=`` pick, or a structured-output
exec whose model calls it next to its submit tool. The
server counts every ``add`` it runs (per first argument), so "never ran" is
read on the server itself; each path's control run shows the same call does
reach the server when nothing vetoes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from _mcp_servers import CALLS, HttpServer
from pydantic import BaseModel

from openprogram import Runtime, agentic_function
from openprogram.mcp import register_server
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.runtime import TOOL_SEARCH_NAME
from openprogram.testing import FunctionProvider, call

ADD = "web_add"
_numbers = itertools.count(9_100)
"""A fresh first argument per run: the server's count of it is this run's alone."""


class Verdict(BaseModel):
    ok: bool


PATHS = ["body", "thread", "pick", "structured"]
VETOES: dict[str, dict[str, Any]] = {
    "deny": {"tools_deny": [ADD]},
    "allow_cap": {"tools_allow": ["agent"]},
    "channel": {"tools_source": "public"},
}


@pytest.fixture
def web(http_server: HttpServer) -> Iterator[Registry]:
    registry = Registry()
    with register_server(registry, "web", url=http_server.url, unsafe_in="public"):
        yield registry


def _inner(runtime: Runtime, path: str, registry: Registry) -> str:
    if path == "pick":
        (add,) = [t for t in registry.tools() if t.name == ADD]
        return str(runtime.exec("inner", tools=[], choices=[add, "nothing"]))
    if path == "structured":
        return str(runtime.exec("inner", response_format=Verdict))
    if path == "thread":
        with ThreadPoolExecutor(1) as pool:
            return str(pool.submit(runtime.exec, "inner").result())
    return str(runtime.exec("inner"))


def _inner_script(path: str, number: int) -> list[Any]:
    add = call(ADD, a=number, b=1)
    if path == "pick":
        return [f'{{"call": "{ADD}", "arguments": {{"a": {number}, "b": 1}}}}']
    # The server's tools are deferred: the inner model loads the tool, then calls it.
    load = call(TOOL_SEARCH_NAME, query=f"select:{ADD}")
    if path == "structured":
        return [load, [call("submit_result", ok=True), add], "unused"]
    return [load, add, "inner done"]


def _run(registry: Registry, path: str, veto: dict[str, Any]) -> int:
    number = next(_numbers)

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Reach for the server's add tool."""
        return _inner(runtime, path, registry)

    scripts = {"outer": [call("agent"), "done"], "inner": _inner_script(path, number)}

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        script = scripts["outer" if first.text == "outer" else "inner"]
        return script[turn] if turn < len(script) else "done"

    provider = FunctionProvider(reply, native_structured_output=False)  # the submit-tool path
    rt = Runtime(provider, registry=registry)
    try:
        assert rt.exec("outer", **veto) == "done"
        assert rt.last_run is not None
        (agent_result,) = [
            m
            for m in rt.last_run.messages
            if isinstance(m, ToolResultMessage) and m.tool_name == "agent"
        ]
        if path == "structured":
            assert agent_result.content == "ok=True"  # the submission still answers
    finally:
        registry.unregister("agent")
    return CALLS[f"add:{number}"]


@pytest.mark.parametrize("veto", list(VETOES), ids=list(VETOES))
@pytest.mark.parametrize("path", PATHS)
def test_no_path_runs_an_mcp_tool_the_caller_vetoed(web: Registry, path: str, veto: str) -> None:
    assert _run(web, path, VETOES[veto]) == 0


@pytest.mark.parametrize("path", PATHS)
def test_every_path_reaches_the_mcp_tool_when_nothing_vetoes_it(web: Registry, path: str) -> None:
    assert _run(web, path, {}) == 1
