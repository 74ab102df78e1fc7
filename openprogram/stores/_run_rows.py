"""The rows of durable runs, as both SQL stores keep them: written and read back alike.

``SQLiteStore`` (``stores/_run_sql.py``) and ``DBOSStore``
(``stores/dbos/_run_sql.py``) hold the same tables and differ only in how
they speak to the database. What a row holds is decided here, once: the steps
one transaction writes are one row, a JSON array of ``[key, kind,
fingerprint, data]`` (each step's data, JSON itself, written in as it is);
reading the batches back in order, a later batch's step of a key and kind
replaces an earlier one; a run's pending calls are one JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from openprogram._pause import PendingCall
from openprogram.stores._runs import Decision, RunRecord, Step

__all__ = ["RUN_COLUMNS", "decisions_of", "latest_steps", "pending_json", "record", "steps_row"]


RUN_COLUMNS = "status, content, options, created, updated, pending, error"
"""The columns of a run row that ``record`` reads, in its order (after the run id)."""


def steps_row(steps: Sequence[Step]) -> str:
    """The row of one batch of steps (the journal's batches write it themselves, at once)."""
    row = getattr(steps, "row", None)  # a journal's batch (durable.StepBatch)
    if row is not None:
        return row()  # type: ignore[no-any-return]
    # Keys, kinds and fingerprints are plain ASCII, data is JSON: no escaping needed.
    batch = ",".join(f'["{s.key}","{s.kind}","{s.fingerprint}",{s.data}]' for s in steps)
    return f"[{batch}]"


def latest_steps(batches: Iterable[str]) -> tuple[Step, ...]:
    """The steps of a run's batch rows, read in order: the latest of each key and kind."""
    latest: dict[tuple[str, str], Step] = {}
    for batch in batches:
        for key, kind, fingerprint, data in json.loads(batch):
            text = _to_json(data)
            latest[key, kind] = Step(key=key, kind=kind, fingerprint=fingerprint, data=text)
    return tuple(latest.values())


def decisions_of(rows: Iterable[Sequence[Any]]) -> tuple[Decision, ...]:
    """The decisions of rows ``(path, call_id, approved, reason, arguments_hash)``."""
    return tuple(
        Decision(
            path=path,
            call_id=call_id,
            approved=bool(approved),
            reason=reason,
            arguments_hash=arguments_hash,
        )
        for path, call_id, approved, reason, arguments_hash in rows
    )


def record(run_id: str, row: Sequence[Any]) -> RunRecord:
    """The record of a run row's ``RUN_COLUMNS``."""
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


def pending_json(pending: Sequence[PendingCall]) -> str:
    """The pending calls of a run row."""
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


def _to_json(value: Any) -> str:
    import pydantic_core  # noqa: PLC0415 - deferred for import cost (loaded by a tool's first call)

    try:
        return pydantic_core.to_json(value).decode()  # a few times faster than json.dumps
    except pydantic_core.PydanticSerializationError:  # a lone surrogate: escaped, as ASCII
        return json.dumps(value)
