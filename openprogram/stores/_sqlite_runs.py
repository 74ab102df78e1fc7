"""The SQL of durable runs in a ``SQLiteStore`` file: each function one short piece of work.

``SQLiteStore`` runs them through its ``Database`` (the write ones inside one
``BEGIN IMMEDIATE`` transaction). The statements are constant strings, so
``sqlite3`` prepares each once per connection and reuses it (its statement
cache). Pending calls travel as one JSON array per run.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from openprogram._pause import PendingCall
from openprogram.exceptions import OpenProgramError
from openprogram.stores._runs import Decision, RunRecord, RunStatus, Step, StoredRun

__all__ = ["list_runs", "load_run", "open_run", "write_decisions", "write_steps"]

_COLUMNS = "status, content, options, created, updated, pending, error"
_RUN = f"SELECT {_COLUMNS} FROM openprogram_runs"
_STEPS = "SELECT key, kind, fingerprint, data FROM openprogram_steps WHERE run_id = ?"
_DECISIONS = (
    "SELECT path, call_id, approved, reason, arguments_hash FROM openprogram_decisions "
    "WHERE run_id = ?"
)
_PUT_STEP = (
    "INSERT OR REPLACE INTO openprogram_steps (run_id, key, kind, fingerprint, data) "
    "VALUES (?, ?, ?, ?, ?)"
)


def open_run(db: sqlite3.Connection, *, run_id: str, content: str, options: str) -> StoredRun:
    """Create the run (status running) or mark the stored one running; return it as it was."""
    now = time.time()
    stored = load_run(db, run_id=run_id)
    if stored is None:
        db.execute(
            "INSERT INTO openprogram_runs "
            "(run_id, status, content, options, created, updated, pending, error) "
            "VALUES (?, 'running', ?, ?, ?, ?, '[]', NULL)",
            (run_id, content, options, now, now),
        )
        record = RunRecord(
            run_id=run_id,
            status="running",
            content=content,
            options=options,
            created=now,
            updated=now,
        )
        return StoredRun(record=record, steps=(), decisions=())
    db.execute("UPDATE openprogram_runs SET status = 'running' WHERE run_id = ?", (run_id,))
    return stored


def write_steps(
    db: sqlite3.Connection,
    *,
    run_id: str,
    steps: Sequence[Step],
    status: RunStatus | None,
    pending: Sequence[PendingCall],
    error: str | None,
) -> None:
    """Write steps and, with ``status``, the run's new status (one transaction: the caller's)."""
    if len(steps) == 1:
        step = steps[0]
        db.execute(_PUT_STEP, (run_id, step.key, step.kind, step.fingerprint, step.data))
    elif steps:
        db.executemany(_PUT_STEP, [(run_id, s.key, s.kind, s.fingerprint, s.data) for s in steps])
    if status is None:
        return
    done = db.execute(
        "UPDATE openprogram_runs SET status = ?, pending = ?, error = ?, updated = ? "
        "WHERE run_id = ?",
        (status, _pending_json(pending), error, time.time(), run_id),
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
    steps = tuple(
        Step(key=key, kind=kind, fingerprint=fingerprint, data=data)
        for key, kind, fingerprint, data in db.execute(_STEPS, (run_id,))
    )
    decisions = tuple(
        Decision(
            path=path,
            call_id=call_id,
            approved=bool(approved),
            reason=reason,
            arguments_hash=arguments_hash,
        )
        for path, call_id, approved, reason, arguments_hash in db.execute(_DECISIONS, (run_id,))
    )
    return StoredRun(record=_record(run_id, row), steps=steps, decisions=decisions)


def list_runs(db: sqlite3.Connection) -> tuple[RunRecord, ...]:
    """Every run's record, oldest first."""
    rows = db.execute(
        f"SELECT run_id, {_COLUMNS} FROM openprogram_runs ORDER BY created, run_id"
    ).fetchall()
    return tuple(_record(row[0], row[1:]) for row in rows)


def _record(run_id: str, row: Sequence[Any]) -> RunRecord:
    status, content, options, created, updated, pending, error = row
    return RunRecord(
        run_id=run_id,
        status=status,
        content=content,
        options=options,
        created=created,
        updated=updated,
        pending=tuple(
            PendingCall(
                call_id=p["call_id"],
                path=p["path"],
                tool_name=p["tool_name"],
                arguments=p["arguments"],
            )
            for p in json.loads(pending)
        ),
        error=error,
    )


def _pending_json(pending: Sequence[PendingCall]) -> str:
    if not pending:
        return "[]"
    return json.dumps(
        [
            {
                "call_id": p.call_id,
                "path": p.path,
                "tool_name": p.tool_name,
                "arguments": dict(p.arguments),
            }
            for p in pending
        ],
        ensure_ascii=False,
    )
