"""The SQL of durable runs in a ``SQLiteStore`` file: each function one short piece of work.

``SQLiteStore``'s ``HeldRuns`` (``openprogram.stores._held_runs``) runs them
through its ``Database`` (the write ones inside one ``BEGIN IMMEDIATE``
transaction). The statements are constant strings, so
``sqlite3`` prepares each once per connection and reuses it (its statement
cache). What each row holds (``stores/_run_rows.py``) is shared with
``DBOSStore``; batches of steps are numbered per run (``batch``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

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

_RUN = f"SELECT {RUN_COLUMNS} FROM openprogram_runs"
_STEPS = "SELECT steps FROM openprogram_steps WHERE run_id = ? ORDER BY batch"
_DECISIONS = (
    "SELECT path, call_id, approved, reason, arguments_hash FROM openprogram_decisions "
    "WHERE run_id = ?"
)
_CREATE = (
    "INSERT INTO openprogram_runs (run_id, status, content, options, created, updated, pending, "
    "error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_FIRST_STEPS = "INSERT INTO openprogram_steps (run_id, batch, steps) VALUES (?, 0, ?)"
_PUT_STEPS = (
    "INSERT INTO openprogram_steps (run_id, batch, steps) SELECT ?, "
    "COALESCE(MAX(batch) + 1, 0), ? FROM openprogram_steps WHERE run_id = ?"
)


def open_run(db: sqlite3.Connection, *, run_id: str, content: str, options: str) -> StoredRun:
    """Create the run (status running) or mark the stored one running; return it as it was."""
    stored = load_run(db, run_id=run_id)
    if stored is None:
        record = create_run(db, run_id=run_id, content=content, options=options)
        return StoredRun(record=record, steps=(), decisions=())
    db.execute("UPDATE openprogram_runs SET status = 'running' WHERE run_id = ?", (run_id,))
    return stored


def create_run(db: sqlite3.Connection, *, run_id: str, content: str, options: str) -> RunRecord:
    """Insert a new run, status running."""
    now = time.time()
    db.execute(_CREATE, (run_id, "running", content, options, now, now, "[]", None))
    return RunRecord(
        run_id=run_id, status="running", content=content, options=options, created=now, updated=now
    )


def write_new_run(
    db: sqlite3.Connection,
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
    now = time.time()
    row = (run_id, status or "running", content, options, now, now, pending_json(pending), error)
    db.execute(_CREATE, row)
    if steps:
        db.execute(_FIRST_STEPS, (run_id, steps_row(steps)))


def write_steps(
    db: sqlite3.Connection,
    *,
    run_id: str,
    steps: Sequence[Step],
    status: RunStatus | None,
    pending: Sequence[PendingCall],
    error: str | None,
) -> None:
    """Write steps and, with ``status``, the run's new status: one transaction, the caller's."""
    if steps:
        db.execute(_PUT_STEPS, (run_id, steps_row(steps), run_id))
    if status is None:
        return
    done = db.execute(
        "UPDATE openprogram_runs SET status = ?, pending = ?, error = ?, updated = ? "
        "WHERE run_id = ?",
        (status, pending_json(pending), error, time.time(), run_id),
    )
    if done.rowcount != 1:
        raise OpenProgramError(f"SQLiteStore: no run {run_id!r} to set {status!r}")


def write_decisions(db: sqlite3.Connection, *, run_id: str, decisions: Sequence[Decision]) -> None:
    """Write decisions (one per path; a later one replaces it)."""
    db.executemany(
        "INSERT OR REPLACE INTO openprogram_decisions "
        "(run_id, path, call_id, approved, reason, arguments_hash) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (run_id, d.path, d.call_id, int(d.approved), d.reason, d.arguments_hash)
            for d in decisions
        ],
    )


def load_run(db: sqlite3.Connection, *, run_id: str) -> StoredRun | None:
    """Everything stored of ``run_id`` (three queries), or ``None``."""
    row = db.execute(f"{_RUN} WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    steps = latest_steps(batch for (batch,) in db.execute(_STEPS, (run_id,)))
    decided = decisions_of(db.execute(_DECISIONS, (run_id,)))
    return StoredRun(record=record(run_id, row), steps=steps, decisions=decided)


def list_runs(db: sqlite3.Connection) -> tuple[RunRecord, ...]:
    """Every run's record, oldest first."""
    rows = db.execute(
        f"SELECT run_id, {RUN_COLUMNS} FROM openprogram_runs ORDER BY created, run_id"
    ).fetchall()
    return tuple(record(row[0], row[1:]) for row in rows)
