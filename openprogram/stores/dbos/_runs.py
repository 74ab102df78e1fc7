"""Durable runs in a ``DBOSStore``: holding runs across processes and hosts, and writing them.

As in ``SQLiteStore`` (``openprogram.stores._sqlite_runs``): a run is held
through a lease row ``run:{run_id}`` (one holder at a time; a ``kill -9``'d
holder's lease free at once for processes of its host, anyone's when it
expires by the database's clock), first in this process (``Turns``). A run
whose id the runtime just made up (``fresh``) reads and writes nothing when it
opens: its first write creates it, and, when the run goes on, takes its lease
in the same transaction (nobody could know the id before).

Every write of a held run is fenced: it commits only while its holder still
holds the run's lease, checked in the write's own transaction. A holder that
stalled longer than ``lease_s`` (its lease expired, another process took the
run and went on) fails loudly instead of writing over the new holder's
journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import partial

from sqlalchemy.engine import Connection

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun
from openprogram.stores._turns import Turns
from openprogram.stores.dbos import _run_sql
from openprogram.stores.dbos._engine import StoreDatabase
from openprogram.stores.dbos._lease import Leases

__all__ = ["DBOSRuns"]


@dataclass(slots=True)
class _Fresh:
    """A fresh run this store holds: created, and leased, by its first write."""

    name: str
    """The lease's name."""
    owner: str
    """This holder's token."""
    loop: asyncio.AbstractEventLoop
    """The loop of the block that holds the run (renewals run there)."""
    create: tuple[str, str] | None
    """Its content and options, until its first write creates it."""
    leased: bool = False
    """Whether a write took its lease."""
    renewal: asyncio.Task[None] | None = None
    """Renews the lease a write took."""
    ended: bool = False
    """The block has ended."""


class DBOSRuns:
    """The ``RunStore`` half of a ``DBOSStore``."""

    def __init__(self, database: StoreDatabase, leases: Leases, turns: Turns) -> None:
        self._database = database
        self._leases = leases
        self._turns = turns
        self._fresh: dict[str, _Fresh] = {}
        self._owners: dict[str, str] = {}
        """The lease token of each run held by a block that opened it (not fresh)."""

    @contextlib.asynccontextmanager
    async def open_run(
        self, run_id: str, content: str, options: str, fresh: bool
    ) -> AsyncIterator[StoredRun]:
        """See ``RunStore.open_run``."""
        async with self._turns.hold(f"run:{run_id}"):
            if fresh:
                held = _Fresh(
                    f"run:{run_id}", os.urandom(12).hex(), asyncio.get_running_loop(),
                    (content, options),
                )  # fmt: skip
                self._fresh[run_id] = held
                try:
                    yield _new(run_id, content, options)
                finally:
                    await self._let_go(run_id, held)
                return
            async with self._leases.hold(f"run:{run_id}") as owner:
                opened = partial(_run_sql.open_run, run_id=run_id, content=content, options=options)
                stored = await self._database.run(opened)
                self._owners[run_id] = owner
                try:
                    yield stored
                finally:
                    self._owners.pop(run_id, None)

    async def record_steps(
        self,
        run_id: str,
        steps: Sequence[Step],
        status: RunStatus | None,
        pending: Sequence[PendingCall],
        error: str | None,
    ) -> None:
        """See ``RunStore.record_steps``."""
        held = self._fresh.get(run_id)
        create = held.create if held is not None else None
        claim = held is not None and create is not None and status is None
        fence = self._owners.get(run_id)
        if held is not None and held.leased:
            fence = held.owner
        name = f"run:{run_id}"

        def write(db: Connection) -> None:
            if fence is not None and not self._leases.holds(db, name, fence):
                raise OpenProgramError(
                    f"DBOSStore: this process no longer holds run {run_id!r} (it stalled longer "
                    "than lease_s and another process took the run); nothing was written"
                )
            if create is not None:
                _run_sql.create_run(db, run_id=run_id, content=create[0], options=create[1])
            if claim and held is not None and self._leases.claim(db, held.name, held.owner) > 0:
                raise OpenProgramError(f"DBOSStore: the new run {run_id!r} is held by another")
            _run_sql.write_steps(
                db, run_id=run_id, steps=steps, status=status, pending=pending, error=error
            )

        await self._database.run(write)
        if held is not None:
            held.create = None
            if claim:
                held.leased = True
                held.loop.call_soon_threadsafe(self._start_renewal, held)

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """See ``RunStore.record_decisions``."""
        await self._database.run(
            partial(_run_sql.write_decisions, run_id=run_id, decisions=decisions)
        )

    async def load_run(self, run_id: str) -> StoredRun | None:
        """See ``RunStore.load_run``."""
        return await self._database.run(partial(_run_sql.load_run, run_id=run_id))

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """See ``RunStore.list_runs``."""
        return await self._database.run(_run_sql.list_runs)

    def _start_renewal(self, held: _Fresh) -> None:
        if held.leased and not held.ended and held.renewal is None:
            held.renewal = self._leases.renewing(held.name, held.owner)

    async def _let_go(self, run_id: str, held: _Fresh) -> None:
        """The end of a fresh run's block: stop renewing and free the lease a write took."""
        held.ended = True
        self._fresh.pop(run_id, None)
        if held.renewal is not None:
            held.renewal.cancel()
        if held.leased:
            await self._leases.free(held.name, held.owner)


def _new(run_id: str, content: str, options: str) -> StoredRun:
    now = time.time()
    record = RunRecord(
        run_id=run_id, status="running", content=content, options=options, created=now, updated=now
    )
    return StoredRun(record=record, steps=(), decisions=())
