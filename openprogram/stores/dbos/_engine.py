"""The database of a ``DBOSStore``: one SQLAlchemy engine on the URL DBOS uses.

SQLAlchemy and psycopg come with the ``dbos`` extra; without them, importing
``openprogram.stores.dbos`` raises an ``ImportError`` saying how to install it
(``import openprogram`` and ``import openprogram.stores`` never import it).

Both databases DBOS supports are spoken through one engine. What differs
between them is data (``Dialect``), read by the same statements:

- **PostgreSQL** (``postgresql://…``, driven by psycopg 3): a missing database
  is created, as DBOS creates its own; each transaction is the server's default
  (read committed), and correctness rests on primary keys and conditional
  upserts, never on reading then writing.
- **SQLite** (``sqlite:///path``): WAL, each transaction ``BEGIN IMMEDIATE``,
  a busy timeout while another process writes.

Every statement is short, and runs on a worker thread (``run``), so a database
across the network never stalls an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from openprogram.exceptions import ConfigurationError, OpenProgramError
from openprogram.stores._database import use_wal

try:
    import sqlalchemy as sa
    from sqlalchemy import event
    from sqlalchemy.engine import URL, Connection, Engine
except ImportError as exc:  # the extra is optional: say how to install it
    raise ImportError(
        f"openprogram.stores.dbos needs the 'dbos' extra (DBOS Transact, SQLAlchemy, psycopg), "
        f"and it is not installed ({exc}); install it with: pip install 'openprogram-ai[dbos]'"
    ) from exc

__all__ = ["BUSY_TIMEOUT_S", "DIALECTS", "Dialect", "StoreDatabase", "shown"]

T = TypeVar("T")

BUSY_TIMEOUT_S = 30.0
"""How long a SQLite write waits for another process's write (DBOS waits as long)."""


@dataclass(frozen=True, kw_only=True)
class Dialect:
    """What differs between the databases a ``DBOSStore`` speaks."""

    name: str
    """``"sqlite"`` or ``"postgresql"``."""
    now: str
    """An SQL expression: the database's clock, in seconds since the epoch."""


DIALECTS = {
    "sqlite": Dialect(name="sqlite", now="((julianday('now') - 2440587.5) * 86400.0)"),
    "postgresql": Dialect(name="postgresql", now="EXTRACT(EPOCH FROM clock_timestamp())"),
}
"""Leases expire by the database's clock, so processes on hosts whose clocks drift agree."""

_DRIVERS = {
    "sqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
}
_CREATED_MEANWHILE = ("42P04", "23505")  # duplicate database; pg_database's unique name
_SECRET = re.compile(r"(://[^:/@]*:)[^@]*@")


def shown(database_url: str) -> str:
    """``database_url`` with its password hidden, for messages and reprs."""
    if not isinstance(database_url, str):
        return f"{database_url!r:.60}"
    return _SECRET.sub(r"\1***@", database_url)


class StoreDatabase:
    """One engine on ``database_url``; ``run`` does short work on a worker thread."""

    def __init__(self, database_url: str, *, where: str) -> None:
        self.url = _parse(database_url, where)
        self.dialect = DIALECTS[self.url.get_backend_name()]
        self.where = where
        self.closed = False
        if self.dialect.name == "sqlite":
            self.engine = _sqlite_engine(self.url, where)
        else:
            self.engine = sa.create_engine(self.url, pool_pre_ping=True)
            _create_database_if_missing(self.engine, where)

    def transaction(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one transaction on this thread: committed, or rolled back."""
        if self.closed:
            raise OpenProgramError(
                f"{self.where} is closed; open a new one to use the database again"
            )
        with self.engine.begin() as connection:
            return work(connection)

    async def run(self, work: Callable[[Connection], T]) -> T:
        """``transaction(work)`` on a worker thread; it finishes even if the caller is cancelled,
        and a cancelled caller gets its ``CancelledError`` only once the transaction has ended
        (committed or rolled back), so what it does next (freeing a lease it may have taken)
        comes after it."""
        done = asyncio.ensure_future(asyncio.to_thread(self.transaction, work))
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            with contextlib.suppress(asyncio.CancelledError):  # a second cancel stops the wait
                await asyncio.wait([done])
            if done.done() and not done.cancelled():
                done.exception()  # retrieved: its caller is gone, the error was its to see
            raise

    # What durable runs read and write through (``openprogram.stores._held_runs``).
    aread = run
    awrite = run

    def close(self) -> None:
        """Close every pooled connection (idempotent); the store cannot be used afterwards."""
        self.closed = True
        self.engine.dispose()


def _parse(database_url: str, where: str) -> URL:
    if not isinstance(database_url, str):
        raise ConfigurationError(
            f"{where}: give the database as a URL string, e.g. 'sqlite:///runs.sqlite' or "
            f"'postgresql://user:password@host:5432/runs', not {database_url!r:.60}"
        )
    try:
        url = sa.make_url(database_url)
    except sa.exc.ArgumentError as exc:
        raise ConfigurationError(
            f"{where}: {shown(database_url)!r} is not a database URL; use 'sqlite:///path' "
            "or 'postgresql://user:password@host:5432/database'"
        ) from exc
    driver = _DRIVERS.get(url.get_backend_name())
    if driver is None:
        raise ConfigurationError(
            f"{where}: DBOS stores runs in SQLite or PostgreSQL, not {url.get_backend_name()!r}; "
            "use 'sqlite:///path' or 'postgresql://…'"
        )
    if not url.database:
        raise ConfigurationError(
            f"{where}: the URL names no database; add one ('sqlite:///runs.sqlite', "
            "'postgresql://host:5432/runs')"
        )
    return url.set(drivername=driver)


def _sqlite_engine(url: URL, where: str) -> Engine:
    database = url.database or ""
    if database == ":memory:":
        raise ConfigurationError(
            f"{where}: an in-memory SQLite database lives in one connection, not in a store "
            "that processes share; give a file ('sqlite:///runs.sqlite'), or use MemoryStore()"
        )
    if not database.startswith("file:"):
        parent = Path(database).parent
        if not parent.is_dir():
            raise ConfigurationError(
                f"{where}: the folder {str(parent)!r} does not exist; create it first, or "
                "give a path in an existing folder"
            )
    engine = sa.create_engine(url)
    event.listen(engine, "connect", _sqlite_connected)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connected(dbapi_connection: Any, record: Any) -> None:
    # The driver's own transaction handling begins too late (at the first write), so it
    # is turned off and each transaction begins with BEGIN IMMEDIATE (_sqlite_begin).
    dbapi_connection.isolation_level = None
    dbapi_connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    use_wal(dbapi_connection, BUSY_TIMEOUT_S)
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _create_database_if_missing(engine: Engine, where: str) -> None:
    """Create the URL's database when the server has none of that name (as DBOS does)."""
    try:
        with engine.connect():
            return
    except sa.exc.OperationalError as exc:
        # A refused connection carries no SQLSTATE, only the server's text: another
        # locale's text reads as any other failure, reported with it.
        if f'database "{engine.url.database}" does not exist' not in str(exc):
            raise ConfigurationError(
                f"{where}: cannot connect to {engine.url.render_as_string()!r}: "
                f"{str(exc.orig).strip()}"
            ) from exc
    server = sa.create_engine(engine.url.set(database="postgres"), poolclass=sa.NullPool)
    try:
        with server.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            name = engine.dialect.identifier_preparer.quote(engine.url.database or "")
            try:
                connection.exec_driver_sql(f"CREATE DATABASE {name}")
            except (sa.exc.ProgrammingError, sa.exc.IntegrityError) as exc:
                if getattr(exc.orig, "sqlstate", None) not in _CREATED_MEANWHILE:
                    raise  # not "created meanwhile by another process"
    finally:
        server.dispose()
