"""How to reach an MCP server: a subprocess over stdio, or a streamable-HTTP endpoint.

A transport is a frozen description; ``open()`` returns the SDK's async
context manager yielding the ``(read, write)`` stream pair. The supervisor
opens it again on every reconnect, so it must hold no live state.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import urlsplit

from openprogram.exceptions import UserError
from openprogram.mcp import _sdk

__all__ = ["HttpTransport", "StdioTransport", "Streams", "Transport", "make_transport"]

Streams: TypeAlias = tuple[Any, Any]
"""The SDK's ``(read_stream, write_stream)`` pair."""

# Same limits the SDK applies to the clients it makes itself: a response stream may
# legitimately stay open for minutes, connecting should not.
_HTTP_TIMEOUT_S = 30.0
_HTTP_READ_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioTransport:
    """A server started as a subprocess, spoken to over its stdin and stdout."""

    command: tuple[str, ...]
    """The program and its arguments."""
    env: Mapping[str, str] | None = None
    """Variables added to the SDK's minimal default environment (``PATH``, ``HOME``, …)."""
    cwd: str | None = None
    """Working directory of the subprocess (``None``: the current one)."""

    def describe(self) -> str:
        """``"stdio: <command line>"``, for messages."""
        return f"stdio: {shlex.join(self.command)}"

    def open(self) -> AbstractAsyncContextManager[Streams]:
        """Start the subprocess; leaving the context stops it."""
        params = _sdk.StdioServerParameters(
            command=self.command[0],
            args=list(self.command[1:]),
            env=dict(self.env) if self.env is not None else None,
            cwd=self.cwd,
        )
        streams: AbstractAsyncContextManager[Streams] = _sdk.stdio_client(params)
        return streams


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpTransport:
    """A server reached over the streamable-HTTP transport."""

    url: str
    """The MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] | None = None
    """Sent with every request (e.g. ``Authorization``)."""

    def describe(self) -> str:
        """``"http: <url>"``, for messages."""
        return f"http: {self.url}"

    def open(self) -> AbstractAsyncContextManager[Streams]:
        """Open an MCP session over HTTP; leaving the context ends it."""
        return self._streams()

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[Streams]:
        if self.headers is None:  # the SDK makes (and closes) a client with its own defaults
            async with _sdk.streamable_http_client(self.url) as streams:
                yield streams[0], streams[1]
            return
        timeout = _sdk.httpx2.Timeout(_HTTP_TIMEOUT_S, read=_HTTP_READ_TIMEOUT_S)
        async with (
            _sdk.httpx2.AsyncClient(headers=dict(self.headers), timeout=timeout) as client,
            _sdk.streamable_http_client(self.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]


Transport: TypeAlias = StdioTransport | HttpTransport


def make_transport(
    *,
    command: str | Sequence[str] | None,
    url: str | None,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    headers: Mapping[str, str] | None,
) -> Transport:
    """The transport the ``register_server`` arguments describe.

    Raises:
        UserError: Not exactly one of ``command`` and ``url``, an option of the other
            transport, an empty command or a URL that is not http(s).
    """
    if (command is None) == (url is None):
        raise UserError(
            "register_server: give exactly one of command=[...] (a stdio server started as a "
            "subprocess) or url='http://…/mcp' (a streamable-HTTP server)"
        )
    if url is not None:
        if env is not None or cwd is not None:
            raise UserError(
                "register_server: env= and cwd= apply to stdio servers (command=), not url="
            )
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UserError(
                f"register_server: url must be an http(s) URL like 'http://127.0.0.1:8000/mcp', "
                f"got {url!r}"
            )
        return HttpTransport(url=url, headers=dict(headers) if headers is not None else None)
    if headers is not None:
        raise UserError("register_server: headers= apply to HTTP servers (url=), not command=")
    argv = tuple(shlex.split(command) if isinstance(command, str) else command or ())
    if not argv or not all(isinstance(part, str) and part for part in argv):
        raise UserError(
            f"register_server: command must be a program and its arguments, like "
            f"[sys.executable, 'server.py'] or 'npx -y some-server', got {command!r}"
        )
    return StdioTransport(
        command=argv,
        env=dict(env) if env is not None else None,
        cwd=os.fspath(cwd) if cwd is not None else None,
    )
