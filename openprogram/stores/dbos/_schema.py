"""A ``DBOSStore``'s tables, beside DBOS's own, and the migrations that keep them current.

The tables live in the database of the store's URL (SQLite's file, or the
PostgreSQL database whose ``dbos`` schema holds DBOS's tables), named
``openprogram_*`` so they never meet DBOS's. ``openprogram_dbos_schema`` holds
one row: the number of migrations applied. Opening a store applies the
missing ones, in order, in one transaction (DDL is transactional in both
databases); processes opening an old database at once queue on a lock
(SQLite's write lock; a transaction-scoped advisory lock on PostgreSQL), so
one migrates and the others find it done. A database
from a newer openprogram is refused, never guessed at.

Migration 1: conversations (one row per message, its JSON as
``encode_message`` writes it) and leases (who holds a conversation's turn,
until when, by the database's clock).

Migration 2: durable runs, as ``SQLiteStore`` keeps them: one row per run
(status, the root exec's content and options, pending calls as JSON), one per
batch of journaled steps (a JSON array), one per decision about a paused call.
Later kinds of state add theirs as
migration 2, 3, ...: append to ``MIGRATIONS``; never edit one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from openprogram.exceptions import ConfigurationError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

VERSION_TABLE = "openprogram_dbos_schema"

_LOCK_KEY = 0x6F70_6462_6F73  # "opdbos": the advisory lock migrations of this schema take

Migration = Callable[[Connection], None]


def _conversations(db: Connection) -> None:
    db.exec_driver_sql(
        """CREATE TABLE openprogram_messages (
            conversation_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (conversation_id, position)
        )"""
    )
    db.exec_driver_sql(
        """CREATE TABLE openprogram_leases (
            name TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )"""
    )


def _runs(db: Connection) -> None:
    db.exec_driver_sql(
        """CREATE TABLE openprogram_runs (
            run_id TEXT PRIMARY KEY,
            status TEXT NOT NULL,
            content TEXT NOT NULL,
            options TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            updated DOUBLE PRECISION NOT NULL,
            pending TEXT NOT NULL,
            error TEXT
        )"""
    )
    db.exec_driver_sql(
        """CREATE TABLE openprogram_steps (
            run_id TEXT NOT NULL,
            batch INTEGER NOT NULL,
            steps TEXT NOT NULL,
            PRIMARY KEY (run_id, batch)
        )"""
    )
    db.exec_driver_sql(
        """CREATE TABLE openprogram_decisions (
            run_id TEXT NOT NULL,
            path TEXT NOT NULL,
            call_id TEXT NOT NULL,
            approved INTEGER NOT NULL,
            reason TEXT,
            arguments_hash TEXT NOT NULL,
            PRIMARY KEY (run_id, path)
        )"""
    )


MIGRATIONS: tuple[Migration, ...] = (_conversations, _runs)
"""Every migration, oldest first; ``MIGRATIONS[n]`` takes a database from version n to n + 1."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version this openprogram writes: the number of migrations."""


def migrate(db: Connection, where: str) -> None:
    """Apply the migrations the database lacks, in the transaction of ``db``.

    A database already at this version is only read. Otherwise the migration
    lock is taken (SQLite's transaction already holds the write lock) and the
    version read again, so only one of several processes migrates.

    Raises:
        ConfigurationError: The database was written by a newer openprogram.
    """
    if _version(db, where) == SCHEMA_VERSION:
        return
    if db.dialect.name == "postgresql":  # held until the transaction ends
        db.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    db.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} "
        "(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)"
    )
    for migration in MIGRATIONS[_version(db, where) :]:
        migration(db)
    db.execute(
        sa.text(
            f"INSERT INTO {VERSION_TABLE} (id, version) VALUES (1, :version) "
            "ON CONFLICT (id) DO UPDATE SET version = excluded.version"
        ),
        {"version": SCHEMA_VERSION},
    )


def _version(db: Connection, where: str) -> int:
    """The database's schema version (0: none yet)."""
    if not sa.inspect(db).has_table(VERSION_TABLE):
        return 0
    row = db.exec_driver_sql(f"SELECT version FROM {VERSION_TABLE} WHERE id = 1").first()
    version = int(row[0]) if row is not None else 0
    if version > SCHEMA_VERSION:
        raise ConfigurationError(
            f"{where} has store schema version {version}, newer than this openprogram "
            f"knows ({SCHEMA_VERSION}): upgrade openprogram to use it"
        )
    return version
