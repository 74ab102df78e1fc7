"""Durable runs in a shared database: holding runs, and the few transactions a run costs.

``SQLiteStore`` and ``DBOSStore`` hold runs alike; what differs is their
database layer, which each gives as a ``RunDatabase`` (its SQL, how a
transaction runs, and its leases). A run is held through a lease row
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

__all__ = ["HeldRuns", "RunDatabase"]

T = TypeVar("T")
Db = TypeVar("Db")


class RunDatabase(Protocol[Db]):
    """What a database layer gives ``HeldRuns``: transactions on connections of type ``Db``,
    the SQL of runs and of leases (each in the caller's transaction), and lease renewal."""

    where: str
    """The store's name, for messages."""

    async def read(self, work: Callable[[Db], T]) -> T:
        """Run ``work`` on a connection (no write)."""
        ...

    async def write(self, work: Callable[[Db], T]) -> T:
        """Run ``work`` in one write transaction: committed, or rolled back."""
        ...

    def open_run(self, db: Db, *, run_id: str, content: str, options: str) -> StoredRun:
        """Create the run (status running) or mark the stored one running; return it as it was."""
        ...

    def create_run(self, db: Db, *, run_id: str, content: str, options: str) -> RunRecord:
        """Insert a new run, status running."""
        ...

    def write_steps(
        self,
        db: Db,
        *,
        run_id: str,
        steps: Sequence[Step],
        status: RunStatus | None,
        pending: Sequence[PendingCall],
        error: str | None,
    ) -> None:
        """Write steps and, with ``status``, the run's new status."""
        ...

    def write_decisions(self, db: Db, *, run_id: str, decisions: Sequence[Decision]) -> None:
        """Write decisions (one per path; a later one replaces it)."""
        ...

    def load_run(self, db: Db, *, run_id: str) -> StoredRun | None:
        """Everything stored of ``run_id``, or ``None``."""
        ...

    def list_runs(self, db: Db) -> tuple[RunRecord, ...]:
        """Every run's record, oldest first."""
        ...

    def claim(self, db: Db, name: str, owner: str) -> float:
        """One attempt to take the lease ``name``: 0 when taken, else the seconds to wait."""
        ...

    def holds(self, db: Db, name: str, owner: str) -> bool:
        """Whether ``owner`` holds the lease ``name``."""
        ...

    def free(self, db: Db, name: str, owner: str) -> bool:
        """Free the lease ``name`` if ``owner`` holds it; whether it did."""
        ...

    def renew(self, name: str, owner: str) -> Callable[[], object]:
        """Renew a claimed lease from the running loop; returns what stops the renewals."""
        ...

    async def release(self, name: str, owner: str) -> None:
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
    """The ``RunStore`` half of a store on ``database``."""

    def __init__(self, database: RunDatabase[Db], turns: Turns) -> None:
        self._db = database
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
        db = self._db

        def write(connection: Any) -> None:
            if held is not None and fence:
                done = (db.free if free else db.holds)(connection, held.name, held.owner)
                if not done:
                    raise OpenProgramError(
                        f"{db.where}: this process no longer holds run {run_id!r} (it stalled "
                        "longer than lease_s and another process took the run); nothing was "
                        "written"
                    )
            if create is not None:
                db.create_run(connection, run_id=run_id, content=create[0], options=create[1])
            if claim and held is not None and db.claim(connection, held.name, held.owner) > 0:
                raise OpenProgramError(f"{db.where}: the new run {run_id!r} is held by another")
            db.write_steps(
                connection, run_id=run_id, steps=steps, status=status, pending=pending, error=error
            )

        await db.write(write)
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
        await self._db.write(partial(self._db.write_decisions, run_id=run_id, decisions=decisions))

    async def load_run(self, run_id: str) -> StoredRun | None:
        """See ``RunStore.load_run``."""
        return await self._db.read(partial(self._db.load_run, run_id=run_id))

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """See ``RunStore.list_runs``."""
        return await self._db.read(self._db.list_runs)

    async def _take(self, held: _Held, run_id: str, content: str, options: str) -> StoredRun:
        """Take a stored run's lease (waiting for it), opening the run in the same transaction."""
        opened: list[StoredRun] = []

        def attempt(connection: Any) -> float:
            left = self._db.claim(connection, held.name, held.owner)
            if left == 0:
                opened.append(
                    self._db.open_run(connection, run_id=run_id, content=content, options=options)
                )
            return left

        await take_waiting(partial(self._db.write, attempt))
        held.leased = True
        self._start_renewing(held)
        return opened[-1]

    def _start_renewing(self, held: _Held) -> None:
        if held.leased and not held.ended and held.stop_renewing is None:
            held.stop_renewing = self._db.renew(held.name, held.owner)

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
            await self._db.release(held.name, held.owner)


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
