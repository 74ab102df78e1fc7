"""A conversation's rows in a ``DBOSStore``'s database: one row per message, appended."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

__all__ = ["append_rows", "read_rows"]


def read_rows(conversation_id: str, start: int, db: Connection) -> list[tuple[int, str]]:
    """``(position, message JSON)`` of the conversation's rows from ``start`` on."""
    rows = db.execute(
        sa.text(
            "SELECT position, message FROM openprogram_messages "
            "WHERE conversation_id = :id AND position >= :start ORDER BY position"
        ),
        {"id": conversation_id, "start": start},
    )
    return [(int(at), str(text)) for at, text in rows]


def append_rows(conversation_id: str, start: int, texts: list[str], db: Connection) -> int:
    """Insert the rows when ``start`` is the stored length; return the stored length seen."""
    stored = db.execute(
        sa.text(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM openprogram_messages "
            "WHERE conversation_id = :id"
        ),
        {"id": conversation_id},
    ).scalar_one()
    if stored != start or not texts:
        return int(stored)
    # Another append racing this one (read committed on PostgreSQL) inserts the same first
    # position: the primary key refuses one of the two, and the whole transaction with it.
    savepoint = db.begin_nested()
    try:
        db.execute(
            sa.text(
                "INSERT INTO openprogram_messages (conversation_id, position, message) "
                "VALUES (:id, :position, :message)"
            ),
            [
                {"id": conversation_id, "position": start + i, "message": text}
                for i, text in enumerate(texts)
            ],
        )
    except sa.exc.IntegrityError:
        savepoint.rollback()
        return start + 1  # not start: someone else stored a message there first
    savepoint.commit()
    return start
