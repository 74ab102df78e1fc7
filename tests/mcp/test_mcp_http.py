"""A streamable-HTTP MCP server on 127.0.0.1: registration, headers, timeouts, restarts."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from _mcp_helpers import run, wait_until
from _mcp_servers import HttpServer

from openprogram.exceptions import UserError
from openprogram.mcp import MCPConnection, MCPConnectionError, aregister_server, register_server
from openprogram.messages import ToolResultMessage
from openprogram.registry import Registry
from openprogram.tools import Tool


def test_http_server_tools_are_registered_and_called(
    http_server: HttpServer, registry: Registry
) -> None:
    with register_server(registry, "web", url=http_server.url) as web:
        assert web.connected
        assert "web_add" in registry
        assert run(registry, "web_add", a=20, b=22).content == "42"
        assert run(registry, "web_files_read", path="a.txt").content == "contents of a.txt"
    assert web.closed
    assert len(registry) == 0  # closing unregisters the server's cards


def test_headers_are_sent_with_every_request(http_server: HttpServer, registry: Registry) -> None:
    with register_server(registry, "web", url=http_server.url, headers={"X-Api-Key": "s3cret"}):
        assert run(registry, "web_header", name="X-Api-Key").content == "s3cret"


def test_aregister_server_and_async_context_manager(
    http_server: HttpServer, registry: Registry
) -> None:
    async def main() -> tuple[str, bool]:
        async with await aregister_server(registry, "web", url=http_server.url) as web:
            tool = {t.name: t for t in registry.tools()}["web_add"]
            result = await tool.execute({"a": 1, "b": 1})
        return result.content, web.closed

    assert asyncio.run(main()) == ("2", True)
    assert len(registry) == 0


def test_prefix_chooses_the_names_and_a_taken_name_fails_the_whole_registration(
    http_server: HttpServer, registry: Registry
) -> None:
    registry.register(Tool(name="add", execute=lambda args: "local add"))
    with pytest.raises(UserError) as info:
        register_server(registry, "web", url=http_server.url, prefix="")
    message = str(info.value)
    assert "'add' (from " in message
    assert "prefix=" in message
    assert registry.names() == ["add"]  # all or nothing
    with register_server(registry, "web", url=http_server.url, prefix="remote-"):
        assert "remote-add" in registry
        assert "remote-files_read" in registry


def test_timeout_is_an_error_result_and_cancels_the_call_on_the_server(
    http_server: HttpServer, registry: Registry, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled.txt"
    with register_server(registry, "web", url=http_server.url, timeout=0.3) as web:
        result = run(registry, "web_slow", seconds=30, marker=str(marker))
        assert result.is_error
        assert "timed out after 0.3 s" in result.content
        assert wait_until(lambda: marker.read_text() == "cancelled"), "no cancellation seen"
        assert run(registry, "web_add", a=1, b=2).content == "3"  # the session survived
        assert web.reconnects == 0


def test_a_restarted_server_is_reconnected_transparently(registry: Registry) -> None:
    server = HttpServer().start()
    try:
        with register_server(registry, "web", url=server.url) as web:
            assert run(registry, "web_add", a=1, b=1).content == "2"
            server.stop()
            server = HttpServer(server.port).start()  # same port, sessions forgotten
            result = run(registry, "web_add", a=2, b=2)
            assert not result.is_error, result.content
            assert result.content == "4"
            assert web.reconnects == 1
    finally:
        server.stop()


def test_a_server_that_stays_down_fails_calls_after_bounded_attempts(registry: Registry) -> None:
    server = HttpServer().start()
    web = register_server(registry, "web", url=server.url, reconnect_attempts=2)
    try:
        server.stop()
        lost = run(registry, "web_add", a=1, b=1)  # in flight when the connection failed
        assert lost.is_error
        assert "lost during the call" in lost.content
        down = run(registry, "web_add", a=1, b=1)
        assert down.is_error
        assert "could not reconnect to MCP server 'web'" in down.content
        assert "after 2 attempts" in down.content
        server = HttpServer(server.port).start()
        assert run(registry, "web_add", a=1, b=1).content == "2"  # back once it is
        assert web.reconnects == 1
    finally:
        web.close()
        server.stop()


def test_reconnect_attempts_zero_never_reconnects(registry: Registry) -> None:
    server = HttpServer().start()
    web = register_server(registry, "web", url=server.url, reconnect_attempts=0)
    try:
        server.stop()
        server = HttpServer(server.port).start()
        assert run(registry, "web_add", a=1, b=1).is_error  # the session is gone
        result = run(registry, "web_add", a=1, b=1)
        assert result.is_error
        assert "reconnect_attempts=0 forbids reconnecting" in result.content
        assert web.reconnects == 0
    finally:
        web.close()
        server.stop()


def test_an_unreachable_url_fails_registration_with_the_server_named(registry: Registry) -> None:
    server = HttpServer()  # bound but never started: nothing answers on its port
    server.stop()
    with pytest.raises(MCPConnectionError) as info:
        register_server(registry, "ghost", url=server.url, connect_timeout=5)
    assert "could not connect to MCP server 'ghost'" in str(info.value)
    assert server.url in str(info.value)
    assert len(registry) == 0


def test_connection_repr_says_where_and_in_what_state(
    http_server: HttpServer, registry: Registry
) -> None:
    web = register_server(registry, "web", url=http_server.url)
    assert repr(web) == f"MCPConnection('web', http: {http_server.url}, connected)"
    web.close()
    assert repr(web) == f"MCPConnection('web', http: {http_server.url}, closed)"
    assert isinstance(web, MCPConnection)


def test_close_answers_the_calls_in_flight(
    http_server: HttpServer, registry: Registry, tmp_path: Path
) -> None:
    marker = tmp_path / "slow.txt"
    web = register_server(registry, "web", url=http_server.url)
    results: list[ToolResultMessage] = []
    caller = threading.Thread(
        target=lambda: results.append(run(registry, "web_slow", seconds=30, marker=str(marker)))
    )
    caller.start()
    assert wait_until(marker.exists), "the slow call never reached the server"
    web.close()
    caller.join(10)
    assert len(results) == 1
    assert results[0].is_error
    assert "MCP server 'web' is closed" in results[0].content


def test_close_unregisters_only_the_servers_own_cards(
    http_server: HttpServer, registry: Registry
) -> None:
    web = register_server(registry, "web", url=http_server.url)
    local = registry.register(Tool(name="web_add", execute=lambda args: "local"), replace=True)
    web.close()
    assert registry.tools() == [local]
