"""Edge cases of results and schemas that the SDK's own server never produces."""

from __future__ import annotations

from mcp import types

from openprogram.mcp import ListedTool, MCPConnection, MCPTool
from openprogram.mcp._results import tool_result
from openprogram.mcp._transport import HttpTransport


def test_structured_content_without_text_becomes_its_json() -> None:
    result = tool_result(
        types.CallToolResult(content=[], structured_content={"rows": 2, "city": "Łódź"}),
        server="db",
        tool="count",
    )
    assert not result.is_error
    assert result.content == '{"rows": 2, "city": "Łódź"}'
    assert result.value == {"rows": 2, "city": "Łódź"}


def test_an_error_without_details_still_says_which_tool_failed() -> None:
    result = tool_result(types.CallToolResult(content=[], is_error=True), server="db", tool="drop")
    assert result.is_error
    assert result.error_kind == "tool_error"
    assert result.content == (
        "MCP tool 'drop' of server 'db' failed: it reported an error without details"
    )


def test_a_card_completes_a_bare_object_schema_and_falls_back_to_title_or_name() -> None:
    connection = MCPConnection(
        "db",
        HttpTransport(url="http://127.0.0.1:9/mcp"),
        connect_timeout=1,
        reconnect_attempts=0,
    )  # never started: a card needs no connection until it is called
    options = {
        "defer": True,
        "toolset": ("db",),
        "unsafe_in": (),
        "requires_approval": False,
        "timeout": None,
    }
    bare = ListedTool(name="ping", description="", title=None, input_schema={"type": "object"})
    titled = ListedTool(name="stats", description=" ", title="Table stats", input_schema={})
    ping = MCPTool(connection=connection, listed=bare, name="db_ping", **options)  # type: ignore[arg-type]
    stats = MCPTool(connection=connection, listed=titled, name="db_stats", **options)  # type: ignore[arg-type]
    assert ping.parameters == {"type": "object", "properties": {}}
    assert stats.parameters == {"type": "object", "properties": {}}
    assert ping.description == "ping"
    assert stats.description == "Table stats"
    assert repr(ping) == "MCPTool('db_ping', server='db', mcp_name='ping')"
    connection.close()
