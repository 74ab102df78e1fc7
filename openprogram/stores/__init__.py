"""Stores: where conversations live between sends, processes and reboots.

``Store`` is the protocol ``Runtime(store=...)`` takes; ``MemoryStore`` keeps
state in this process (the default), ``SQLiteStore(path)`` in one SQLite file
that threads and processes of one machine share. See ``docs/conversations.md``.

``SQLiteStore`` loads on first access, so that ``import openprogram`` does not
load ``sqlite3``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openprogram.stores._memory import MemoryStore
from openprogram.stores._protocol import Store

if TYPE_CHECKING:
    from openprogram.stores._sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "Store"]


def __getattr__(name: str) -> Any:
    if name != "SQLiteStore":
        raise AttributeError(f"module 'openprogram.stores' has no attribute {name!r}")
    value = importlib.import_module("openprogram.stores._sqlite").SQLiteStore
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
