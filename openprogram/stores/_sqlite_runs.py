"""Durable runs in a ``SQLiteStore`` file: holding runs, and the few transactions a run costs.

A run is held through a lease row (``_lease``), like a conversation's turn: one
holder at a time across processes, a ``kill -9``'d holder's lease free at once
for processes of the same machine, a frozen one's when it expires. An exec
whose run id the runtime just made up (``fresh``) costs the least: nothing is
read (nothing can be recorded under a new id) and nothing is written when it
opens; its first write creates the run and takes its lease in one
transaction (a run too short to write before it ends is created by its last
write, already ended, and never leased: nobody could know its id before). A
run's last write (its status) frees the lease in the same transaction. So a
short exec is one transaction; a long one, one per batch of steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.stores import _run_sql
from openprogram.stores._database import Database
from openprogram.stores._lease import Leases, Renewal, free_lease
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun
from openprogram.stores._turns import Turns

__all__ = ["SQLiteRuns"]


@dataclass(slots=True)
class _Held:
    """A run this store holds (or will, from its first write, for a fresh one)."""

    name: str
    """The lease's name."""
    owner: str
    """This holder's token."""
    fresh: tuple[str, str] | None = None
    """A fresh run not created yet: its content and options."""
    leased: bool = False
    """Whether this holder has the lease row."""
    renewal: Renewal | None = None
    """Renews a lease taken by a write (a fresh run's first)."""
    loop: asyncio.AbstractEventLoop | None = None
    """The loop of the block that holds the run (renewals run there, whoever wrote first)."""
    ended: bool = False
    """The block has ended."""


class SQLiteRuns:
    """The ``RunStore`` half of a ``SQLiteStore``."""

    def __init__(self, database: Database, leases: Leases, turns: Turns) -> None:
        self._database = database
        self._leases = leases
        self._turns = turns
        self._held: dict[str, _Held] = {}

    @contextlib.asynccontextmanager
    async def open_run(
        self, run_id: str, content: str, options: str, fresh: bool
    ) -> AsyncIterator[StoredRun]:
        """See ``RunStore.open_run``."""
        async with self._turns.hold(f"run:{run_id}"):
            if fresh:
                held = _Held(f"run:{run_id}", os.urandom(12).hex(), fresh=(content, options))
                held.loop = asyncio.get_running_loop()
                self._held[run_id] = held
                try:
                    yield _new(run_id, content, options)
                finally:
                    await self._let_go(run_id, held)
                return
            opened = partial(_run_sql.open_run, run_id=run_id, content=content, options=options)
            async with self._leases.hold(f"run:{run_id}", then=opened) as lease:
                held = _Held(lease.name, lease.owner, leased=True)
                self._held[run_id] = held
                try:
                    yield lease.value
                finally:
                    self._held.pop(run_id, None)
                    lease.freed = not held.leased  # freed by the run's last write

    async def record_steps(
        self,
        run_id: str,
        steps: Sequence[Step],
        status: RunStatus | None,
        pending: Sequence[PendingCall],
        error: str | None,
    ) -> None:
        """See ``RunStore.record_steps``."""
        held = self._held.get(run_id)
        create = held.fresh if held is not None else None
        claim = create is not None and status is None  # a fresh run going on: lease it now
        free = held is not None and held.leased and status is not None

        def write(db: Any) -> None:
            if create is not None:
                _run_sql.create_run(db, run_id=run_id, content=create[0], options=create[1])
            if claim and held is not None and self._leases.claim(db, held.name, held.owner) > 0:
                raise OpenProgramError(f"SQLiteStore: the new run {run_id!r} is held by another")
            lease = (held.name, held.owner) if free and held is not None else None
            _run_sql.write_steps(
                db,
                run_id=run_id,
                steps=steps,
                status=status,
                pending=pending,
                error=error,
                lease=lease,
            )

        await self._database.awrite(write)
        if held is not None:
            held.fresh = None
            if claim:
                held.leased = True
                self._renew_on_its_loop(held)
            if free:
                held.leased = False
                if held.renewal is not None:
                    held.renewal.stop()

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """See ``RunStore.record_decisions``."""
        await self._database.awrite(
            partial(_run_sql.write_decisions, run_id=run_id, decisions=decisions)
        )

    async def load_run(self, run_id: str) -> StoredRun | None:
        """See ``RunStore.load_run``."""
        return await self._database.aread(partial(_run_sql.load_run, run_id=run_id))

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """See ``RunStore.list_runs``."""
        return await self._database.aread(_run_sql.list_runs)

    def _renew_on_its_loop(self, held: _Held) -> None:
        """Renew a lease a write took, on the holding block's loop (a nested exec's write may
        come from a loop that ends before the run does)."""

        def start() -> None:
            if held.leased and not held.ended:
                held.renewal = self._leases.renew(held.name, held.owner)

        loop = held.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or loop is running:
            start()
        else:
            loop.call_soon_threadsafe(start)

    async def _let_go(self, run_id: str, held: _Held) -> None:
        """The end of a fresh run's block: free its lease if a write took it and none freed it."""
        held.ended = True
        self._held.pop(run_id, None)
        if held.renewal is not None:
            held.renewal.stop()
        if held.leased:
            await self._database.awrite(partial(free_lease, name=held.name, owner=held.owner))


def _new(run_id: str, content: str, options: str) -> StoredRun:
    now = time.time()
    record = RunRecord(
        run_id=run_id, status="running", content=content, options=options, created=now, updated=now
    )
    return StoredRun(record=record, steps=(), decisions=())
