"""The registry: named tools, lazy cards and toolsets, in registration order.

``default_registry`` is where ``@function`` and ``@agentic_function`` register
unless given ``registry=``. See ``docs/concepts.md`` and ``docs/gates.md``.
"""

from __future__ import annotations

from openprogram.registry._lazy import LazyTool
from openprogram.registry._registry import (
    RESERVED_TOOLSETS,
    Registry,
    RegistrySnapshot,
    default_registry,
)

__all__ = ["RESERVED_TOOLSETS", "LazyTool", "Registry", "RegistrySnapshot", "default_registry"]
