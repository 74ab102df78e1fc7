"""``MCPConnection``: the supervisor of one MCP server's client session.

Each connection owns a ``LoopThread``; a holder task on that loop keeps the
SDK session open (``_session.hold``). Calls from any thread or loop are
submitted to it and awaited with ``asyncio.wrap_future``, so cancelling the
awaiting side (a tool's ``timeout``) cancels the call, and the SDK tells the
server.

Supervision: when the transport ends (the subprocess exited, the HTTP
connection failed), the session is closed; the next call opens a new one,
trying up to ``reconnect_attempts`` times with backoff. A call in flight when
the connection drops is answered with an error result and not retried — it
may have run — except when an HTTP server answers that it no longer knows the
session, which proves the call never ran. ``close()``/``aclose()`` and the
exit hook stop the session, the server subprocess, the loop and its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from openprogram.exceptions import OpenProgramError
from openprogram.mcp import _sdk
from openprogram.mcp._loop import LoopThread, close_at_exit, forget_at_exit
from openprogram.mcp._results import connection_lost, protocol_error, tool_result
from openprogram.mcp._session import ListedTool, Session, describe, hold, session_expired
from openprogram.mcp._transport import HttpTransport, Transport
from openprogram.tools import Tool, ToolResult

__all__ = ["MCPConnection", "MCPConnectionError"]

_log = logging.getLogger("openprogram.mcp")
_T = TypeVar("_T")

_MAX_BACKOFF_S = 2.0
_CLOSE_TIMEOUT_S = 10.0
_LOST_IN_FLIGHT = (
    "the connection to the server was lost during the call (it may or may not have run); "
    "the next call reconnects"
)


class MCPConnectionError(OpenProgramError, ConnectionError):
    """An MCP server could not be reached, or its connection is closed."""


class MCPConnection:
    """Supervises the client session of one MCP server on a background event loop.

    ``register_server`` creates, connects and returns it. Use it as a (sync or
    async) context manager or call ``close()`` when done; connections still
    open at interpreter exit are closed by an ``atexit`` hook.

    Args:
        name: The server name (for messages and the thread name).
        transport: How to reach the server.
        connect_timeout: Seconds one connection attempt may take (start, handshake, listing).
        reconnect_attempts: Connection attempts after a drop, before a call gives up.
    """

    def __init__(
        self,
        name: str,
        transport: Transport,
        *,
        connect_timeout: float,
        reconnect_attempts: int,
    ) -> None:
        self.name = name
        """The server name."""
        self.transport = transport
        """How the server is reached."""
        self.connect_timeout = connect_timeout
        """Seconds one connection attempt may take."""
        self.reconnect_attempts = reconnect_attempts
        """Connection attempts after a drop."""
        self.reconnects = 0
        """How many times the connection was re-established after a drop."""
        self.listed: tuple[ListedTool, ...] = ()
        """The tools of the latest listing."""
        self.tools: tuple[Tool, ...] = ()
        """The tools ``register_server`` registered for this server."""
        self._runner = LoopThread(f"openprogram-mcp-{name}")
        self._closed = False
        self._state = threading.Lock()
        self._session: Session | None = None
        self._connecting: asyncio.Task[Session] | None = None
        self._holders: set[asyncio.Task[None]] = set()
        self._calls: set[asyncio.Task[Any]] = set()
        self._on_close: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self.connected else "disconnected"
        return f"MCPConnection({self.name!r}, {self.transport.describe()}, {state})"

    @property
    def connected(self) -> bool:
        """Whether a session is open right now."""
        session = self._session
        return session is not None and session.alive and not self._closed

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def start(self) -> concurrent.futures.Future[tuple[ListedTool, ...]]:
        """Connect once (one attempt); the future holds the listed tools.

        The future fails with ``MCPConnectionError`` if the server cannot be
        reached within ``connect_timeout``.
        """
        return self._submit(self._first_connect)

    async def _first_connect(self) -> tuple[ListedTool, ...]:
        await self._live(attempts=1)
        return self.listed

    # -- calling -----------------------------------------------------------------------------

    async def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call MCP tool ``tool`` from any thread or event loop; never raises for server failures.

        Args:
            tool: The tool's MCP name (not its prefixed openprogram name).
            arguments: Its arguments (a JSON object).

        Returns:
            The result; failures (an ``isError`` result, a JSON-RPC error, a lost
            or closed connection) are error results that say what happened.
        """
        args = dict(arguments or {})
        try:
            future = self._submit(lambda: self._call(tool, args))
        except MCPConnectionError as exc:
            return connection_lost(server=self.name, tool=tool, reason=str(exc))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # our caller is being cancelled (a timeout): that is theirs to handle
            # Otherwise the loop thread was stopped under the call by close().
            return connection_lost(server=self.name, tool=tool, reason=self._closed_reason())

    def _closed_reason(self) -> str:
        return f"MCP server {self.name!r} is closed; register it again to use its tools"

    async def _call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        task = asyncio.current_task()
        if task is not None:  # always, on the loop; close() waits for the calls it tracks
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
        try:
            result = await self._send(await self._live(self.reconnect_attempts), tool, args)
            if result is None:  # the server forgot the session before running the call
                result = await self._send(await self._live(self.reconnect_attempts), tool, args)
        except MCPConnectionError as exc:
            return connection_lost(server=self.name, tool=tool, reason=str(exc))
        return result or connection_lost(
            server=self.name, tool=tool, reason="the server dropped two new sessions in a row"
        )

    async def _send(self, session: Session, tool: str, args: dict[str, Any]) -> ToolResult | None:
        """One ``tools/call``; ``None`` when an HTTP server no longer knew the session."""
        try:
            result = await session.client.call_tool(tool, args)
        except _sdk.MCPError as exc:
            if isinstance(self.transport, HttpTransport) and session_expired(exc):
                session.wake.set()
                return None
            if exc.code != _sdk.types.CONNECTION_CLOSED:
                return protocol_error(exc, server=self.name, tool=tool)
            session.wake.set()
            reason = self._closed_reason() if self._closed else _LOST_IN_FLIGHT
            return connection_lost(server=self.name, tool=tool, reason=reason)
        except Exception as exc:  # noqa: BLE001 - a malformed reply or an SDK refusal is a result
            return connection_lost(server=self.name, tool=tool, reason=describe(exc))
        return tool_result(result, server=self.name, tool=tool)

    # -- connecting (on the loop) -------------------------------------------------------------

    async def _live(self, attempts: int) -> Session:
        """The open session, connecting first when there is none (shared by concurrent calls)."""
        if self._closed:
            raise MCPConnectionError(self._closed_reason())
        session = self._session
        if session is not None and session.alive:
            return session
        if self._connecting is None or self._connecting.done():
            reconnect = session is not None
            if reconnect and attempts < 1:
                raise MCPConnectionError(
                    f"the connection to MCP server {self.name!r} was lost and "
                    "reconnect_attempts=0 forbids reconnecting"
                )
            self._connecting = self._runner.loop.create_task(self._establish(attempts, reconnect))
            self._connecting.add_done_callback(_retrieve)
        # Shielded: a cancelled call (its timeout) must not abort a connection others wait for.
        return await asyncio.shield(self._connecting)

    async def _establish(self, attempts: int, reconnect: bool) -> Session:
        error: MCPConnectionError | None = None
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(min(0.25 * 2 ** (attempt - 1), _MAX_BACKOFF_S))
            if self._closed:
                break
            try:
                session = await self._open()
            except MCPConnectionError as exc:
                error = exc
                continue
            self._session = session
            self.listed = session.listed
            self.reconnects += 1 if reconnect else 0
            return session
        verb = "reconnect to" if reconnect else "connect to"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        cause = error or "it was closed"
        raise MCPConnectionError(
            f"could not {verb} MCP server {self.name!r} ({self.transport.describe()}){tries}: "
            f"{cause}. Check that the server runs and that the command/url is right."
        ) from error

    async def _open(self) -> Session:
        loop = self._runner.loop
        ready: asyncio.Future[Session] = loop.create_future()
        holder = loop.create_task(
            hold(self.transport, ready, server=self.name, closing=lambda: self._closed)
        )
        self._holders.add(holder)
        holder.add_done_callback(self._holders.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
        except TimeoutError:
            await _stop(holder)
            raise MCPConnectionError(
                f"no answer within connect_timeout={self.connect_timeout:g} s"
            ) from None
        except asyncio.CancelledError:  # close() during the attempt: abandon it, do not wait
            holder.cancel()
            raise
        except Exception as exc:
            # The SDK raises whatever its transport met (OSError, an ExceptionGroup,
            # MCPError); one typed error keeps the cause.
            raise MCPConnectionError(describe(exc)) from exc

    # -- closing -----------------------------------------------------------------------------

    def close(self, timeout: float = _CLOSE_TIMEOUT_S) -> None:
        """End the session, stop the server subprocess and the loop thread; unregister the tools.

        Idempotent. Calls in flight are answered with error results.
        """
        future = self._begin_close()
        if future is not None:
            try:
                future.result(timeout)
            except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
                _log.warning("MCP server %r did not shut down within %g s", self.name, timeout)
        self._finish_close(timeout)

    async def aclose(self, timeout: float = _CLOSE_TIMEOUT_S) -> None:
        """``close()`` for async code: waits without blocking the caller's event loop."""
        future = self._begin_close()
        if future is not None:
            try:
                await asyncio.wait_for(asyncio.wrap_future(future), timeout)
            except TimeoutError:
                _log.warning("MCP server %r did not shut down within %g s", self.name, timeout)
        await asyncio.to_thread(self._finish_close, timeout)

    def __enter__(self) -> MCPConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def on_close(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the connection is closed (``register_server`` unregisters)."""
        self._on_close.append(callback)

    def _begin_close(self) -> concurrent.futures.Future[None] | None:
        with self._state:
            if self._closed:
                return None
            self._closed = True
        if not self._runner.started:
            return None
        try:
            return self._runner.submit(self._shutdown)
        except RuntimeError:  # the loop thread is already stopped: nothing left to shut down
            return None

    async def _shutdown(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        if self._session is not None:
            self._session.wake.set()
        # First the sessions end (which answers the calls in flight), then those calls
        # finish turning that into results; stragglers are cancelled.
        for tasks in (set(self._holders), set(self._calls)):
            if tasks:
                _, late = await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT_S)
                for task in late:
                    task.cancel()

    def _finish_close(self, timeout: float) -> None:
        self._runner.stop(timeout)
        forget_at_exit(self)
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()

    def _submit(self, make: Callable[[], Awaitable[_T]]) -> concurrent.futures.Future[_T]:
        if self._closed:
            raise MCPConnectionError(self._closed_reason())
        close_at_exit(self)
        try:
            return self._runner.submit(make)
        except RuntimeError as exc:  # closed by another thread since the check above
            raise MCPConnectionError(self._closed_reason()) from exc


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _retrieve(task: asyncio.Task[Session]) -> None:
    # A connection attempt whose every caller gave up (timed out) would otherwise log
    # "exception was never retrieved"; its error is reported to the next caller anyway.
    if not task.cancelled():
        task.exception()
