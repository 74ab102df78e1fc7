"""The keyword options of ``register_server`` / ``aregister_server``, taken once.

``ServerKwargs`` types the keywords for callers (``**options: Unpack[ServerKwargs]``);
``ServerOptions`` is the validated, defaulted form. A test keeps the two field
lists identical.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from openprogram.exceptions import UserError
from openprogram.mcp._names import default_prefix, map_names
from openprogram.tools import ApprovalRule

__all__ = ["ServerKwargs", "ServerOptions", "server_options"]


class ServerKwargs(TypedDict, total=False):
    """Keyword options of ``register_server`` (see ``ServerOptions``)."""

    command: str | Sequence[str] | None
    url: str | None
    env: Mapping[str, str] | None
    cwd: str | os.PathLike[str] | None
    headers: Mapping[str, str] | None
    defer: bool
    toolset: str | Sequence[str] | None
    unsafe_in: str | Sequence[str]
    requires_approval: ApprovalRule
    timeout: float | None
    prefix: str | None
    connect_timeout: float
    reconnect_attempts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """Validated options of one ``register_server`` call."""

    command: str | Sequence[str] | None = None
    """Program and arguments of a stdio server (a string is split like a shell)."""
    url: str | None = None
    """Endpoint of a streamable-HTTP server, e.g. ``"http://127.0.0.1:8000/mcp"``."""
    env: Mapping[str, str] | None = None
    """Extra environment of a stdio server (it does not inherit the whole environment)."""
    cwd: str | os.PathLike[str] | None = None
    """Working directory of a stdio server."""
    headers: Mapping[str, str] | None = None
    """HTTP headers sent to an HTTP server (e.g. ``Authorization``)."""
    defer: bool = True
    """Register the tools deferred: catalog only until ``tool_search`` loads them."""
    toolset: str | Sequence[str] | None = None
    """Toolset(s) of the tools; ``None`` means the server name."""
    unsafe_in: str | Sequence[str] = ()
    """Channel sources where the tools are hidden."""
    requires_approval: ApprovalRule = False
    """``True`` or ``callable(args) -> bool | str``, applied to every tool of the server."""
    timeout: float | None = None
    """Seconds per call; expiry is an error result and cancels the call on the server."""
    prefix: str | None = None
    """Prepended to every tool name; ``None`` means ``"<server name>_"``, ``""`` none."""
    connect_timeout: float = 30.0
    """Seconds one connection attempt may take (start, handshake, listing)."""
    reconnect_attempts: int = 3
    """Connection attempts after a drop before a call fails (``0``: never reconnect)."""

    def toolsets(self, server: str) -> tuple[str, ...]:
        """The toolsets of the server's tools."""
        if self.toolset is None:
            return (server,)
        return (self.toolset,) if isinstance(self.toolset, str) else tuple(self.toolset)

    def name_prefix(self, server: str) -> str:
        """The prefix of the server's tool names."""
        return default_prefix(server) if self.prefix is None else self.prefix


def server_options(options: Mapping[str, Any]) -> ServerOptions:
    """Build and check the options of one call.

    Raises:
        TypeError: An unknown keyword.
        UserError: A value out of range or of the wrong kind (transport options are
            checked by ``make_transport``).
    """
    unknown = sorted(set(options) - set(ServerOptions.__dataclass_fields__))
    if unknown:
        known = ", ".join(ServerOptions.__dataclass_fields__)
        raise TypeError(f"register_server: unknown option(s) {unknown}; known options: {known}")
    result = ServerOptions(**options)
    _positive("timeout", result.timeout, allow_none=True)
    _positive("connect_timeout", result.connect_timeout, allow_none=False)
    attempts = result.reconnect_attempts
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        raise UserError(
            f"register_server: reconnect_attempts must be an integer >= 0, got {attempts!r}"
        )
    approval = result.requires_approval
    if not isinstance(approval, bool) and not callable(approval):
        raise UserError(
            "register_server: requires_approval must be True, False or callable(args) -> "
            f"bool | str, got {approval!r}"
        )
    if result.prefix is not None:
        map_names([], result.prefix)  # raises on an invalid prefix
    return result


def _positive(name: str, value: object, *, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UserError(
            f"register_server: {name} must be a number of seconds > 0"
            f"{' or None' if allow_none else ''}, got {value!r}"
        )
