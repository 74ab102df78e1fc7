"""The one place that imports the optional ``mcp`` SDK (the ``openprogram-ai[mcp]`` extra).

``import openprogram.mcp`` works without the SDK, so documentation, type hints
and ``isinstance`` checks never need it. Other modules of this package reach
the SDK only as attributes of this module (``_sdk.ClientSession``) and only
after ``require_sdk()`` passed, which raises a ``ConfigurationError`` saying
how to install the extra.
"""

from __future__ import annotations

from importlib import metadata

from openprogram.exceptions import ConfigurationError

# The SDK names are listed so that mypy treats them as re-exported (``_sdk.ClientSession``);
# they exist only when the extra is installed, and nothing uses them before require_sdk().
__all__ = [
    "INSTALL_HINT",
    "SDK_IMPORT_ERROR",
    "ClientSession",
    "MCPError",
    "Server",
    "StdioServerParameters",
    "anyio",
    "httpx2",
    "is_version_at_least",
    "require_sdk",
    "stdio_client",
    "stdio_server",
    "streamable_http_client",
    "types",
    "uvicorn",
]

INSTALL_HINT = "install it with: pip install 'openprogram-ai[mcp]'"

SDK_IMPORT_ERROR: ImportError | None
"""Why the SDK could not be imported (``None`` when it is installed)."""

try:
    import anyio
    import httpx2
    import uvicorn  # a dependency of the SDK's HTTP server, already imported by it
    from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
    from mcp_types.version import is_version_at_least
except ImportError as exc:  # the extra is optional: remember why, complain on first use
    SDK_IMPORT_ERROR = exc
else:
    SDK_IMPORT_ERROR = None


def require_sdk(what: str) -> None:
    """Raise a ``ConfigurationError`` saying ``what`` needs the SDK, when it is missing.

    Raises:
        ConfigurationError: The ``mcp`` package (2.x) cannot be imported.
    """
    if SDK_IMPORT_ERROR is None:
        return
    try:
        found = f"mcp {metadata.version('mcp')} is installed but unusable ({SDK_IMPORT_ERROR})"
    except metadata.PackageNotFoundError:
        found = "it is not installed"
    raise ConfigurationError(
        f"{what} needs the official MCP SDK, version 2 (the 'mcp>=2,<3' package), and {found}; "
        f"{INSTALL_HINT}"
    ) from SDK_IMPORT_ERROR
