"""Stores: where conversations and durable runs live between calls, processes and reboots.

``Store`` is the protocol ``Runtime(store=...)`` takes (conversations);
``RunStore`` is what a store does for durable runs (run records, journals,
decisions about paused calls). ``MemoryStore`` keeps both in this process (the
default for conversations), ``SQLiteStore(path)`` in one SQLite file that
threads and processes of one machine share. See ``docs/conversations.md`` and
``docs/durable.md``.

``SQLiteStore`` loads on first access, so that ``import openprogram`` does not
load ``sqlite3``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openprogram.stores._memory import MemoryStore
from openprogram.stores._protocol import Store
from openprogram.stores._runs import (
    Decision,
    RunQueue,
    RunRecord,
    RunStatus,
    RunStore,
    Step,
    StepKind,
    StoredRun,
)

if TYPE_CHECKING:
    from openprogram.stores._sqlite import SQLiteStore

__all__ = [
    "Decision",
    "MemoryStore",
    "RunQueue",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "SQLiteStore",
    "Step",
    "StepKind",
    "Store",
    "StoredRun",
]


def __getattr__(name: str) -> Any:
    if name != "SQLiteStore":
        raise AttributeError(f"module 'openprogram.stores' has no attribute {name!r}")
    value = importlib.import_module("openprogram.stores._sqlite").SQLiteStore
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
