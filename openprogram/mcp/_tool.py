"""``MCPTool``: a registry card for one tool of an MCP server.

It is a ``Tool`` like any other — gated by its toolset, ``unsafe_in``,
``defer`` and approval metadata, validated against the server's input schema —
whose execution is a ``tools/call`` on the server's supervised connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.tools import ApprovalRule, Tool, ToolResult

if TYPE_CHECKING:
    from openprogram.mcp._connection import MCPConnection
    from openprogram.mcp._session import ListedTool

__all__ = ["MCPTool"]


class MCPTool(Tool):
    """One tool of an MCP server, registered under an openprogram name.

    Calling it directly from Python is not supported (``tool(...)`` raises
    ``TypeError``); run it with ``await tool.execute(args)``, ``run_tools`` or
    a model's tool call.

    Args:
        connection: The server's supervised connection.
        listed: The tool as the server listed it.
        name: The openprogram name (prefixed and made valid).
        **gates: ``defer``, ``toolset``, ``unsafe_in``, ``requires_approval`` and
            ``timeout``, as for any ``Tool``.
    """

    __slots__ = ("connection", "mcp_name")

    def __init__(
        self,
        *,
        connection: MCPConnection,
        listed: ListedTool,
        name: str,
        defer: bool,
        toolset: Sequence[str],
        unsafe_in: str | Sequence[str],
        requires_approval: ApprovalRule,
        timeout: float | None,
    ) -> None:
        self.connection = connection
        """The server's supervised connection."""
        self.mcp_name = listed.name
        """The tool's name on the server."""
        super().__init__(
            name=name,
            description=listed.description.strip() or listed.title or listed.name,
            parameters=_object_schema(listed.input_schema),
            execute=self._run,
            label=listed.title,
            defer=defer,
            toolset=toolset,
            unsafe_in=unsafe_in,
            requires_approval=requires_approval,
            timeout=timeout,
            origin=f"MCP server {connection.name!r} ({connection.transport.describe()}), "
            f"tool {listed.name!r}",
        )

    async def _run(self, args: Mapping[str, Any]) -> ToolResult:
        return await self.connection.call(self.mcp_name, args)

    def __repr__(self) -> str:
        return (
            f"MCPTool({self.name!r}, server={self.connection.name!r}, mcp_name={self.mcp_name!r})"
        )


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    # MCP requires an object schema; some servers omit "properties" for tools without
    # arguments, which several providers reject.
    result = dict(schema)
    result.setdefault("type", "object")
    result.setdefault("properties", {})
    return result
