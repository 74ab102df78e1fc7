"""Serving an ASGI app (the SDK's streamable-HTTP app) with uvicorn, the SDK's own server.

The socket is bound and listening before ``ready`` is called, so a client
that connects as soon as it learns the URL (a port of ``0`` is chosen by the
system) is queued rather than refused. uvicorn leaves the process's logging
configuration alone and stops on SIGINT or SIGTERM, closing open streams
after a short grace.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from openprogram.exceptions import UserError
from openprogram.mcp import _sdk

__all__ = ["serve_app"]

_GRACE_S = 2
"""How long a shutdown waits for open streams (clients keep one open per session)."""
_BACKLOG = 128


async def serve_app(
    app: Any,
    *,
    host: str,
    port: int,
    path: str,
    ready: Callable[[str], object] | None,
) -> None:
    """Serve ``app`` on ``host:port`` until interrupted; ``ready(url)`` once it accepts connections.

    Raises:
        UserError: The port is out of range, or the address cannot be bound (in use).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise UserError(f"MCP HTTP server: port must be an integer 0-65535, got {port!r}")
    sock = _listening(host, port)
    try:
        config = _sdk.uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=_GRACE_S,
        )
        server = _sdk.uvicorn.Server(config)
        if ready is not None:
            bound_host, bound_port = sock.getsockname()[:2]
            shown = f"[{bound_host}]" if ":" in bound_host else bound_host
            ready(f"http://{shown}:{bound_port}{path}")
        await server.serve(sockets=[sock])
    finally:
        sock.close()


def _listening(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise UserError(
            f"MCP HTTP server: cannot listen on {host}:{port} ({exc}); pick another port "
            "(0 picks a free one) or host"
        ) from exc
    return sock
