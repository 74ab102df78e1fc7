"""``DBOSStore``: conversations and durable runs in the database DBOS uses, shared by processes
on many hosts, and the queue worker processes take runs from."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial

from openprogram.exceptions import UserError
from openprogram.messages import Message
from openprogram.messages._json import decode_message, encode_message
from openprogram.stores._held_runs import HeldRuns
from openprogram.stores._memory import conflict
from openprogram.stores._shared import SharedStore
from openprogram.stores._turns import Turns
from openprogram.stores.dbos import _run_sql
from openprogram.stores.dbos._engine import StoreDatabase, shown
from openprogram.stores.dbos._lease import Leases
from openprogram.stores.dbos._queue import Enqueuer, dbos_url
from openprogram.stores.dbos._rows import append_rows, read_rows
from openprogram.stores.dbos._schema import migrate

__all__ = ["DBOSStore"]


class DBOSStore(SharedStore):
    """A ``Store`` in the database DBOS Transact uses: SQLite for development, PostgreSQL
    for many processes on many hosts (the ``openprogram-ai[dbos]`` extra).

    ``database_url`` is DBOS's system database: ``"sqlite:///runs.sqlite"`` (a
    file, shared by the processes of one machine) or ``"postgresql://user:password@host:5432/runs"``
    (a database that is created when missing, as DBOS creates its own). The
    store keeps conversations and durable runs in tables of its own there
    (``openprogram_*``, beside DBOS's), with the guarantees of ``SQLiteStore``
    (runs: see docs/durable.md; worker processes take runs submitted with
    ``runtime.submit`` from its DBOS queue: docs/scale-out.md). Conversations: each message one
    row, written when its send ends in one short transaction; sends on one
    conversation take turns across threads, processes and hosts through a
    lease row, renewed every third of ``lease_s`` while a send runs and freed
    when it ends; a holder killed with ``kill -9`` frees its turn at once for
    processes of its host, and any holder that stops renewing after
    ``lease_s`` seconds (by the database's clock). The database holds a schema
    version and is migrated on opening. Close the store when done (or use
    ``with``).

    Args:
        database_url: Where DBOS keeps its state: ``sqlite:///path`` (the folder
            must exist) or ``postgresql://…`` (``postgres://`` too).
        lease_s: How long a send's turn lasts without renewal.

    Example:
        >>> import os, tempfile
        >>> from openprogram import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "runs.sqlite")
        >>> with DBOSStore(url) as store:
        ...     chat = Runtime(ScriptedProvider(["Hi Ann!"]), store=store).conversation("c1")
        ...     chat.send("I am Ann.")
        'Hi Ann!'
        >>> with DBOSStore(url) as store:   # later, or in another process
        ...     chat = Runtime(ScriptedProvider([]), store=store).conversation("c1")
        ...     [m.text for m in chat.messages]
        ['I am Ann.', 'Hi Ann!']
    """

    _leases: Leases

    def __init__(self, database_url: str, *, lease_s: float = 30.0) -> None:
        if isinstance(lease_s, bool) or not isinstance(lease_s, int | float) or not lease_s > 0:
            raise UserError(f"DBOSStore(lease_s={lease_s!r}): use a number of seconds > 0")
        where = f"DBOSStore({shown(database_url)!r})"
        self._database = StoreDatabase(database_url, where=where)
        try:
            self._database.transaction(partial(migrate, where=where))
        except BaseException:
            self._database.close()
            raise
        self._where = where
        self._url = shown(database_url)
        self._leases = Leases(self._database, lease_s)
        self._turns = Turns()
        self._runs = HeldRuns("DBOSStore", self._database, _run_sql, self._leases, self._turns)
        self._enqueuer = Enqueuer(dbos_url(self._database.url))

    @property
    def database_url(self) -> str:
        """The database's URL as given, its password hidden."""
        return self._url

    def __repr__(self) -> str:
        return self._where

    def close(self) -> None:
        """Close the store's connections (idempotent)."""
        self._enqueuer.close()
        self._database.close()

    async def load_conversation(self, conversation_id: str, start: int = 0) -> tuple[Message, ...]:
        """The messages of ``conversation_id`` from position ``start`` on."""
        rows = await self._database.run(partial(read_rows, conversation_id, start))
        where = f"conversation {conversation_id!r}, message"
        return tuple(decode_message(json.loads(text), f"{where} {at}") for at, text in rows)

    async def append_conversation(
        self, conversation_id: str, messages: Sequence[Message], *, start: int
    ) -> None:
        """Store ``messages`` after the first ``start`` ones, in one transaction (see ``Store``)."""
        texts = [
            json.dumps(encode_message(m, f"message {start + i}"), ensure_ascii=False)
            for i, m in enumerate(messages)
        ]
        stored = await self._database.run(partial(append_rows, conversation_id, start, texts))
        if stored != start:
            raise conflict(conversation_id, start, stored)

    async def enqueue_run(self, run_id: str, workflow_id: str) -> None:
        """Queue an execution of ``run_id`` for the workers (see ``RunQueue``; use
        ``runtime.submit``, which writes the run's record first)."""
        await self._enqueuer.aenqueue(run_id, workflow_id)
