"""One SQLite file, opened once per store object and shared by its threads and event loops.

The connection is guarded by a lock, so any thread (a sync ``send`` runs its
own event loop on its own thread) may use it, one at a time; the file itself
is shared with other processes through SQLite's own locking. WAL lets readers
go on while one process writes; each write is one short ``BEGIN IMMEDIATE``
transaction, never one held across a model call. ``synchronous=NORMAL``: a
commit survives the process being killed; a power cut may lose the last
commits, never the file.

Every operation is a few statements, well under a millisecond, so it runs on
the calling thread: no hop to a worker. What could block is waiting for
another process's write: after opening, SQLite waits ``BUSY_WAIT_S`` at most,
and ``aread``/``awrite`` then yield to the event loop and try again, until
the store's ``busy_timeout_s`` is spent, so a busy file never stalls a loop.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from openprogram.exceptions import ConfigurationError, OpenProgramError
from openprogram.stores._schema import migrate

__all__ = ["BUSY_WAIT_S", "Database", "use_wal"]

T = TypeVar("T")

BUSY_WAIT_S = 0.02
"""How long one attempt waits inside SQLite for another process's write before yielding."""

_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class Database:
    """A lock-guarded connection to one store file, migrated when opened."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float) -> None:
        self.path = os.fspath(path)
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        parent = Path(self.path).parent
        if self.path != ":memory:" and not parent.is_dir():
            raise ConfigurationError(
                f"SQLiteStore({self.path!r}): the folder {str(parent)!r} does not exist; "
                "create it first, or give a path in an existing folder"
            )
        # Opening blocks (it is a constructor): the migration may wait the whole timeout.
        connection = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            use_wal(connection, busy_timeout_s)
            connection.execute("PRAGMA synchronous=NORMAL")
            migrate(connection, self.path)
            connection.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")
        except BaseException:
            connection.close()
            raise
        self._connection: sqlite3.Connection | None = connection

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` on the connection (outside any transaction: each statement alone)."""
        with self._lock:
            return work(self._open())

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction: committed, or rolled back.

        Raises:
            sqlite3.OperationalError: The file stayed locked for ``BUSY_WAIT_S``.
        """
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return result

    async def aread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``read``, trying again (and letting the loop run) while the file is busy."""
        return await self._patiently(self.read, work)

    async def awrite(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``write``, trying again (and letting the loop run) while the file is busy."""
        return await self._patiently(self.write, work)

    async def _patiently(
        self,
        run: Callable[[Callable[[sqlite3.Connection], T]], T],
        work: Callable[[sqlite3.Connection], T],
    ) -> T:
        deadline = time.monotonic() + self.busy_timeout_s
        wait = BUSY_WAIT_S / 4
        while True:
            try:
                return run(work)
            except sqlite3.OperationalError as exc:
                if (exc.sqlite_errorcode & 0xFF) not in _BUSY:
                    raise
                if time.monotonic() > deadline:
                    raise OpenProgramError(
                        f"SQLiteStore({self.path!r}): another process kept the file locked "
                        f"for more than busy_timeout_s={self.busy_timeout_s:g} s; raise it, "
                        "or find what holds the file"
                    ) from exc
            await asyncio.sleep(wait)
            wait = min(wait * 2, 0.25)

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


def use_wal(connection: sqlite3.Connection, timeout_s: float) -> None:
    """Put the file in WAL mode, waiting up to ``timeout_s`` while another process holds it.

    SQLite answers this pragma "database is locked" at once, without its busy
    handler, while another connection is checkpointing or recovering the file.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
