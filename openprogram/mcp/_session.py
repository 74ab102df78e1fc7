"""One MCP client session, held open by a task on the connection's loop.

``hold`` opens the transport and the SDK's ``ClientSession``, initializes it,
lists the tools, publishes the ``Session`` through a future and then waits
until the session's ``wake`` event is set: by ``close``, by a call that found
the connection dead, or by the transport ending. Leaving the ``async with``
blocks then shuts the session and the transport (and its subprocess) down in
the task that opened them, as the SDK requires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openprogram.mcp import _sdk
from openprogram.mcp._transport import Transport

__all__ = ["ListedTool", "Session", "describe", "hold", "session_expired"]

_log = logging.getLogger("openprogram.mcp")


@dataclass(frozen=True, slots=True)
class ListedTool:
    """One tool as the server listed it."""

    name: str
    """The tool's MCP name."""
    description: str
    """Its description (``""`` when the server gave none)."""
    title: str | None
    """Its human-readable title, if any."""
    input_schema: dict[str, Any]
    """The JSON Schema of its arguments."""


@dataclass(frozen=True, slots=True, eq=False)
class Session:
    """An open, initialized session and the event that ends it."""

    client: Any
    """The SDK's ``ClientSession``."""
    wake: asyncio.Event
    """Set to end the session (also set once it has ended)."""
    listed: tuple[ListedTool, ...]
    """The server's tools at connection time."""

    @property
    def alive(self) -> bool:
        """Whether the session is still usable."""
        return not self.wake.is_set()


async def hold(
    transport: Transport,
    ready: asyncio.Future[Session],
    *,
    server: str,
    closing: Callable[[], bool],
) -> None:
    """Open a session, publish it in ``ready``, keep it open until its ``wake`` is set.

    A failure before ``ready`` is set goes into ``ready``; one after it (the
    connection dropped) is logged unless ``closing()`` says we are shutting down.
    """
    wake = asyncio.Event()
    try:
        async with contextlib.AsyncExitStack() as stack:
            client = await _enter(stack, transport, wake)
            await client.initialize()
            listed = await _list_tools(client)
            ready.set_result(Session(client=client, wake=wake, listed=listed))
            await wake.wait()
    except Exception as exc:  # noqa: BLE001 - the session's end is reported, never raised here
        if not ready.done():
            ready.set_exception(exc)
        elif not closing():
            _log.warning("MCP server %r: the connection ended: %s", server, describe(exc))
    finally:
        wake.set()


async def _enter(
    stack: contextlib.AsyncExitStack, transport: Transport, wake: asyncio.Event
) -> Any:
    read, write = await stack.enter_async_context(transport.open())
    # The session reads through a relay so that the end of the transport's stream (a
    # subprocess that exited) wakes the holder: the SDK does not report it otherwise.
    send, receive = _sdk.anyio.create_memory_object_stream[Any](0)
    group = await stack.enter_async_context(_sdk.anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)
    group.start_soon(_relay, read, send, wake)
    return await stack.enter_async_context(_sdk.ClientSession(receive, write))


async def _relay(source: Any, sink: Any, wake: asyncio.Event) -> None:
    anyio = _sdk.anyio
    try:
        async with sink:
            async for item in source:
                await sink.send(item)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the session closed its end first: a shutdown, not a drop
    finally:
        wake.set()


async def _list_tools(client: Any) -> tuple[ListedTool, ...]:
    listed: list[ListedTool] = []
    cursor: str | None = None
    while True:
        params = _sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await client.list_tools(params=params)
        listed.extend(
            ListedTool(
                name=tool.name,
                description=tool.description or "",
                title=tool.title,
                input_schema=dict(tool.input_schema),
            )
            for tool in page.tools
        )
        cursor = page.next_cursor
        if not cursor:
            return tuple(listed)


def session_expired(exc: _sdk.MCPError) -> bool:
    """Whether an HTTP server answered that it does not know our session (so the call never ran).

    A server answers 404 for a session id it forgot (it restarted, or expired
    the session); the SDK reports that as INVALID_REQUEST with the server's
    message ("Session not found") or its own ("Session terminated").
    """
    return exc.code == _sdk.types.INVALID_REQUEST and "session" in exc.message.lower()


def describe(exc: BaseException) -> str:
    """``"Type: message"`` of the innermost exception (task groups wrap single failures)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
