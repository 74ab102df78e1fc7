"""Small helpers shared by the MCP tests."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from _mcp_servers import SCRIPT

from openprogram.mcp import MCPConnection
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.registry import Registry
from openprogram.runtime import run_tools_sync
from openprogram.tools import Tool

STDIO_COMMAND = [sys.executable, SCRIPT]
FLAG = "OPENPROGRAM_MCP_TEST_FLAG"


@dataclass
class Served:
    """A registered server: its registry and connection."""

    registry: Registry
    connection: MCPConnection


def run(tools: Sequence[Tool] | Registry, tool_name: str, /, **args: Any) -> ToolResultMessage:
    """Run one call the way the tool loop does (validation, approval, timeout)."""
    menu = tools.tools() if isinstance(tools, Registry) else list(tools)
    return run_tools_sync([ToolCall("c1", tool_name, args)], menu)[0]


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a reaped child no longer does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; its last value."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
