"""The SQLite store's tables, and the migrations that bring any older file up to date.

``openprogram_schema`` holds one row: the number of migrations applied. Opening
a store applies the missing ones, in order, in one write transaction, so two
processes opening an old file at once migrate it once. A file from a newer
openprogram (more migrations than this one knows) is refused, never guessed at.

Migration 1: conversations (one row per message, its JSON as ``encode_message``
writes it) and leases (who holds a conversation's turn, until when).
Migration 2: durable runs: one row per run (status, the root exec's content
and options, pending calls as JSON), one per batch of journaled steps (the
steps one transaction wrote, as a JSON array: one row costs a third of a row
per step), one per decision about a paused call.
Later kinds of state add their tables as migration 2, 3, ...: append a function
to ``MIGRATIONS``; never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from openprogram.exceptions import ConfigurationError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

Migration = Callable[[sqlite3.Connection], None]


def _conversations(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE openprogram_messages (
            conversation_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (conversation_id, position)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE openprogram_leases (
            name TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            expires_at REAL NOT NULL
        ) WITHOUT ROWID"""
    )


def _runs(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE openprogram_runs (
            run_id TEXT PRIMARY KEY,
            status TEXT NOT NULL,
            content TEXT NOT NULL,
            options TEXT NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            pending TEXT NOT NULL,
            error TEXT
        ) WITHOUT ROWID"""
    )
    # A rowid table: a batch of steps (model replies) may be many kilobytes, too big for
    # a row of a WITHOUT ROWID table; the primary key is its own index.
    db.execute(
        """CREATE TABLE openprogram_steps (
            run_id TEXT NOT NULL,
            batch INTEGER NOT NULL,
            steps TEXT NOT NULL,
            PRIMARY KEY (run_id, batch)
        )"""
    )
    db.execute(
        """CREATE TABLE openprogram_decisions (
            run_id TEXT NOT NULL,
            path TEXT NOT NULL,
            call_id TEXT NOT NULL,
            approved INTEGER NOT NULL,
            reason TEXT,
            arguments_hash TEXT NOT NULL,
            PRIMARY KEY (run_id, path)
        ) WITHOUT ROWID"""
    )


MIGRATIONS: tuple[Migration, ...] = (_conversations, _runs)
"""Every migration, oldest first; ``MIGRATIONS[n]`` takes a file from version n to n + 1."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version this openprogram writes: the number of migrations."""


def migrate(db: sqlite3.Connection, where: str) -> None:
    """Apply the migrations ``db`` lacks (``where`` names the file in errors).

    A file already at this version is only read; otherwise the version is read
    again inside the write transaction, so of processes opening it at once one
    migrates and the others find it done.

    Raises:
        ConfigurationError: The file was written by a newer openprogram.
    """
    if _version(db, where) == SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "CREATE TABLE IF NOT EXISTS openprogram_schema "
            "(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)"
        )
        for migration in MIGRATIONS[_version(db, where) :]:
            migration(db)
        db.execute(
            "INSERT INTO openprogram_schema (id, version) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            (SCHEMA_VERSION,),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _version(db: sqlite3.Connection, where: str) -> int:
    """The file's schema version (0: none yet)."""
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'openprogram_schema'"
    ).fetchone()
    row = db.execute("SELECT version FROM openprogram_schema").fetchone() if exists else None
    version = int(row[0]) if row is not None else 0
    if version > SCHEMA_VERSION:
        raise ConfigurationError(
            f"{where} has store schema version {version}, newer than this openprogram "
            f"knows ({SCHEMA_VERSION}): upgrade openprogram to use it"
        )
    return version
