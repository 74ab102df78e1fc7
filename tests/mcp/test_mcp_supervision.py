"""Supervision of stdio servers: reconnect after a drop, clean shutdown, the exit hook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from _mcp_helpers import STDIO_COMMAND, process_alive, run, wait_until
from _mcp_servers import HttpServer

from openprogram.mcp import MCPConnectionError, close_all, register_server
from openprogram.registry import Registry


def test_drops_are_reconnected_and_close_leaves_nothing_behind(
    registry: Registry, no_leftovers: Callable[[], None]
) -> None:
    demo = register_server(registry, "demo", command=STDIO_COMMAND)
    add = {t.name: t for t in registry.tools()}["demo_add"]

    # A crash during a call: that call is an error, the next one reconnects.
    first_pid = int(run(registry, "demo_pid").content)
    crashed = run(registry, "demo_crash")
    assert crashed.is_error
    assert "lost during the call (it may or may not have run)" in crashed.content
    assert "the next call reconnects" in crashed.content
    second_pid = int(run(registry, "demo_pid").content)
    assert second_pid != first_pid
    assert demo.reconnects == 1
    assert not process_alive(first_pid)

    # A server that dies while idle is replaced before the next call, which succeeds.
    os.kill(second_pid, signal.SIGKILL)
    assert wait_until(lambda: not demo.connected), "the drop was never noticed"
    result = run(registry, "demo_add", a=1, b=2)
    assert (result.content, result.is_error) == ("3", False)
    third_pid = int(run(registry, "demo_pid").content)
    assert third_pid not in (first_pid, second_pid)
    assert demo.reconnects == 2

    # close(): the server process and the loop thread are gone, the cards unregistered.
    demo.close()
    demo.close()  # idempotent
    assert demo.closed
    assert not demo.connected
    assert not process_alive(third_pid)
    no_leftovers()
    assert len(registry) == 0
    after = run([add], "demo_add", a=1, b=2)  # someone still holds a card
    assert after.is_error
    assert "MCP server 'demo' is closed; register it again" in after.content


def test_close_all_closes_every_open_connection(
    registry: Registry, http_server: HttpServer, no_leftovers: Callable[[], None]
) -> None:
    first = register_server(registry, "one", url=http_server.url)
    second = register_server(registry, "two", url=http_server.url)
    close_all()  # what the exit hook runs
    assert first.closed
    assert second.closed
    assert len(registry) == 0
    no_leftovers()


_EXIT_WITHOUT_CLOSE = textwrap.dedent(
    """
    import sys
    from openprogram.mcp import register_server
    from openprogram.registry import Registry
    from openprogram.runtime import run_tools_sync
    from openprogram.messages import ToolCall

    registry = Registry()
    register_server(registry, "demo", command=sys.argv[1:])
    pid = run_tools_sync([ToolCall("c", "demo_pid", {})], registry.tools())[0].content
    print(pid, flush=True)
    # no close(): the exit hook must stop the server
    """
)


def test_the_exit_hook_stops_servers_nobody_closed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITHOUT_CLOSE, *STDIO_COMMAND],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    assert wait_until(lambda: not process_alive(pid), timeout=5), "server outlived its parent"


def test_a_command_that_cannot_start_fails_registration_cleanly(
    registry: Registry, no_leftovers: Callable[[], None]
) -> None:
    with pytest.raises(MCPConnectionError) as info:
        register_server(registry, "ghost", command=["/nonexistent/mcp-server", "--stdio"])
    message = str(info.value)
    assert "could not connect to MCP server 'ghost'" in message
    assert "stdio: /nonexistent/mcp-server --stdio" in message
    assert len(registry) == 0
    no_leftovers()


def test_a_server_that_never_answers_times_out_and_is_stopped(
    registry: Registry, no_leftovers: Callable[[], None], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    # Writes its pid, then reads (and ignores) every request until its stdin closes.
    silent = [
        sys.executable,
        "-c",
        f"import os, sys; open({str(pid_file)!r}, 'w').write(str(os.getpid())); sys.stdin.read()",
    ]
    with pytest.raises(MCPConnectionError) as info:
        register_server(registry, "mute", command=silent, connect_timeout=0.5)
    assert "no answer within connect_timeout=0.5 s" in str(info.value)
    assert wait_until(pid_file.exists)
    assert not process_alive(int(pid_file.read_text()))
    no_leftovers()  # the subprocess's reaper thread included
