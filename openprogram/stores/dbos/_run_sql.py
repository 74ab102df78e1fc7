"""The SQL of durable runs in a ``DBOSStore``'s database: ``SQLiteStore``'s rows, spoken to
SQLite or PostgreSQL through SQLAlchemy.

The rows are ``SQLiteStore``'s (``openprogram.stores._run_rows`` says what
each holds): a run row, one row per batch of steps (numbered per run), one
row per decision. Only the run's holder
writes its steps, so numbering a batch by ``MAX(batch) + 1`` never races; a
second writer would hit the primary key and fail loudly. ``DBOSStore``'s
``HeldRuns`` (``openprogram.stores._held_runs``) runs them, each in a
transaction of its ``StoreDatabase``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.stores._run_rows import (
    RUN_COLUMNS,
    decisions_of,
    latest_steps,
    pending_json,
    record,
    steps_row,
)
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun

__all__ = [
    "create_run",
    "list_runs",
    "load_run",
    "open_run",
    "write_decisions",
    "write_new_run",
    "write_steps",
]

_RUN = sa.text(f"SELECT {RUN_COLUMNS} FROM openprogram_runs WHERE run_id = :run_id")
_LIST = sa.text(f"SELECT run_id, {RUN_COLUMNS} FROM openprogram_runs ORDER BY created, run_id")
_STEPS = sa.text("SELECT steps FROM openprogram_steps WHERE run_id = :run_id ORDER BY batch")
_DECISIONS = sa.text(
    "SELECT path, call_id, approved, reason, arguments_hash FROM openprogram_decisions "
    "WHERE run_id = :run_id"
)
_PUT_STEPS = sa.text(
    "INSERT INTO openprogram_steps (run_id, batch, steps) SELECT :run_id, "
    "COALESCE(MAX(batch) + 1, 0), :steps FROM openprogram_steps WHERE run_id = :run_id"
)
_CREATE = sa.text(
    "INSERT INTO openprogram_runs (run_id, status, content, options, created, updated, pending, "
    "error) VALUES (:run_id, :status, :content, :options, :now, :now, :pending, :error)"
)
_FIRST_STEPS = sa.text(
    "INSERT INTO openprogram_steps (run_id, batch, steps) VALUES (:run_id, 0, :steps)"
)
_RUNNING = sa.text("UPDATE openprogram_runs SET status = 'running' WHERE run_id = :run_id")
_STATUS = sa.text(
    "UPDATE openprogram_runs SET status = :status, pending = :pending, error = :error, "
    "updated = :now WHERE run_id = :run_id"
)
_DECIDE = sa.text(
    "INSERT INTO openprogram_decisions (run_id, path, call_id, approved, reason, arguments_hash) "
    "VALUES (:run_id, :path, :call_id, :approved, :reason, :arguments_hash) "
    "ON CONFLICT (run_id, path) DO UPDATE SET call_id = excluded.call_id, "
    "approved = excluded.approved, reason = excluded.reason, "
    "arguments_hash = excluded.arguments_hash"
)


def open_run(db: Connection, *, run_id: str, content: str, options: str) -> StoredRun:
    """Create the run (status running) or mark the stored one running; return it as it was."""
    stored = load_run(db, run_id=run_id)
    if stored is None:
        record = create_run(db, run_id=run_id, content=content, options=options)
        return StoredRun(record=record, steps=(), decisions=())
    db.execute(_RUNNING, {"run_id": run_id})
    return stored


def create_run(db: Connection, *, run_id: str, content: str, options: str) -> RunRecord:
    """Insert a new run, status running."""
    now = time.time()
    values = {"status": "running", "pending": "[]", "error": None}
    db.execute(
        _CREATE, {"run_id": run_id, "content": content, "options": options, "now": now, **values}
    )
    return RunRecord(
        run_id=run_id, status="running", content=content, options=options, created=now, updated=now
    )


def write_new_run(
    db: Connection,
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
    values = {"status": status or "running", "pending": pending_json(pending), "error": error}
    db.execute(
        _CREATE,
        {"run_id": run_id, "content": content, "options": options, "now": time.time(), **values},
    )
    if steps:
        db.execute(_FIRST_STEPS, {"run_id": run_id, "steps": steps_row(steps)})


def write_steps(
    db: Connection,
    *,
    run_id: str,
    steps: Sequence[Step],
    status: RunStatus | None,
    pending: Sequence[PendingCall],
    error: str | None,
) -> None:
    """Write steps and, with ``status``, the run's new status: one transaction, the caller's."""
    if steps:
        db.execute(_PUT_STEPS, {"run_id": run_id, "steps": steps_row(steps)})
    if status is None:
        return
    values = {"status": status, "pending": pending_json(pending), "error": error}
    done = db.execute(_STATUS, {**values, "now": time.time(), "run_id": run_id})
    if done.rowcount != 1:
        raise OpenProgramError(f"DBOSStore: no run {run_id!r} to set {status!r}")


def write_decisions(db: Connection, *, run_id: str, decisions: Sequence[Decision]) -> None:
    """Write decisions (one per path; a later one replaces it)."""
    if not decisions:
        return
    db.execute(
        _DECIDE,
        [
            {
                "run_id": run_id,
                "path": d.path,
                "call_id": d.call_id,
                "approved": int(d.approved),
                "reason": d.reason,
                "arguments_hash": d.arguments_hash,
            }
            for d in decisions
        ],
    )


def load_run(db: Connection, *, run_id: str) -> StoredRun | None:
    """Everything stored of ``run_id`` (three queries), or ``None``."""
    row = db.execute(_RUN, {"run_id": run_id}).first()
    if row is None:
        return None
    steps = latest_steps(batch for (batch,) in db.execute(_STEPS, {"run_id": run_id}))
    decided = decisions_of(db.execute(_DECISIONS, {"run_id": run_id}))
    return StoredRun(record=record(run_id, tuple(row)), steps=steps, decisions=decided)


def list_runs(db: Connection) -> tuple[RunRecord, ...]:
    """Every run's record, oldest first."""
    return tuple(record(row[0], tuple(row[1:])) for row in db.execute(_LIST))
