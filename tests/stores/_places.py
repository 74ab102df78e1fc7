"""Where a shared store lives, as one string that a test and the processes it starts both open.

``sqlite:PATH`` is a ``SQLiteStore``; ``dbos:URL`` a ``DBOSStore`` (``URL`` is
``sqlite:///…`` or ``postgresql://…``). Imported by the store tests and by
``_chat_process.py``, which runs as a script beside this file.
"""

from __future__ import annotations

from typing import Any

from openprogram.stores import SQLiteStore, Store

__all__ = ["open_store"]


def open_store(place: str, **options: Any) -> Store:
    """A new store object on ``place`` (``lease_s=`` and the like passed on)."""
    kind, _, where = place.partition(":")
    if kind == "sqlite":
        return SQLiteStore(where, **options)
    if kind == "dbos":
        from openprogram.stores.dbos import DBOSStore

        return DBOSStore(where, **options)
    raise ValueError(f"unknown store place {place!r}")
