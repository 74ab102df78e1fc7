"""One SQLite file, opened once per store object and shared by its threads.

The connection is guarded by a lock, so any thread (a worker of a sync
``send``, the thread pool an async one uses) may use it, one at a time; the
file itself is shared with other processes through SQLite's own locking.
WAL lets readers go on while one process writes; each write is a short
``BEGIN IMMEDIATE`` transaction (the busy timeout waits out another writer),
never one held across a model call. ``synchronous=NORMAL``: a commit survives
the process being killed; a power cut may lose the last commits, never the file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from openprogram.exceptions import ConfigurationError, OpenProgramError
from openprogram.stores._schema import migrate

__all__ = ["Database"]

T = TypeVar("T")


class Database:
    """A lock-guarded connection to one store file, migrated when opened."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        parent = Path(self.path).parent
        if self.path != ":memory:" and not parent.is_dir():
            raise ConfigurationError(
                f"SQLiteStore({self.path!r}): the folder {str(parent)!r} does not exist; "
                "create it first, or give a path in an existing folder"
            )
        connection = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            migrate(connection, self.path)
        except BaseException:
            connection.close()
            raise
        self._connection: sqlite3.Connection | None = connection

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` on the connection (outside any transaction: each statement alone)."""
        with self._lock:
            return work(self._open())

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction: committed, or rolled back."""
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._connection is None

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            raise OpenProgramError(
                f"SQLiteStore({self.path!r}) is closed; open a new one to use the file again"
            )
        return self._connection
