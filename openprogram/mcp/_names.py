"""How MCP tool names become openprogram tool names.

MCP allows names (``files/read``, ``db.query``) that providers reject, and two
servers often both have a ``search``. So every name is prefixed (by default
with the server name and ``_``), characters outside ``[a-zA-Z0-9_-]`` become
``_``, and a name that would still be too long or clash with an earlier tool of
the same server gets a short hash of the original MCP name instead of its tail.
The mapping depends only on the prefix and the listed names, so it is stable
across reconnects and restarts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from openprogram.exceptions import UserError
from openprogram.tools import TOOL_NAME_PATTERN

__all__ = ["MAX_PREFIX_CHARS", "check_server_name", "default_prefix", "map_names"]

MAX_PREFIX_CHARS = 32
"""Longest prefix: leaves at least 32 characters for the MCP tool's own name."""

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_NAME = 64
_HASH_CHARS = 8


def check_server_name(name: object) -> str:
    """The server name, checked: it names the toolset and, by default, prefixes tool names.

    Raises:
        UserError: ``name`` is not 1-64 letters, digits, ``_`` or ``-``, or is ``"none"``.
    """
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name) or name == "none":
        raise UserError(
            f"register_server: invalid server name {name!r}; use 1-64 letters, digits, '_' or "
            "'-' (it becomes the toolset name and the tool-name prefix), other than 'none'"
        )
    return name


def default_prefix(server: str) -> str:
    """``"<server>_"``, cut to ``MAX_PREFIX_CHARS``."""
    return f"{server[: MAX_PREFIX_CHARS - 1]}_"


def map_names(mcp_names: Sequence[str], prefix: str) -> dict[str, str]:
    """Map each MCP tool name to a valid, unique openprogram tool name, in listing order.

    Example:
        >>> map_names(["files/read", "files.read", "add"], "fs_")
        {'files/read': 'fs_files_read', 'files.read': 'fs_files_read_601e4eb6', 'add': 'fs_add'}

    Raises:
        UserError: ``prefix`` has characters outside ``[a-zA-Z0-9_-]`` or is too long.
    """
    if not isinstance(prefix, str) or len(prefix) > MAX_PREFIX_CHARS or _UNSAFE.search(prefix):
        raise UserError(
            f"register_server: invalid prefix {prefix!r}; use at most {MAX_PREFIX_CHARS} "
            "letters, digits, '_' or '-' ('' for none)"
        )
    mapped: dict[str, str] = {}
    taken: set[str] = set()
    for mcp_name in mcp_names:
        name = prefix + _UNSAFE.sub("_", mcp_name)
        if not mcp_name or len(name) > _MAX_NAME or name in taken:
            name = _hashed(prefix + _UNSAFE.sub("_", mcp_name), mcp_name, taken)
        mapped[mcp_name] = name
        taken.add(name)
    return mapped


def _hashed(base: str, mcp_name: str, taken: set[str]) -> str:
    digest = hashlib.sha256(mcp_name.encode("utf-8")).hexdigest()
    head = base[: _MAX_NAME - _HASH_CHARS - 1] or "tool"
    name = f"{head}_{digest[:_HASH_CHARS]}"
    # Two MCP names hashing alike in 8 hex digits is astronomically unlikely; a longer
    # digest keeps the mapping total anyway.
    return name if name not in taken else f"{head[: _MAX_NAME - 17]}_{digest[:16]}"
