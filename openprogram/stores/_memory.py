"""``MemoryStore``: conversations and durable runs in this process's memory.

The default place of conversations without a store. As ``Runtime(store=...)``
it journals runs too, for one process: a run survives an exception (run it
again with its ``run_id``) and pauses for a person, never the process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.messages import Message
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun
from openprogram.stores._turns import Turns

__all__ = ["MemoryStore", "conflict"]


class MemoryStore:
    """A ``Store`` in memory: shared by runtimes of one process, gone when it ends.

    Safe from any thread and event loop. ``Runtime()`` without ``store=`` keeps
    its conversations in one of its own.

    Example:
        >>> from openprogram import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> store = MemoryStore()
        >>> first = Runtime(ScriptedProvider(["Hi Ann!"]), store=store)
        >>> first.conversation("c1").send("I am Ann.")
        'Hi Ann!'
        >>> len(Runtime(ScriptedProvider([]), store=store).conversation("c1").messages)
        2
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, list[Message]] = {}
        self._turns = Turns()
        self._runs: dict[str, _Run] = {}

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._conversations)} conversation(s))"

    def lock_conversation(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``conversation_id`` for one send (see ``Store``)."""
        return self._turns.hold(conversation_id)

    async def load_conversation(self, conversation_id: str, start: int = 0) -> tuple[Message, ...]:
        """The messages of ``conversation_id`` from position ``start`` on."""
        with self._lock:
            return tuple(self._conversations.get(conversation_id, ())[start:])

    async def append_conversation(
        self, conversation_id: str, messages: Sequence[Message], *, start: int
    ) -> None:
        """Store ``messages`` after the first ``start`` ones (see ``Store``)."""
        with self._lock:
            stored = self._conversations.setdefault(conversation_id, [])
            if len(stored) != start:
                raise conflict(conversation_id, start, len(stored))
            stored.extend(messages)

    # -- durable runs (``RunStore``) ----------------------------------------------------------

    def open_run(
        self, run_id: str, *, content: str, options: str, fresh: bool = False
    ) -> AbstractAsyncContextManager[StoredRun]:
        """Hold ``run_id`` for the block (in this process), create it or mark it running, and
        yield what it holds (see ``RunStore``; in memory, a fresh run is created at once)."""
        del fresh
        return self._opened(run_id, content, options)

    @contextlib.asynccontextmanager
    async def _opened(self, run_id: str, content: str, options: str) -> AsyncIterator[StoredRun]:
        async with self._turns.hold(f"run:{run_id}"):
            with self._lock:
                run = self._runs.get(run_id)
                if run is None:
                    now = time.time()
                    record = RunRecord(
                        run_id=run_id,
                        status="running",
                        content=content,
                        options=options,
                        created=now,
                        updated=now,
                    )
                    run = self._runs[run_id] = _Run(record)
                stored = run.stored()
                run.record = dataclasses.replace(run.record, status="running")
            yield stored

    async def record_steps(
        self,
        run_id: str,
        steps: Sequence[Step],
        *,
        status: RunStatus | None = None,
        pending: Sequence[PendingCall] = (),
        error: str | None = None,
    ) -> None:
        """Write steps and, with ``status``, end the run (see ``RunStore``)."""
        with self._lock:
            run = self._run(run_id)
            for step in steps:
                run.steps[step.key, step.kind] = step
            if status is not None:
                run.record = dataclasses.replace(
                    run.record,
                    status=status,
                    pending=tuple(pending),
                    error=error,
                    updated=time.time(),
                )

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """Write decisions about paused calls (see ``RunStore``)."""
        with self._lock:
            run = self._run(run_id)
            for decision in decisions:
                run.decisions[decision.path] = decision

    async def load_run(self, run_id: str) -> StoredRun | None:
        """Everything stored of ``run_id`` (``None``: no such run)."""
        with self._lock:
            run = self._runs.get(run_id)
            return run.stored() if run is not None else None

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """Every run's record, oldest first."""
        with self._lock:
            return tuple(sorted((r.record for r in self._runs.values()), key=lambda r: r.created))

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id)
        if run is None:
            raise OpenProgramError(f"MemoryStore: no run {run_id!r}; open it with open_run first")
        return run


class _Run:
    """One run in memory: its record, steps by (key, kind), decisions by path."""

    __slots__ = ("decisions", "record", "steps")

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.steps: dict[tuple[str, str], Step] = {}
        self.decisions: dict[str, Decision] = {}

    def stored(self) -> StoredRun:
        return StoredRun(
            record=self.record,
            steps=tuple(self.steps.values()),
            decisions=tuple(self.decisions.values()),
        )


def conflict(conversation_id: str, start: int, stored: int) -> OpenProgramError:
    """The error of an append that lost a race (``start`` is not the stored length)."""
    return OpenProgramError(
        f"conversation {conversation_id!r} changed while a send ran: it expected {start} "
        f"stored message(s) and found {stored}, so its reply was not saved. Sends take turns "
        "through Store.lock_conversation; this one's turn ran out (its lease expired while "
        "the process stalled). Send it again"
    )
