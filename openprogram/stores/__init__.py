"""Stores: where conversations live between sends, processes and reboots.

``Store`` is the protocol ``Runtime(store=...)`` takes; ``MemoryStore`` keeps
state in this process (the default), ``SQLiteStore(path)`` in one SQLite file
that threads and processes of one machine share. See ``docs/conversations.md``.
"""

from __future__ import annotations

from openprogram.stores._memory import MemoryStore
from openprogram.stores._protocol import Store
from openprogram.stores._sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "Store"]
