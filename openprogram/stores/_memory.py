"""``MemoryStore``: conversations in this process's memory (the default without a store)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from openprogram.exceptions import OpenProgramError
from openprogram.messages import Message
from openprogram.stores._turns import Turns

__all__ = ["MemoryStore", "conflict"]


class MemoryStore:
    """A ``Store`` in memory: shared by runtimes of one process, gone when it ends.

    Safe from any thread and event loop. ``Runtime()`` without ``store=`` keeps
    its conversations in one of its own.

    Example:
        >>> from openprogram import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> store = MemoryStore()
        >>> first = Runtime(ScriptedProvider(["Hi Ann!"]), store=store)
        >>> first.conversation("c1").send("I am Ann.")
        'Hi Ann!'
        >>> len(Runtime(ScriptedProvider([]), store=store).conversation("c1").messages)
        2
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, list[Message]] = {}
        self._turns = Turns()

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._conversations)} conversation(s))"

    def lock_conversation(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``conversation_id`` for one send (see ``Store``)."""
        return self._turns.hold(conversation_id)

    async def load_conversation(self, conversation_id: str, start: int = 0) -> tuple[Message, ...]:
        """The messages of ``conversation_id`` from position ``start`` on."""
        with self._lock:
            return tuple(self._conversations.get(conversation_id, ())[start:])

    async def append_conversation(
        self, conversation_id: str, messages: Sequence[Message], *, start: int
    ) -> None:
        """Store ``messages`` after the first ``start`` ones (see ``Store``)."""
        with self._lock:
            stored = self._conversations.setdefault(conversation_id, [])
            if len(stored) != start:
                raise conflict(conversation_id, start, len(stored))
            stored.extend(messages)


def conflict(conversation_id: str, start: int, stored: int) -> OpenProgramError:
    """The error of an append that lost a race (``start`` is not the stored length)."""
    return OpenProgramError(
        f"conversation {conversation_id!r} changed while a send ran: it expected {start} "
        f"stored message(s) and found {stored}, so its reply was not saved. Sends take turns "
        "through Store.lock_conversation; this one's turn ran out (its lease expired while "
        "the process stalled). Send it again"
    )
