"""What an MCP tool call becomes: a ``ToolResult`` the model can read, never an exception.

A ``CallToolResult`` is a list of content blocks (text, images, audio,
resources) plus optional structured content. Text goes to the model as is;
binary blocks are described in one line (their bytes would only waste
context); structured content is the result's ``value`` and, when the server
sent no text, its JSON is the text. A result the server flagged ``isError``,
a JSON-RPC error and a lost connection all become error results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from openprogram.mcp import _sdk
from openprogram.tools import ToolResult

__all__ = ["blocks_text", "connection_lost", "protocol_error", "tool_result"]


def tool_result(result: _sdk.types.CallToolResult, *, server: str, tool: str) -> ToolResult:
    """The ``ToolResult`` of an MCP ``CallToolResult``."""
    text = blocks_text(result.content)
    structured = result.structured_content
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    if result.is_error:
        reason = text or "it reported an error without details"
        return ToolResult(
            content=f"MCP tool {tool!r} of server {server!r} failed: {reason}",
            is_error=True,
            error_kind="tool_error",
        )
    return ToolResult(content=text, value=structured if structured is not None else text)


def protocol_error(exc: _sdk.MCPError, *, server: str, tool: str) -> ToolResult:
    """The error result of a JSON-RPC error (``MCPError``) answering a tool call."""
    return ToolResult(
        content=f"MCP server {server!r} rejected the call of {tool!r}: {exc.message} "
        f"(JSON-RPC error {exc.code})",
        is_error=True,
        error_kind="tool_error",
    )


def connection_lost(*, server: str, tool: str, reason: str) -> ToolResult:
    """The error result of a call whose connection failed or dropped."""
    return ToolResult(
        content=f"MCP tool {tool!r} of server {server!r} could not complete: {reason}",
        is_error=True,
        error_kind="exception",
    )


def blocks_text(blocks: Sequence[Any]) -> str:
    """The text of MCP content blocks, one block per line; binary blocks are summarised."""
    return "\n".join(_block_text(block) for block in blocks)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data)} base64 characters]"
    if kind == "resource_link":
        label = f" ({block.name})" if getattr(block, "name", None) else ""
        return f"[resource link {block.uri}{label}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = getattr(resource, "mime_type", None) or "unknown type"
        size = len(getattr(resource, "blob", "") or "")
        return f"[resource {resource.uri} ({mime}), {size} base64 characters]"
    return f"[{kind or type(block).__name__} content]"
