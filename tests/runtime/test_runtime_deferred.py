"""Deferred tools (L6) end to end: catalog in the system prompt, tool_search, loaded schemas."""

from __future__ import annotations

from typing import Any

from openprogram.decorators import agentic_function, function
from openprogram.events import ToolsResolved
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.runtime import TOOL_SEARCH_NAME, Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call

ran: list[str] = []


@function(register_globally=False, defer=True)
def stock_price(ticker: str) -> str:
    """Latest stock price for a ticker symbol.

    Args:
        ticker: e.g. "ACME".
    """
    ran.append(ticker)
    return f"{ticker}: 42.0"


@function(register_globally=False)
def echo(text: str) -> str:
    """Echo."""
    return text


def names(request: ProviderRequest) -> list[str]:
    return [spec["name"] for spec in request.tools]


def test_deferred_tool_is_listed_in_the_catalog_and_loaded_by_tool_search() -> None:
    ran.clear()
    script = [
        call(TOOL_SEARCH_NAME, query="select:stock_price"),
        call("stock_price", ticker="ACME"),
        "ACME is at 42.",
    ]
    provider = ScriptedProvider(script)
    rt = Runtime(provider, system="Be brief.")
    assert rt.exec("Price of ACME?", tools=[echo, stock_price]) == "ACME is at 42."
    first, second, _ = provider.requests
    assert names(first) == ["echo", TOOL_SEARCH_NAME]  # the schema is not sent before loading
    assert first.system is not None
    assert first.system.startswith("Be brief.")
    assert "stock_price" in first.system
    assert TOOL_SEARCH_NAME in first.system
    search_result = second.messages[-1]
    assert isinstance(search_result, ToolResultMessage)
    assert not search_result.is_error
    assert '"name": "stock_price"' in search_result.content
    assert names(second) == ["echo", "stock_price"]  # loaded: joins the next request
    assert ran == ["ACME"]
    assert rt.last_run is not None
    resolved = [e for e in rt.last_run.events if isinstance(e, ToolsResolved)]
    assert [e.deferred for e in resolved] == [("stock_price",), ()]


def test_calling_a_deferred_tool_before_loading_it_is_refused() -> None:
    ran.clear()
    provider = ScriptedProvider([call("stock_price", ticker="X"), "ok"])
    Runtime(provider).exec("x", tools=[stock_price])
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.is_error
    assert "deferred and not loaded" in result.content
    assert "select:stock_price" in result.content
    assert ran == []


def test_keyword_search_and_no_match() -> None:
    provider = ScriptedProvider(
        [
            call(TOOL_SEARCH_NAME, query="weather forecast"),
            call(TOOL_SEARCH_NAME, query="stock"),
            "ok",
        ]
    )
    Runtime(provider).exec("x", tools=[stock_price])
    miss = provider.requests[1].messages[-1]
    hit = provider.requests[2].messages[-1]
    assert isinstance(miss, ToolResultMessage)
    assert miss.is_error
    assert "stock_price" in miss.content
    assert isinstance(hit, ToolResultMessage)
    assert not hit.is_error
    assert names(provider.requests[2]) == ["stock_price"]


def test_tool_search_never_finds_what_the_policy_denies() -> None:
    registry = Registry()
    registry.register(stock_price)
    registry.register(echo)
    provider = ScriptedProvider([call(TOOL_SEARCH_NAME, query="select:stock_price"), "ok"])
    Runtime(provider, registry=registry).exec("x", tools_deny=["stock_price"])
    first = provider.requests[0]
    assert names(first) == ["echo"]
    assert first.system is None  # nothing deferred is allowed, so no catalog
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.is_error  # tool_search is not offered


def test_loaded_tools_join_nested_execs_below() -> None:
    menus: list[list[str]] = []

    @agentic_function(register_globally=False)
    def analyst(runtime: Runtime) -> str:
        """Analyse with the tools loaded so far."""
        return str(runtime.exec("inner"))

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        if first.text == "inner":
            menus.append(names(request))
            return "inner done"
        step = len(request.messages)
        if step == 1:
            return call(TOOL_SEARCH_NAME, query="select:stock_price")
        if step == 3:
            return call("analyst")
        return "outer done"

    Runtime(FunctionProvider(reply)).exec("outer", tools=[analyst, stock_price])
    assert menus == [["analyst", "stock_price"]]
