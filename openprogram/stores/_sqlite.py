"""``SQLiteStore``: conversations and durable runs in one SQLite file, shared by threads and
processes."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import partial

from openprogram.exceptions import UserError
from openprogram.messages import Message
from openprogram.messages._json import decode_message, encode_message
from openprogram.stores import _run_sql
from openprogram.stores._database import Database
from openprogram.stores._held_runs import HeldRuns
from openprogram.stores._lease import Leases
from openprogram.stores._memory import conflict
from openprogram.stores._shared import SharedStore
from openprogram.stores._turns import Turns

__all__ = ["CACHED", "SQLiteStore"]

CACHED = 64
"""Conversations whose decoded messages a store keeps in memory (the most recently used)."""


class SQLiteStore(SharedStore):
    """A ``Store`` in one SQLite file: safe across threads and processes of one machine.

    Each message is one row, written when the send that made it ends (stdlib
    ``sqlite3``, WAL, one short write transaction at a time, busy timeouts).
    Rows once read are kept decoded in memory for the ``CACHED`` most recent
    conversations, so a send reads only what was added since.
    Sends on one conversation take turns in this process (first come, first
    served) and across processes through a lease row that is renewed while a
    send runs and freed when it ends; a holder killed with ``kill -9`` frees it
    at once for processes of the same machine, and any stalled holder after
    ``lease_s`` seconds. The file holds a schema version and is migrated on
    opening (``openprogram.stores._schema``). Close the store when done (or use
    ``with``); nothing is written anywhere but ``path``.

    Args:
        path: The database file (created when missing; its folder must exist).
        lease_s: How long a send's turn lasts without renewal (renewed every third
            of it while the send runs).
        busy_timeout_s: How long one write waits for another process's write.

    Example:
        >>> import os, tempfile
        >>> from openprogram import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> path = os.path.join(tempfile.mkdtemp(), "chats.sqlite")
        >>> with SQLiteStore(path) as store:
        ...     chat = Runtime(ScriptedProvider(["Hi Ann!"]), store=store).conversation("c1")
        ...     chat.send("I am Ann.")
        'Hi Ann!'
        >>> with SQLiteStore(path) as store:   # later, or in another process
        ...     chat = Runtime(ScriptedProvider([]), store=store).conversation("c1")
        ...     [m.text for m in chat.messages]
        ['I am Ann.', 'Hi Ann!']
    """

    _leases: Leases

    def __init__(
        self, path: str | os.PathLike[str], *, lease_s: float = 30.0, busy_timeout_s: float = 10.0
    ) -> None:
        for name, value in (("lease_s", lease_s), ("busy_timeout_s", busy_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise UserError(f"SQLiteStore({name}={value!r}): use a number of seconds > 0")
        if not isinstance(path, str | os.PathLike):
            raise UserError(f"SQLiteStore({path!r:.60}): give the file as a str or a path")
        self._database = Database(path, busy_timeout_s=busy_timeout_s)
        self._leases = Leases(self._database, lease_s)
        self._turns = Turns()
        self._cache: OrderedDict[str, tuple[Message, ...]] = OrderedDict()
        self._runs = HeldRuns("SQLiteStore", self._database, _run_sql, self._leases, self._turns)
        self._cache_lock = threading.Lock()

    @property
    def path(self) -> str:
        """The database file."""
        return self._database.path

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def close(self) -> None:
        """Close the file (idempotent); the store cannot be used afterwards."""
        self._database.close()

    async def load_conversation(self, conversation_id: str, start: int = 0) -> tuple[Message, ...]:
        """The messages of ``conversation_id`` from position ``start`` on."""
        known = self._cache.get(conversation_id, ())
        rows = await self._database.aread(partial(_rows, conversation_id, len(known)))
        if rows:
            where = f"conversation {conversation_id!r}, message"
            added = tuple(decode_message(json.loads(text), f"{where} {at}") for at, text in rows)
            known = self._remember(conversation_id, (*known, *added))
        return known[start:]

    async def append_conversation(
        self, conversation_id: str, messages: Sequence[Message], *, start: int
    ) -> None:
        """Store ``messages`` after the first ``start`` ones, in one transaction (see ``Store``)."""
        texts = [
            json.dumps(encode_message(m, f"message {start + i}"), ensure_ascii=False)
            for i, m in enumerate(messages)
        ]
        await self._database.awrite(partial(_append, conversation_id, start, texts))
        known = self._cache.get(conversation_id, () if start == 0 else None)
        if known is not None and len(known) == start:
            self._remember(conversation_id, (*known, *messages))

    def _remember(self, conversation_id: str, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        # Rows never change once written, so what was read stays true; only rows added
        # since (by anyone) are read again. The newest CACHED conversations are kept.
        with self._cache_lock:
            self._cache[conversation_id] = messages
            self._cache.move_to_end(conversation_id)
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)
        return messages


def _rows(conversation_id: str, start: int, db: sqlite3.Connection) -> list[tuple[int, str]]:
    return db.execute(
        "SELECT position, message FROM openprogram_messages "
        "WHERE conversation_id = ? AND position >= ? ORDER BY position",
        (conversation_id, start),
    ).fetchall()


def _append(conversation_id: str, start: int, texts: list[str], db: sqlite3.Connection) -> None:
    (stored,) = db.execute(
        "SELECT COALESCE(MAX(position) + 1, 0) FROM openprogram_messages WHERE conversation_id = ?",
        (conversation_id,),
    ).fetchone()
    if stored != start:
        raise conflict(conversation_id, start, stored)
    db.executemany(
        "INSERT INTO openprogram_messages (conversation_id, position, message) VALUES (?, ?, ?)",
        [(conversation_id, start + i, text) for i, text in enumerate(texts)],
    )
