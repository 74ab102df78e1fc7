"""MCP servers as openprogram tools (the ``openprogram-ai[mcp]`` extra).

``register_server(registry, name, command=[...] | url=...)`` connects to a
Model Context Protocol server over stdio or streamable HTTP and registers its
tools as deferred cards: a model sees their names and one-line summaries until
``tool_search`` loads the few it needs, so a server with a hundred tools does
not bloat every prompt. The cards are gated like any other tool (toolset =
server name, ``unsafe_in``, approval); their calls go to the server over a
supervised connection. See ``docs/mcp.md``.

This package imports without the SDK; ``register_server`` then raises a
``ConfigurationError`` saying how to install it.
"""

from __future__ import annotations

from openprogram.mcp._connection import MCPConnection, MCPConnectionError
from openprogram.mcp._loop import close_all
from openprogram.mcp._options import ServerKwargs, ServerOptions
from openprogram.mcp._register import aregister_server, register_server
from openprogram.mcp._session import ListedTool
from openprogram.mcp._tool import MCPTool

__all__ = [
    "ListedTool",
    "MCPConnection",
    "MCPConnectionError",
    "MCPTool",
    "ServerKwargs",
    "ServerOptions",
    "aregister_server",
    "close_all",
    "register_server",
]
