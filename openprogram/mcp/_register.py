"""``register_server``: connect to an MCP server and register its tools as (deferred) cards."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Unpack

from openprogram.exceptions import UserError
from openprogram.mcp._connection import MCPConnection
from openprogram.mcp._names import check_server_name, map_names
from openprogram.mcp._options import ServerKwargs, ServerOptions, server_options
from openprogram.mcp._sdk import require_sdk
from openprogram.mcp._session import ListedTool
from openprogram.mcp._tool import MCPTool
from openprogram.mcp._transport import make_transport
from openprogram.registry import Registry

__all__ = ["aregister_server", "register_server"]


def register_server(
    registry: Registry, name: str, **options: Unpack[ServerKwargs]
) -> MCPConnection:
    """Connect to an MCP server and register each of its tools in ``registry``.

    The server is started as a subprocess speaking stdio (``command=``) or
    reached over streamable HTTP (``url=``). Its tools are listed once and
    registered as ``MCPTool`` cards named ``<prefix><mcp name>`` (characters
    providers reject become ``_``); with ``defer=True`` (the default) a model
    sees only their names and one-line summaries until ``tool_search`` loads
    them. Calls go to the server over a supervised connection that reconnects
    after a drop. Every option is described on ``ServerOptions``.

    Args:
        registry: Where the tools are registered.
        name: The server's name: the default toolset and prefix (1-64 of ``[a-zA-Z0-9_-]``).
        **options: ``command`` or ``url``, and the options of ``ServerOptions``.

    Returns:
        The connection; close it (or use it as a context manager) to stop the
        server and unregister its tools. Connections still open close at exit.

    Raises:
        UserError: An invalid option, or a tool name that is already registered.
        MCPConnectionError: The server could not be reached within ``connect_timeout``.
        ConfigurationError: The ``mcp`` SDK is not installed.
    """
    connection, parsed = _prepare(registry, name, options)
    try:
        listed = connection.start().result()
        return _adopt(registry, connection, listed, parsed)
    except BaseException:
        connection.close()
        raise


async def aregister_server(
    registry: Registry, name: str, **options: Unpack[ServerKwargs]
) -> MCPConnection:
    """``register_server`` for async code: connects without blocking the caller's loop.

    Same arguments, result and errors as ``register_server``.
    """
    connection, parsed = _prepare(registry, name, options)
    try:
        listed = await asyncio.wrap_future(connection.start())
        return _adopt(registry, connection, listed, parsed)
    except BaseException:
        await connection.aclose()
        raise


def _prepare(
    registry: object, name: object, options: ServerKwargs
) -> tuple[MCPConnection, ServerOptions]:
    """Check everything, then build the (not yet started) connection."""
    require_sdk("openprogram.mcp.register_server")
    if not isinstance(registry, Registry):
        raise UserError(
            "register_server: the first argument must be an openprogram Registry (e.g. "
            f"openprogram.default_registry), got {type(registry).__name__}"
        )
    server = check_server_name(name)
    parsed = server_options(options)
    transport = make_transport(
        command=parsed.command,
        url=parsed.url,
        env=parsed.env,
        cwd=parsed.cwd,
        headers=parsed.headers,
    )
    connection = MCPConnection(
        server,
        transport,
        connect_timeout=parsed.connect_timeout,
        reconnect_attempts=parsed.reconnect_attempts,
    )
    return connection, parsed


def _adopt(
    registry: Registry,
    connection: MCPConnection,
    listed: Sequence[ListedTool],
    options: ServerOptions,
) -> MCPConnection:
    """Register one card per listed tool, all or none; closing unregisters them."""
    names = map_names([tool.name for tool in listed], options.name_prefix(connection.name))
    existing = {tool.name: tool for tool in registry.tools()}
    taken = [f"{new!r} (from {existing[new].origin})" for new in names.values() if new in existing]
    if taken:
        raise UserError(
            f"register_server({connection.name!r}): these tool names are already registered: "
            f"{', '.join(taken)}. Pass prefix=... to register this server's tools under other "
            "names, or unregister the others first."
        )
    tools = [
        MCPTool(
            connection=connection,
            listed=tool,
            name=names[tool.name],
            defer=options.defer,
            toolset=options.toolsets(connection.name),
            unsafe_in=options.unsafe_in,
            requires_approval=options.requires_approval,
            timeout=options.timeout,
        )
        for tool in listed
    ]
    for tool in tools:
        registry.register(tool)
    connection.tools = tuple(tools)
    connection.on_close(lambda: _unregister(registry, tools))
    return connection


def _unregister(registry: Registry, tools: Sequence[MCPTool]) -> None:
    current = {tool.name: tool for tool in registry.tools()}  # reading never imports
    for tool in tools:
        # Only our own card: the user may have replaced it with another tool meanwhile.
        if current.get(tool.name) is tool:
            registry.unregister(tool.name)
