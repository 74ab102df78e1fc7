"""Durable runs in a shared database: holding runs, and the few transactions a run costs.

``SQLiteStore`` and ``DBOSStore`` hold runs alike; what differs is their
database layer, which gives ``HeldRuns`` how a transaction runs
(``Transactions``), the SQL of runs (``RunSQL``, a module) and its leases
(``RunLeases``). A run is held through a lease row
``run:{run_id}``, like a conversation's turn: one holder at a time across
processes (and hosts, for a database on a server), first in this process
(``Turns``); a ``kill -9``'d holder's lease is free at once for processes of
its host, a frozen one's when it expires.

Opening a stored run takes its lease and marks it running in one
transaction. A run whose id the runtime just made up (``fresh``) costs the
least: nothing is read (nothing can be recorded under a new id) and nothing is
written when it opens; its first write creates the run and, when the run goes
on, takes its lease in the same transaction (a run too short to write before
it ends is created by its last write, already ended, and never leased: nobody
could know its id before). A run's last write (its status) frees the lease in
the same transaction. So a short exec is one transaction; a long one, one per
batch of steps.

Every write of a leased run is fenced: it commits only while its holder still
holds the run's lease, checked in the write's own transaction (the last write's
freeing of the lease is the check). A holder that stalled longer than
``lease_s`` (its lease expired, another process took the run and went on)
fails loudly instead of writing over the new holder's journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.stores._lease import take_waiting
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun
from openprogram.stores._turns import Turns

__all__ = ["HeldRuns", "RunLeases", "RunSQL", "Transactions"]

T = TypeVar("T")
Db = TypeVar("Db")
Db_co = TypeVar("Db_co", covariant=True)
Db_contra = TypeVar("Db_contra", contravariant=True)


class Transactions(Protocol[Db_co]):
    """How a database layer runs work on its connections (of type ``Db``)."""

    async def aread(self, work: Callable[[Db_co], T]) -> T:
        """Run ``work`` on a connection (no write)."""
        ...

    async def awrite(self, work: Callable[[Db_co], T]) -> T:
        """Run ``work`` in one write transaction: committed, or rolled back."""
        ...


class RunSQL(Protocol[Db_contra]):
    """The SQL of runs of a database layer (a module), each in the caller's transaction."""

    def open_run(self, db: Db_contra, *, run_id: str, content: str, options: str) -> StoredRun:
        """Create the run (status running) or mark the stored one running; return it as it was."""
        ...

    def create_run(self, db: Db_contra, *, run_id: str, content: str, options: str) -> RunRecord:
        """Insert a new run, status running."""
        ...

    def write_new_run(
        self,
        db: Db_contra,
        *,
        run_id: str,
        content: str,
        options: str,
        steps: Sequence[Step],
        status: RunStatus | None,
        pending: Sequence[PendingCall],
        error: str | None,
    ) -> None:
        """Insert a new run with its status (``None``: running) and its first batch of steps."""
        ...

    def write_steps(
        self,
        db: Db_contra,
        *,
        run_id: str,
        steps: Sequence[Step],
        status: RunStatus | None,
        pending: Sequence[PendingCall],
        error: str | None,
    ) -> None:
        """Write steps and, with ``status``, the run's new status."""
        ...

    def write_decisions(self, db: Db_contra, *, run_id: str, decisions: Sequence[Decision]) -> None:
        """Write decisions (one per path; a later one replaces it)."""
        ...

    def load_run(self, db: Db_contra, *, run_id: str) -> StoredRun | None:
        """Everything stored of ``run_id``, or ``None``."""
        ...

    def list_runs(self, db: Db_contra) -> tuple[RunRecord, ...]:
        """Every run's record, oldest first."""
        ...


class RunLeases(Protocol[Db_contra]):
    """The leases of a database layer, as runs use them."""

    def claim(self, db: Db_contra, name: str, owner: str) -> float:
        """One attempt to take the lease ``name`` in the caller's transaction: 0 when taken,
        else the seconds to wait."""
        ...

    def holds(self, db: Db_contra, name: str, owner: str) -> bool:
        """Whether ``owner`` holds the lease ``name`` (in the caller's transaction)."""
        ...

    def free_in(self, db: Db_contra, name: str, owner: str) -> bool:
        """Free the lease ``name`` if ``owner`` holds it, in the caller's transaction; whether
        it did."""
        ...

    def renew(self, name: str, owner: str) -> Callable[[], object]:
        """Renew a claimed lease from the running loop; returns what stops the renewals."""
        ...

    async def free(self, name: str, owner: str) -> None:
        """Free the lease ``name`` if ``owner`` holds it, in a transaction of its own that
        finishes even if the caller is cancelled."""
        ...


@dataclass(slots=True)
class _Held:
    """A run this store holds (or will, from its first write, for a fresh one)."""

    name: str
    """The lease's name."""
    owner: str
    """This holder's token."""
    loop: asyncio.AbstractEventLoop
    """The loop of the block that holds the run (renewals run there, whoever wrote)."""
    create: tuple[str, str] | None = None
    """A fresh run not created yet: its content and options."""
    leased: bool = False
    """Whether this holder has the lease row."""
    stop_renewing: Callable[[], object] | None = None
    """Stops the renewals of the lease (set once it is leased)."""
    ended: bool = False
    """The block has ended."""


class HeldRuns(Generic[Db]):
    """The ``RunStore`` half of the store ``where``: runs in ``database``, written with
    ``sql``, held through ``leases`` and, in this process, ``turns``."""

    def __init__(
        self,
        where: str,
        database: Transactions[Db],
        sql: RunSQL[Db],
        leases: RunLeases[Db],
        turns: Turns,
    ) -> None:
        self._where = where
        self._database = database
        self._sql = sql
        self._leases = leases
        self._turns = turns
        self._held: dict[str, _Held] = {}

    @contextlib.asynccontextmanager
    async def open_run(
        self, run_id: str, content: str, options: str, fresh: bool
    ) -> AsyncIterator[StoredRun]:
        """See ``RunStore.open_run``."""
        async with self._turns.hold(f"run:{run_id}"):
            held = _Held(f"run:{run_id}", os.urandom(12).hex(), asyncio.get_running_loop())
            if fresh:
                held.create = (content, options)
                stored = _new(run_id, content, options)
            else:
                stored = await self._take(held, run_id, content, options)
            self._held[run_id] = held
            try:
                yield stored
            finally:
                await self._let_go(run_id, held)

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
        create = held.create if held is not None else None
        claim = create is not None and status is None  # a fresh run going on: lease it now
        fence = held is not None and held.leased
        free = fence and status is not None  # the last write: freeing the lease is the fence
        sql, leases, where = self._sql, self._leases, self._where

        def write(db: Any) -> None:
            if held is not None and fence:
                done = (leases.free_in if free else leases.holds)(db, held.name, held.owner)
                if not done:
                    raise OpenProgramError(
                        f"{where}: this process no longer holds run {run_id!r} (it stalled "
                        "longer than lease_s and another process took the run); nothing was "
                        "written"
                    )
            if create is None:
                sql.write_steps(
                    db, run_id=run_id, steps=steps, status=status, pending=pending, error=error
                )
                return
            content, options = create
            sql.write_new_run(
                db,
                run_id=run_id,
                content=content,
                options=options,
                steps=steps,
                status=status,
                pending=pending,
                error=error,
            )
            if claim and held is not None and leases.claim(db, held.name, held.owner) > 0:
                raise OpenProgramError(f"{where}: the new run {run_id!r} is held by another")

        await self._database.awrite(write)
        if held is not None:
            held.create = None
            if claim:
                held.leased = True
                self._on_its_loop(held, self._start_renewing)
            if free:
                held.leased = False
                self._on_its_loop(held, _stop_renewing)

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """See ``RunStore.record_decisions``."""
        await self._database.awrite(
            partial(self._sql.write_decisions, run_id=run_id, decisions=decisions)
        )

    async def load_run(self, run_id: str) -> StoredRun | None:
        """See ``RunStore.load_run``."""
        return await self._database.aread(partial(self._sql.load_run, run_id=run_id))

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """See ``RunStore.list_runs``."""
        return await self._database.aread(self._sql.list_runs)

    async def _take(self, held: _Held, run_id: str, content: str, options: str) -> StoredRun:
        """Take a stored run's lease (waiting for it), opening the run in the same transaction."""
        opened: list[StoredRun] = []

        def attempt(db: Any) -> float:
            left = self._leases.claim(db, held.name, held.owner)
            if left == 0:
                opened.append(
                    self._sql.open_run(db, run_id=run_id, content=content, options=options)
                )
            return left

        await take_waiting(
            partial(self._database.awrite, attempt),
            partial(self._leases.free, held.name, held.owner),
        )
        held.leased = True
        self._start_renewing(held)
        return opened[-1]

    def _start_renewing(self, held: _Held) -> None:
        if held.leased and not held.ended and held.stop_renewing is None:
            held.stop_renewing = self._leases.renew(held.name, held.owner)

    @staticmethod
    def _on_its_loop(held: _Held, work: Callable[[_Held], None]) -> None:
        """Run ``work`` on the holding block's loop (a nested exec's write may come from a
        loop that ends before the run does)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if held.loop is running:
            work(held)
        elif not held.ended:
            held.loop.call_soon_threadsafe(work, held)

    async def _let_go(self, run_id: str, held: _Held) -> None:
        """The end of the block: stop renewing, and free the lease unless a write freed it."""
        held.ended = True
        self._held.pop(run_id, None)
        _stop_renewing(held)
        if held.leased:
            await self._leases.free(held.name, held.owner)


def _stop_renewing(held: _Held) -> None:
    if held.stop_renewing is not None:
        held.stop_renewing()
        held.stop_renewing = None


def _new(run_id: str, content: str, options: str) -> StoredRun:
    now = time.time()
    record = RunRecord(
        run_id=run_id, status="running", content=content, options=options, created=now, updated=now
    )
    return StoredRun(record=record, steps=(), decisions=())
