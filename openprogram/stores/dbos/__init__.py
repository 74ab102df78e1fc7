"""Stores on DBOS Transact (the ``openprogram-ai[dbos]`` extra): SQLite or PostgreSQL.

``DBOSStore(database_url)`` keeps state in the database DBOS uses:
``"sqlite:///runs.sqlite"`` for development, ``"postgresql://…"`` when many
worker processes on many machines share it. See ``docs/conversations.md``.

Importing this package needs the extra (SQLAlchemy and psycopg come with it);
without it the import raises an ``ImportError`` saying how to install it.
``import openprogram.stores`` never imports this package.
"""

from __future__ import annotations

# First, whatever is imported from this package: without the extra it raises the ImportError.
from openprogram.stores.dbos import _engine  # noqa: F401
from openprogram.stores.dbos._store import DBOSStore
from openprogram.stores.dbos._worker import Worker

__all__ = ["DBOSStore", "Worker"]
