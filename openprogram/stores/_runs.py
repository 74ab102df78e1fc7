"""``RunStore``: what a store does for durable runs, and the values it keeps.

A durable run (docs/durable.md) is a record (``RunRecord``: status, the root
exec's content and options, the calls a paused run waits on), its journal
(``Step``: a model reply, a tool result, or a mark, each at its position in
the run tree) and the decisions a person made about paused calls
(``Decision``). The runtime keeps all the logic (fingerprints, divergence,
effects, pauses); a store only keeps these values and gives a run to one
holder at a time:

- ``open_run`` holds a run for a block (one holder at a time, across
  processes; a dead holder's hold lapses), creates it or marks it running, and
  yields everything it holds, read once;
- ``record_steps`` writes steps (each at most once per key and kind: a
  second write replaces the first), and may end the run with a status, in one
  transaction;
- ``record_decisions``, ``load_run`` and ``list_runs`` do what they say.

Values cross as text (``Step.data``, ``RunRecord.content`` and ``options``
are JSON), so a store needs no knowledge of messages or options.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from openprogram._pause import PendingCall

__all__ = [
    "Decision",
    "RunQueue",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "Step",
    "StepKind",
    "StoredRun",
]

RunStatus: TypeAlias = Literal["running", "paused", "finished", "failed"]
"""Where a run stands: running (or died while running), paused for a person, done, raised."""

StepKind: TypeAlias = Literal["reply", "result", "started", "paused"]
"""A model reply, a call's result, or a mark: a ``side_effect`` call's body started, or a
call's body paused (its outcome is known: it ran up to a pause)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One journaled step of a run."""

    key: str
    """Its position in the run tree as text, e.g. ``"1.0/0/2"`` (a reply) or ``"1.0"`` (a call)."""
    kind: StepKind
    """What it is."""
    fingerprint: str
    """A reply: the hash of the request it answered; a result: of the call (tool and
    arguments); a mark: empty. Hexadecimal digits."""
    data: str
    """What it holds: one JSON value as text (the runtime writes and reads it; a store may
    keep it in any form that reads back as an equal JSON value)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A person's decision about a paused call, bound to the arguments it was shown."""

    path: str
    """The call's position in the run tree."""
    call_id: str
    """The model's ``ToolCall.id``."""
    approved: bool
    """Run it (once), or not."""
    reason: str | None
    """Why it was denied (the model sees it); ``None`` when approved."""
    arguments_hash: str
    """Hash of the arguments it was shown: a call with other arguments is not decided."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """A durable run: what it is and where it stands."""

    run_id: str
    """The run's id."""
    status: RunStatus
    """Where it stands."""
    content: str
    """The root exec's content (the user message, as ``encode_message`` JSON)."""
    options: str
    """The root exec's options, as JSON (what ``resume`` runs it again with)."""
    created: float
    """When it was first opened (``time.time()``)."""
    updated: float
    """When its status last changed."""
    pending: tuple[PendingCall, ...] = ()
    """The calls it waits on, when it last paused."""
    error: str | None = None
    """What it raised, when it failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """Everything a store holds of one run."""

    record: RunRecord
    """The run record."""
    steps: tuple[Step, ...]
    """Its journal, in no particular order (keys say where each step belongs)."""
    decisions: tuple[Decision, ...]
    """The decisions recorded for its paused calls."""


@runtime_checkable
class RunStore(Protocol):
    """What a store does for durable runs (``MemoryStore``, ``SQLiteStore`` and ``DBOSStore``
    do it)."""

    def open_run(
        self, run_id: str, *, content: str, options: str, fresh: bool = False
    ) -> AbstractAsyncContextManager[StoredRun]:
        """Hold ``run_id`` for the block, then create it or mark it running; yield what it holds.

        One holder at a time, across processes: another holder waits until the
        block ends, or until the holder dies (its hold then lapses). A new run
        is created with ``content`` and ``options``; an existing one keeps its
        own. The yielded record is the run as it was before this open.
        ``fresh``: the runtime made ``run_id`` up just now, so nothing is recorded
        under it and nobody else knows it; the store may then create the run
        (and hold it) with its first ``record_steps`` rather than now.
        """
        ...

    async def record_steps(
        self,
        run_id: str,
        steps: Sequence[Step],
        *,
        status: RunStatus | None = None,
        pending: Sequence[PendingCall] = (),
        error: str | None = None,
    ) -> None:
        """Write ``steps`` (a step of a key and kind already stored replaces it) and, when
        ``status`` is given, the run's new status, pending calls and error: one transaction."""
        ...

    async def record_decisions(self, run_id: str, decisions: Sequence[Decision]) -> None:
        """Write decisions about paused calls (one per path; a later one replaces it)."""
        ...

    async def load_run(self, run_id: str) -> StoredRun | None:
        """Everything stored of ``run_id``, or ``None`` when there is no such run."""
        ...

    async def list_runs(self) -> tuple[RunRecord, ...]:
        """Every run's record, oldest first."""
        ...


@runtime_checkable
class RunQueue(Protocol):
    """A ``RunStore`` whose runs worker processes take from a queue (``DBOSStore``):
    ``runtime.submit`` writes a run's record, then enqueues it here."""

    async def enqueue_run(self, run_id: str, workflow_id: str) -> None:
        """Queue an execution of ``run_id`` named ``workflow_id`` (unique per execution: the
        first is ``run_id``, a resume ``{run_id}:resume:{n}``); a second enqueue of one
        name attaches to the first."""
        ...
