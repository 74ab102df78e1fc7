"""MCP both ways (the ``openprogram-ai[mcp]`` extra): servers as tools, tools as a server.

``register_server(registry, name, command=[...] | url=...)`` connects to a
Model Context Protocol server over stdio or streamable HTTP and registers its
tools as deferred cards: a model sees their names and one-line summaries until
``tool_search`` loads the few it needs, so a server with a hundred tools does
not bloat every prompt. The cards are gated like any other tool (toolset =
server name, ``unsafe_in``, approval); their calls go to the server over a
supervised connection.

``MCPToolServer(registry, policy=...)`` is the other way round: it serves
openprogram tools to any MCP client (``openprogram mcp serve`` on the command
line), gated like an exec's menu, approval asked of the client's user. See
``docs/mcp.md``.

This package imports without the SDK; ``register_server`` and
``MCPToolServer`` then raise a ``ConfigurationError`` saying how to install it.
"""

from __future__ import annotations

from openprogram.mcp._connection import MCPConnection, MCPConnectionError
from openprogram.mcp._loop import close_all
from openprogram.mcp._options import ServerKwargs, ServerOptions
from openprogram.mcp._register import aregister_server, register_server
from openprogram.mcp._server import MCP_SOURCE, MCPToolServer
from openprogram.mcp._session import ListedTool
from openprogram.mcp._tool import MCPTool

__all__ = [
    "MCP_SOURCE",
    "ListedTool",
    "MCPConnection",
    "MCPConnectionError",
    "MCPTool",
    "MCPToolServer",
    "ServerKwargs",
    "ServerOptions",
    "aregister_server",
    "close_all",
    "register_server",
]
