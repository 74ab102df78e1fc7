"""A stdio MCP server's tools registered as cards, and calls going to the server."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from _mcp_helpers import FLAG, Served, run
from _mcp_servers import GENERATED

from openprogram.mcp import MCPTool
from openprogram.tools import Tool


def card(served: Served, name: str) -> MCPTool:
    tool = {t.name: t for t in served.registry.tools()}[name]
    assert isinstance(tool, MCPTool)
    return tool


def test_every_tool_is_registered_once_under_a_prefixed_valid_name(stdio: Served) -> None:
    names = stdio.registry.names()
    assert len(names) == 12 + GENERATED  # the real tools, crash, and the generated ones
    assert {"demo_add", "demo_files_read", "demo_crash", "demo_stat_07"} <= set(names)
    assert [t.name for t in stdio.connection.tools] == [t.name for t in stdio.registry.tools()]
    assert card(stdio, "demo_files_read").mcp_name == "files.read"  # "." is not a valid name


def test_cards_carry_the_servers_schema_and_description_and_the_gate_metadata(
    stdio: Served,
) -> None:
    add = card(stdio, "demo_add")
    listed = {t.name: t for t in stdio.connection.listed}["add"]
    assert add.parameters == listed.input_schema
    assert add.parameters["required"] == ["a", "b"]
    assert add.description.startswith("Add two integers.")
    assert add.one_liner == "demo_add: Add two integers."
    assert add.defer is True  # the default: catalog only until tool_search loads it
    assert add.toolset == ("demo",)
    assert add.unsafe_in == ()
    assert add.requires_approval is False
    assert add.timeout is None
    assert add.origin is not None
    assert "MCP server 'demo'" in add.origin
    assert "'add'" in add.origin
    assert card(stdio, "demo_files_read").label == "Read a file"


def test_a_call_goes_to_the_server_and_returns_text_and_structured_value(stdio: Served) -> None:
    result = run(stdio.registry, "demo_add", a=2, b=40)
    assert not result.is_error
    assert result.content == "42"
    direct = asyncio.run(card(stdio, "demo_add").execute({"a": 1, "b": 2}))
    assert direct.value == {"result": 3}  # the server's structured content


def test_arguments_are_validated_against_the_servers_schema_before_sending(
    stdio: Served,
) -> None:
    result = run(stdio.registry, "demo_add", a="two")
    assert result.is_error
    assert "Invalid arguments for tool 'demo_add'" in result.content
    assert "a: expected integer" in result.content
    assert "b: missing required argument" in result.content


def test_arguments_of_another_json_type_are_refused_as_for_function_tools(
    stdio: Served,
) -> None:
    for loose in ("2", True, 2.5):
        result = run(stdio.registry, "demo_add", a=loose, b=1)
        assert result.is_error
        assert "- a: expected integer" in result.content
    assert run(stdio.registry, "demo_add", a=2.0, b=1).content == "3"  # 2.0 is an integer


def test_a_failing_tool_is_an_error_result_with_the_servers_message(stdio: Served) -> None:
    result = run(stdio.registry, "demo_fail", message="disk is full")
    assert result.is_error
    assert "MCP tool 'fail' of server 'demo' failed" in result.content
    assert "disk is full" in result.content


def test_a_json_rpc_error_is_an_error_result_naming_the_code(stdio: Served) -> None:
    result = asyncio.run(
        card(stdio, "demo_reject").execute({"code": -32602, "message": "no such row"})
    )
    assert result.is_error
    assert result.error_kind == "tool_error"
    assert result.content == (
        "MCP server 'demo' rejected the call of 'reject': no such row (JSON-RPC error -32602)"
    )


def test_binary_content_is_summarised_not_pasted(stdio: Served) -> None:
    result = run(stdio.registry, "demo_picture")
    assert not result.is_error
    assert result.content == "[image image/png, 44 base64 characters]"
    assert run(stdio.registry, "demo_mixed").content.splitlines() == [
        "hello",
        "[audio audio/wav, 4 base64 characters]",
        "[resource link file:///r.txt (r.txt)]",
        "inline text",
        "[resource file:///b.bin (application/octet-stream), 8 base64 characters]",
    ]


def test_env_and_cwd_reach_the_stdio_server(stdio: Served, stdio_workdir: Path) -> None:
    assert run(stdio.registry, "demo_environ", name=FLAG).content == "on"
    assert Path(run(stdio.registry, "demo_cwd").content) == stdio_workdir.resolve()


def test_calls_from_many_threads_and_event_loops_share_one_connection(stdio: Served) -> None:
    server_pid = run(stdio.registry, "demo_pid").content
    results: list[str] = []

    def worker(number: int) -> None:
        # Each thread runs its own event loop (run_tools_sync), as sync exec does.
        results.append(run(stdio.registry, "demo_add", a=number, b=1000).content)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results, key=int) == [str(1000 + n) for n in range(6)]
    assert run(stdio.registry, "demo_pid").content == server_pid
    assert stdio.connection.reconnects == 0


def test_a_card_is_not_callable_as_plain_python(stdio: Served) -> None:
    tool: Tool = card(stdio, "demo_add")
    with pytest.raises(TypeError, match=r"use await tool.execute\(args\)"):
        tool(a=1, b=2)
