"""What a store shared by threads and processes does alike on every database.

``SQLiteStore`` and ``DBOSStore`` both hold a conversation for one send
first in this process (``Turns``), then across processes through a lease
row (their own ``Leases``), keep durable runs alike (``HeldRuns``, over their
own database layer), and both close at the end of a ``with`` block.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol, Self

from openprogram._pause import PendingCall
from openprogram.stores._held_runs import HeldRuns
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun
from openprogram.stores._turns import Turns

__all__ = ["SharedStore"]


class _Leases(Protocol):
    def hold(self, name: str) -> AbstractAsyncContextManager[Any]: ...


class SharedStore:
    """The ``with`` block, the conversation turns and the durable runs of a store with
    ``_turns``, ``_leases`` and ``_runs``."""

    _turns: Turns
    _leases: _Leases
    _runs: HeldRuns[Any]

    def close(self) -> None:
        """Release what the store holds (each store says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def lock_conversation(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``conversation_id`` for one send (see ``Store``): first in this process,
        then across processes through its lease."""
        return self._held(conversation_id)

    @contextlib.asynccontextmanager
    async def _held(self, conversation_id: str) -> AsyncIterator[None]:
        async with (
            self._turns.hold(conversation_id),
            self._leases.hold(f"conversation:{conversation_id}"),
        ):
            yield

    # -- durable runs (``RunStore``; openprogram.stores._held_runs) -----------------------------

    def open_run(
        self, run_id: str, *, content: str, options: str, fresh: bool = False
    ) -> AbstractAsyncContextManager[StoredRun]:
        """Hold ``run_id`` (first in this process, then across processes through its lease),
        create it or mark it running, and yield what it holds (see ``RunStore``)."""
        return self._runs.open_run(run_id, content, options, fresh)

    async def record_steps(
        self,
        run_id: str,
        steps: Sequence[Step],
        *,
        status: RunStatus | None = None,
        pending: Sequence[PendingCall] = (),
        error: str | None = None,
    ) -> None:
        """Write steps and, with ``status``, end the run: one transaction (see ``RunStore``)."""
        await self._runs.record_steps(run_id, steps, status, pending, error)

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """Write decisions about paused calls, in one transaction (see ``RunStore``)."""
        await self._runs.record_decisions(run_id, decisions)

    async def load_run(self, run_id: str) -> StoredRun | None:
        """Everything stored of ``run_id`` (``None``: no such run)."""
        return await self._runs.load_run(run_id)

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """Every run's record, oldest first."""
        return await self._runs.list_runs()
