"""``Journal``: one run tree's journal while it runs — what was recorded, and writing what is new.

The root exec of a durable run opens the run in its store (one read of
everything recorded) and makes a ``Journal``; every exec nested in the tree
finds it through the frame. Lookups are dictionary reads. New steps are
written behind: ``add`` queues a step (``reply`` and ``result`` queue a model
reply or a call's result as they are, to be encoded when the batch is
written: a batch encoded in one go costs about half of the same steps encoded
one at a time between the loop's other work), and queued steps are written together
in one transaction when something must be durable (``write_now``: before a
``side_effect`` body, or a body that may read its idempotency key, starts),
when the run ends (``close``), and otherwise at most ``FLUSH_S`` after the
first of them was queued (a timer on the root exec's event loop, which waits
while the tree works). Batches are written in the order their steps were
queued (one at a time, first come first served, across threads and loops),
and a step is queued only after everything it depends on (a call's result
after the reply that made it, a nested exec's steps after the call that
started it), so the journal in the store is always a consistent prefix: a
crash loses the newest steps, never a step some stored step depends on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Sequence

from openprogram._pause import PendingCall
from openprogram.durable._batch import Queued, Reply, Result, StepBatch, frozen
from openprogram.durable._codec import reply_step
from openprogram.durable._fingerprint import Fingerprint
from openprogram.exceptions import OpenProgramError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.stores import Decision, RunStatus, RunStore, Step, StepKind, StoredRun
from openprogram.stores._turns import Turns

__all__ = ["FLUSH_S", "Journal"]

FLUSH_S = 0.02
"""Longest a queued step waits before it is written (bench/bench_durable.py measured it)."""

logger = logging.getLogger("openprogram.durable")

_WRITER = "journal"


class Journal:
    """The journal of one running run tree (see the module docstring).

    Args:
        store: Where the run lives.
        stored: What the store holds of it (read when the root exec opened it).
        root: The root exec's position in the frame (``()`` at top level).
    """

    def __init__(self, store: RunStore, stored: StoredRun, root: tuple[int, ...] = ()) -> None:
        self.run_id = stored.record.run_id
        """The run's id."""
        self.root = root
        """The root exec's position in the frame (keys are relative to it: the root is ``""``)."""
        self._store = store
        self._steps = {(step.key, step.kind): step for step in stored.steps}
        self._decisions = {d.path: d for d in stored.decisions}
        self._was_pending = {p.path for p in stored.record.pending}
        self.gated = bool(
            self._decisions or self._was_pending or any(s.kind == "paused" for s in stored.steps)
        )
        """Whether anything recorded stands in for the approval hook (decisions, calls that
        waited or paused): else every call is asked about as in a run without a journal."""
        self._queue: list[Queued] = []
        self._lock = threading.Lock()
        self._order = Turns()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._armed = False
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    # -- what was recorded -------------------------------------------------------------------

    @property
    def recorded(self) -> bool:
        """Whether anything was recorded before this attempt (else every lookup misses)."""
        return bool(self._steps)

    def step(self, key: str, kind: StepKind) -> Step | None:
        """The recorded step of ``kind`` at ``key``, if any."""
        return self._steps.get((key, kind))

    def decision(self, key: str) -> Decision | None:
        """The decision recorded for the paused call at ``key``, if any."""
        return self._decisions.get(key)

    def was_pending(self, key: str) -> bool:
        """Whether the call at ``key`` was one the run waited on when it last paused."""
        return key in self._was_pending

    # -- writing -----------------------------------------------------------------------------

    def reply(
        self, key: str, fingerprint: Fingerprint, reply: AssistantMessage, head: bool
    ) -> None:
        """Queue the model reply at ``key`` (``head``: its request's head changed), to be
        encoded when it is written (``durable.reply_step``)."""
        if frozen(reply):
            self.add(Reply((key, fingerprint, reply, head)))
        else:  # encoded now, as the model sent it (see durable/_batch.py)
            self.add(reply_step(key, fingerprint, reply, head))

    def result(
        self,
        key: str,
        call: ToolCall,
        canonical: str,
        message: ToolResultMessage,
        failure: str | None,
    ) -> None:
        """Queue the result of the call at ``key`` (``canonical``: its arguments as JSON with
        sorted keys; ``failure``: its kind, for an error), encoded when it is written."""
        self.add(Result((key, call.name, canonical, message, failure)))

    def add(self, step: Queued) -> None:
        """Queue ``step``; it is written within ``FLUSH_S`` (or sooner, with other steps)."""
        with self._lock:
            if self._closed:
                return  # a task the run left behind when it ended: its steps are not the run's
            self._queue.append(step)
            if self._armed:
                return
            self._armed = True
        try:
            if threading.get_ident() == self._thread:
                self._loop.call_later(FLUSH_S, self._due)
            else:
                self._loop.call_soon_threadsafe(self._loop.call_later, FLUSH_S, self._due)
        except RuntimeError:  # the root exec's loop is closed: the run has ended
            pass

    async def write_now(self, steps: Iterable[Step] = ()) -> None:
        """Queue ``steps`` and write everything queued before this returns.

        Raises:
            OpenProgramError: The store could not be written.
        """
        with self._lock:
            self._queue.extend(steps)
        await self._write()

    async def close(
        self, status: RunStatus, pending: Sequence[PendingCall] = (), error: str | None = None
    ) -> None:
        """Write what is queued and the run's final status, in one transaction; queue no more.

        Raises:
            OpenProgramError: The store could not be written.
        """
        async with self._order.hold(_WRITER):
            with self._lock:
                batch, self._queue, self._closed = self._queue, [], True
            await self._store.record_steps(
                self.run_id, StepBatch(batch), status=status, pending=pending, error=error
            )

    def _due(self) -> None:
        """The timer: write what is queued, in a task on the root exec's loop."""
        with self._lock:
            self._armed = False
            if self._closed or not self._queue:
                return
        task = self._loop.create_task(self._write_quietly())
        self._tasks.add(task)  # a strong reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _write_quietly(self) -> None:
        try:
            await self._write()
        except OpenProgramError as exc:  # its steps stay queued: the next write tries again
            logger.warning("could not write the journal of run %r: %s", self.run_id, exc)

    async def _write(self) -> None:
        async with self._order.hold(_WRITER):  # batches are written in the order they were taken
            with self._lock:
                batch, self._queue = self._queue, []
            if not batch:
                return
            try:
                await self._store.record_steps(self.run_id, StepBatch(batch))
            except Exception as exc:
                with self._lock:  # kept, in order, for the next write to try again
                    self._queue[:0] = batch
                raise _unwritten(self.run_id, exc) from exc


def _unwritten(run_id: str, exc: BaseException) -> OpenProgramError:
    return OpenProgramError(
        f"the journal of run {run_id!r} could not be written to its store: "
        f"{type(exc).__name__}: {exc}"
    )
