"""Leases: a named turn shared by every process using one SQLite file.

A lease is a row (name, owner token, pid, host, expiry). Taking it is one short
write transaction: the row is free when absent, expired, or held by a process
of this host that no longer exists (killed with ``kill -9``, say: the next
holder need not wait for the expiry). Otherwise the taker sleeps and tries
again. While held, the lease is renewed every third of its length, so a
long model call keeps it; a holder that stops renewing (killed on another
host, or frozen) loses it when it expires. No transaction stays open while
the lease is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

from openprogram.exceptions import OpenProgramError
from openprogram.stores._database import Database

__all__ = [
    "Leases",
    "Renewal",
    "free_lease",
    "holder_is_gone",
    "take_waiting",
]

logger = logging.getLogger("openprogram.stores")

_FIRST_WAIT_S = 0.005
_LONGEST_WAIT_S = 0.25


class Leases:
    """Named leases in ``database``, each ``lease_s`` seconds long unless renewed."""

    def __init__(self, database: Database, lease_s: float) -> None:
        self._database = database
        self.lease_s = lease_s
        self._host = socket.gethostname()

    @contextlib.asynccontextmanager
    async def hold(self, name: str) -> AsyncIterator[str]:
        """Take the lease ``name`` (waiting for it), renew it while the block runs, free it;
        the block gets this holder's token."""
        owner = os.urandom(12).hex()
        take = partial(_take, name=name, owner=owner, host=self._host, lease_s=self.lease_s)
        await take_waiting(partial(self._database.awrite, take), partial(self.free, name, owner))
        # A timer, not a task: most sends end before the first renewal is due.
        renewal = Renewal(self._database, name, owner, self.lease_s)
        try:
            yield owner
        finally:
            renewal.stop()
            await self.free(name, owner)

    def claim(self, db: sqlite3.Connection, name: str, owner: str) -> float:
        """One attempt to take the lease ``name`` in the caller's transaction (0: taken, else
        the seconds until it expires); the caller then keeps it with ``renew``."""
        return _take(db, name=name, owner=owner, host=self._host, lease_s=self.lease_s)

    def holds(self, db: sqlite3.Connection, name: str, owner: str) -> bool:
        """Whether ``owner`` holds the lease ``name``, in the caller's transaction."""
        row = db.execute("SELECT owner FROM openprogram_leases WHERE name = ?", (name,)).fetchone()
        return row is not None and bool(row[0] == owner)

    def free_in(self, db: sqlite3.Connection, name: str, owner: str) -> bool:
        """Free the lease ``name`` if ``owner`` holds it, in the caller's transaction; whether
        it did."""
        return free_lease(db, name=name, owner=owner)

    def renew(self, name: str, owner: str) -> Callable[[], None]:
        """Renew a lease taken with ``claim`` from this loop; returns what stops it."""
        return Renewal(self._database, name, owner, self.lease_s).stop

    async def free(self, name: str, owner: str) -> None:
        """Free the lease ``name`` if ``owner`` holds it, in a transaction of its own."""
        free = partial(free_lease, name=name, owner=owner)
        try:
            self._database.write(free)  # at once, so a cancelled send frees its turn too
        except sqlite3.OperationalError:
            # The file is busy: free it when it is not (shielded: even if cancelled now).
            await asyncio.shield(self._database.awrite(free))


class Renewal:
    """Renews one held lease every third of its length, from the holder's event loop."""

    def __init__(self, database: Database, name: str, owner: str, lease_s: float) -> None:
        self._database = database
        self._name = name
        self._renew = partial(_renew, name=name, owner=owner, lease_s=lease_s)
        self._every = lease_s / 3
        self._task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(self._every, self._start)

    def _start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await self._database.awrite(self._renew)
            except (sqlite3.Error, OpenProgramError) as exc:
                # A busy or closed file: the lease may lapse, and a late append then fails
                # loudly (the stored length no longer matches); the send itself goes on.
                logger.warning("could not renew the lease %r: %s", self._name, exc)
            await asyncio.sleep(self._every)

    def stop(self) -> None:
        """No more renewals (a renewal running now ends at its next pause)."""
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


def _take(db: sqlite3.Connection, *, name: str, owner: str, host: str, lease_s: float) -> float:
    """One attempt to take the lease: 0 when taken, else the seconds until it expires."""
    now = time.time()
    row = db.execute(
        "SELECT pid, host, expires_at FROM openprogram_leases WHERE name = ?", (name,)
    ).fetchone()
    if row is not None and row[2] > now and not holder_is_gone(row[0], row[1], host):
        return float(row[2] - now)
    db.execute(
        "INSERT OR REPLACE INTO openprogram_leases (name, owner, pid, host, expires_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (name, owner, os.getpid(), host, now + lease_s),
    )
    return 0.0


def _renew(db: sqlite3.Connection, *, name: str, owner: str, lease_s: float) -> None:
    db.execute(
        "UPDATE openprogram_leases SET expires_at = ? WHERE name = ? AND owner = ?",
        (time.time() + lease_s, name, owner),
    )


def free_lease(db: sqlite3.Connection, *, name: str, owner: str) -> bool:
    """Free the lease ``name`` if ``owner`` holds it (in the caller's transaction); whether it
    did."""
    done = db.execute("DELETE FROM openprogram_leases WHERE name = ? AND owner = ?", (name, owner))
    return done.rowcount == 1


async def take_waiting(
    attempt: Callable[[], Awaitable[float]], release: Callable[[], Awaitable[None]]
) -> None:
    """Call ``attempt`` (one try to take a lease: 0 when taken, else the seconds it has left)
    until it takes the lease, sleeping between tries (longer each time, never past the
    expiry). Cancelled during a try, it calls ``release`` (free the lease if this holder has
    it: the try may have taken it before the cancel came) before it gives up."""
    wait = _FIRST_WAIT_S
    while True:
        try:
            left = await attempt()
        except asyncio.CancelledError:
            await release()
            raise
        if left <= 0:
            return
        await asyncio.sleep(min(wait, left))
        wait = min(wait * 2, _LONGEST_WAIT_S)


def holder_is_gone(pid: int, host: str, this_host: str) -> bool:
    """Whether the lease's holder is a process of this host that no longer exists."""
    if host != this_host or pid == os.getpid() or os.name != "posix":
        return False  # another host, or this process: only the expiry tells
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, only whether the process exists
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it exists (another user's)
    return False
