"""Leases in a ``DBOSStore``'s database: a named turn shared by processes on many hosts.

The rules of ``SQLiteStore``'s leases (``openprogram.stores._lease``), spoken
to SQLite or PostgreSQL: a row (name, owner token, pid, host, expiry). The row
is free when absent, expired, or held by a process of this host that no
longer exists (``kill -9``: the next holder need not wait for the expiry).
Expiry is by the database's clock, so hosts whose clocks drift agree.

Taking a lease is one conditional upsert that names the owner the taker saw
(none, an expired one, a dead one): when two takers race for one row, the
database lets one statement through and the other changes nothing, so both
databases give the same answer without holding a lock between statements.
While held, the lease is renewed every third of its length; a holder that
stops renewing (killed on another host, or frozen) loses it when it expires.
No transaction stays open while the lease is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable
from functools import partial

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from openprogram.stores._lease import holder_is_gone, take_waiting
from openprogram.stores.dbos._engine import StoreDatabase

__all__ = ["Leases", "free_lease"]

logger = logging.getLogger("openprogram.stores")

_LOST_RACE_WAIT_S = 0.005
_FREE = sa.text("DELETE FROM openprogram_leases WHERE name = :name AND owner = :owner")


class Leases:
    """Named leases in ``database``, each ``lease_s`` seconds long unless renewed."""

    def __init__(self, database: StoreDatabase, lease_s: float) -> None:
        self._database = database
        self.lease_s = lease_s
        self._host = socket.gethostname()
        now = database.dialect.now
        self._take_sql = sa.text(
            "INSERT INTO openprogram_leases (name, owner, pid, host, expires_at) "
            f"VALUES (:name, :owner, :pid, :host, {now} + :lease_s) "
            "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, "
            "host = excluded.host, expires_at = excluded.expires_at "
            "WHERE openprogram_leases.owner = :seen"
        )
        self._read_sql = sa.text(
            f"SELECT owner, pid, host, expires_at - {now} "
            "FROM openprogram_leases WHERE name = :name"
        )
        self._owner_sql = sa.text("SELECT owner FROM openprogram_leases WHERE name = :name")
        self._renew_sql = sa.text(
            f"UPDATE openprogram_leases SET expires_at = {now} + :lease_s "
            "WHERE name = :name AND owner = :owner"
        )

    @contextlib.asynccontextmanager
    async def hold(self, name: str) -> AsyncIterator[str]:
        """Take the lease ``name`` (waiting for it), renew it while the block runs, free it;
        the block gets this holder's token (``holds`` checks it)."""
        owner = os.urandom(12).hex()
        take = partial(self._database.run, partial(self._take, name=name, owner=owner))
        await take_waiting(take, partial(self.free, name, owner))
        renewing = asyncio.ensure_future(self._renew_every_third(name, owner))
        try:
            yield owner
        finally:
            renewing.cancel()
            await self.free(name, owner)

    def claim(self, db: Connection, name: str, owner: str) -> float:
        """Take the lease ``name`` for ``owner`` in the transaction of ``db``: 0 when taken,
        else the seconds to wait; the caller keeps it with ``renew`` and frees it with
        ``free_in`` or ``free``."""
        return self._take(db, name=name, owner=owner)

    def holds(self, db: Connection, name: str, owner: str) -> bool:
        """Whether ``owner`` still holds the lease ``name``, in the transaction of ``db``."""
        row = db.execute(self._owner_sql, {"name": name}).first()
        return row is not None and row[0] == owner

    def free_in(self, db: Connection, name: str, owner: str) -> bool:
        """Free the lease ``name`` if ``owner`` holds it, in the transaction of ``db``; whether
        it did."""
        return free_lease(db, name=name, owner=owner)

    def renewing(self, name: str, owner: str) -> asyncio.Task[None]:
        """Renew a lease taken with ``claim`` every third of its length, on this loop, until
        the task is cancelled."""
        return asyncio.ensure_future(self._renew_every_third(name, owner))

    def renew(self, name: str, owner: str) -> Callable[[], object]:
        """``renewing``, returning what stops it."""
        return self.renewing(name, owner).cancel

    async def free(self, name: str, owner: str) -> None:
        """Free the lease ``name`` if ``owner`` holds it, in a transaction of its own."""
        # A worker thread finishes the delete even if this task is cancelled meanwhile.
        await asyncio.shield(self._database.run(partial(free_lease, name=name, owner=owner)))

    def _take(self, db: Connection, *, name: str, owner: str) -> float:
        """One attempt: 0 when taken, else the seconds to wait before the next."""
        row = db.execute(self._read_sql, {"name": name}).first()
        seen = ""
        if row is not None:
            held_by, pid, host, left = row
            if left > 0 and not holder_is_gone(pid, host, self._host):
                return float(left)
            seen = held_by
        values = {"name": name, "owner": owner, "pid": os.getpid(), "host": self._host}
        taken = db.execute(self._take_sql, {**values, "lease_s": self.lease_s, "seen": seen})
        return 0.0 if taken.rowcount == 1 else _LOST_RACE_WAIT_S  # lost a race: look again

    async def _renew_every_third(self, name: str, owner: str) -> None:
        renew = partial(_renew, sql=self._renew_sql, name=name, owner=owner, lease_s=self.lease_s)
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await self._database.run(renew)
            except sa.exc.SQLAlchemyError as exc:
                # The database is out of reach for now: the lease may lapse, and a late
                # append then fails loudly (the stored length no longer matches).
                logger.warning("could not renew the lease %r: %s", name, exc)


def _renew(db: Connection, *, sql: sa.TextClause, name: str, owner: str, lease_s: float) -> None:
    db.execute(sql, {"name": name, "owner": owner, "lease_s": lease_s})


def free_lease(db: Connection, *, name: str, owner: str) -> bool:
    """Free the lease ``name`` if ``owner`` holds it (in the caller's transaction); whether it
    did."""
    done = db.execute(_FREE, {"name": name, "owner": owner})
    return done.rowcount == 1
