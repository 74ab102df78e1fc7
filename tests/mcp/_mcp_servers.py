"""The small MCP servers the tests start, written with the official SDK.

Run as a script (``python _servers.py``) it serves over stdio, as a test's
subprocess; ``HttpServer`` serves the same tools over streamable HTTP on
127.0.0.1 from a thread of the test process. Only the stdio server has
``crash``: exiting the test process would end the test run.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import uvicorn
from mcp import MCPError, types
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

SCRIPT = str(Path(__file__).resolve())
GENERATED = 30
"""Generated ``stat_NN`` tools: a large surface for the catalog tests."""
PIXEL = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
CALLS: Counter[str] = Counter()
"""Calls of ``add`` per first argument, readable by tests that share this process (HTTP)."""


def build(*, stdio: bool) -> MCPServer:
    """A server with a handful of real tools and ``GENERATED`` filler tools."""
    app = MCPServer("openprogram-test", log_level="WARNING")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers.

        Returns their sum.
        """
        CALLS[f"add:{a}"] += 1
        return a + b

    @app.tool(name="files.read", title="Read a file")
    def read_file(path: str) -> str:
        """Read a text file (fake: echoes the path)."""
        return f"contents of {path}"

    @app.tool()
    def fail(message: str) -> str:
        """Always fails with the given message."""
        raise ToolError(message)

    @app.tool()
    def reject(code: int, message: str) -> str:
        """Answer with a JSON-RPC error instead of a result."""
        raise MCPError(code, message)

    @app.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @app.tool()
    def environ(name: str) -> str:
        """An environment variable of the server ("" when unset)."""
        return os.environ.get(name, "")

    @app.tool()
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @app.tool()
    def header(name: str, ctx: Context) -> str:
        """An HTTP header of the current request ("" when absent)."""
        return (ctx.headers or {}).get(name.lower(), "")

    @app.tool()
    def picture() -> Image:
        """A tiny PNG."""
        return Image(data=PIXEL, format="png")

    @app.tool()
    def mixed() -> list[types.ContentBlock]:
        """One content block of every other kind."""
        return [
            types.TextContent(type="text", text="hello"),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///r.txt", name="r.txt"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="inline text"),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///b.bin", blob="AAAABBBB", mime_type="application/octet-stream"
                ),
            ),
        ]

    @app.tool()
    async def slow(seconds: float, marker: str = "") -> str:
        """Sleep; the file ``marker`` says "started", then "cancelled" if the call is."""
        if marker:
            Path(marker).write_text("started")
        try:
            await asyncio.sleep(seconds)
        except BaseException:
            if marker:
                Path(marker).write_text("cancelled")
            raise
        return "slept"

    if stdio:

        @app.tool()
        def crash() -> str:
            """Exit the server process at once."""
            os._exit(3)

    for number in range(GENERATED):
        app.add_tool(
            _stat(number),
            name=f"stat_{number:02d}",
            description=f"Report statistic number {number} of the quarterly sales ledger.",
        )
    return app


def _stat(number: int):  # type: ignore[no-untyped-def]
    def stat() -> int:
        return number

    return stat


class HttpServer:
    """``build()`` served over streamable HTTP on 127.0.0.1 from a background thread."""

    def __init__(self, port: int = 0) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        app = build(stdio=False).streamable_http_app()
        # Clients keep an SSE stream open: cut it after a short grace, like a restart would.
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=0.2
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="test-mcp-http", daemon=True)

    def _serve(self) -> None:
        self._server.run(sockets=[self._sock])

    def start(self) -> HttpServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test MCP HTTP server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop at once, dropping open streams (a restart or a crash, as clients see it)."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(10)
        self._sock.close()


if __name__ == "__main__":
    build(stdio=True).run("stdio")
    sys.exit(0)
