"""MCP cards in the tool loop: deferred catalog, tool_search, toolsets, channels, approval."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _mcp_helpers import Served
from _mcp_servers import CALLS, GENERATED, HttpServer

from openprogram.gates import Policy, resolve
from openprogram.mcp import register_server
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.registry import Registry
from openprogram.runtime import TOOL_SEARCH_NAME, Runtime, run_tools
from openprogram.testing import ScriptedProvider, call


def tool_names(specs: Any) -> list[str]:
    return [spec["name"] for spec in specs]


def test_deferred_cards_cost_a_catalog_line_until_tool_search_loads_them(stdio: Served) -> None:
    provider = ScriptedProvider(
        [
            call(TOOL_SEARCH_NAME, query="select:demo_add"),
            call("demo_add", a=2, b=3),
            "2 + 3 = 5",
        ]
    )
    runtime = Runtime(provider, registry=stdio.registry)
    assert runtime.exec("What is 2 + 3? Use the server.") == "2 + 3 = 5"

    first, second, third = provider.requests
    assert tool_names(first.tools) == [TOOL_SEARCH_NAME]  # no MCP schema before loading
    assert first.system is not None
    assert f"demo_stat_{GENERATED - 1:02d}: Report statistic number" in first.system
    assert "demo_add: Add two integers." in first.system
    every_schema = json.dumps([tool.spec for tool in stdio.registry.tools()])
    assert len(first.system) + len(json.dumps(first.tools)) < len(every_schema) / 2

    assert tool_names(second.tools) == ["demo_add", TOOL_SEARCH_NAME]  # loaded: schema joins
    loaded = next(spec for spec in second.tools if spec["name"] == "demo_add")
    assert loaded["parameters"]["required"] == ["a", "b"]
    answer = third.messages[-1]
    assert isinstance(answer, ToolResultMessage)
    assert (answer.tool_name, answer.content, answer.is_error) == ("demo_add", "5", False)


def test_defer_false_offers_the_schemas_directly(
    http_server: HttpServer, registry: Registry
) -> None:
    with register_server(registry, "web", url=http_server.url, defer=False):
        provider = ScriptedProvider([call("web_add", a=4, b=4), "8"])
        assert Runtime(provider, registry=registry).exec("4 + 4?") == "8"
        offered = tool_names(provider.requests[0].tools)
        assert "web_add" in offered
        assert TOOL_SEARCH_NAME not in offered
        assert provider.requests[0].system is None or "Deferred tools" not in (
            provider.requests[0].system
        )


def test_the_server_name_is_a_toolset_and_toolset_can_be_chosen(
    http_server: HttpServer, stdio: Served
) -> None:
    only_demo = resolve(stdio.registry, Policy(toolset="demo"))
    assert len(only_demo.deferred) == len(stdio.registry)
    assert not only_demo.rejected

    registry = Registry()
    with register_server(registry, "web", url=http_server.url, toolset=["remote", "math"]):
        assert len(resolve(registry, Policy(toolset="math")).deferred) == len(registry)
        assert resolve(registry, Policy(toolset="none")).deferred == ()


def test_unsafe_in_hides_the_servers_tools_from_that_channel(
    http_server: HttpServer, registry: Registry
) -> None:
    with register_server(registry, "web", url=http_server.url, unsafe_in=["public-chat"]):
        public = resolve(registry, Policy(source="public-chat"))
        assert public.offered == ()
        assert public.deferred == ()
        assert {r.layer for r in public.rejected.values()} == {"L3 channel"}
        assert len(resolve(registry, Policy(source="ops-console")).deferred) == len(registry)


def test_requires_approval_denies_without_a_hook_and_asks_the_hook(
    http_server: HttpServer, registry: Registry
) -> None:
    def ask(request: ToolCall) -> str | None:
        return None if request.arguments["a"] < 100 else "too large for this channel"

    with register_server(registry, "web", url=http_server.url, requires_approval=True):
        tools = registry.tools()
        calls = [ToolCall("c1", "web_add", {"a": 501, "b": 1})]
        denied = asyncio.run(run_tools(calls, tools))[0]
        assert denied.is_error
        assert "requires approval" in denied.content
        assert CALLS["add:501"] == 0  # never reached the server

        approved, refused = asyncio.run(
            run_tools([ToolCall("c2", "web_add", {"a": 7, "b": 1}), *calls], tools, approval=ask)
        )
        assert (approved.content, approved.is_error) == ("8", False)
        assert refused.is_error
        assert "too large for this channel" in refused.content
        assert CALLS["add:501"] == 0


def test_an_approval_rule_callable_sees_the_arguments(
    http_server: HttpServer, registry: Registry
) -> None:
    def big(args: Any) -> bool:
        return bool(args.get("a", 0) >= 1000)

    with register_server(registry, "web", url=http_server.url, requires_approval=big):
        small, large = asyncio.run(
            run_tools(
                [
                    ToolCall("c1", "web_add", {"a": 3, "b": 4}),
                    ToolCall("c2", "web_add", {"a": 1000, "b": 1}),
                ],
                registry.tools(),
            )
        )
        assert (small.content, small.is_error) == ("7", False)
        assert large.is_error
        assert CALLS["add:1000"] == 0
