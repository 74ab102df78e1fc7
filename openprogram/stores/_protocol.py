"""``Store``: the one place state that outlives a call lives (conversations for now).

A store holds each conversation as an append-only list of messages, and gives
sends on one conversation turns: ``lock_conversation`` is held for the whole
send (load, model call, append), by every ``Conversation`` object, runtime,
thread and process that shares the store, so each send's history is exactly
the conversation as stored when it starts and none is lost or interleaved.
Stores of later kinds of state (run journals, pauses) extend this protocol.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from openprogram.messages import Message

__all__ = ["Store", "conforms"]

_conforming: weakref.WeakKeyDictionary[type, dict[type, bool]] = weakref.WeakKeyDictionary()


def conforms(value: object, protocol: type) -> bool:
    """``isinstance(value, protocol)`` for a runtime-checkable protocol of methods, answered
    once per class: the check looks up every method and costs microseconds, and the runtime
    makes it for every exec with a store."""
    kind = type(value)
    known = _conforming.get(kind)
    if known is None:
        known = _conforming.setdefault(kind, {})
    answer = known.get(protocol)
    if answer is None:
        answer = known[protocol] = isinstance(value, protocol)
    return answer


@runtime_checkable
class Store(Protocol):
    """What ``Runtime(store=...)`` needs: conversations, appended to one send at a time."""

    def lock_conversation(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``conversation_id`` for one send; other holders wait their turn.

        Held across the model call, so it must not keep a database transaction
        open (other conversations never wait on it), and it must be released
        when its holder dies (a lease that expires, for one).
        """
        ...

    async def load_conversation(self, conversation_id: str, start: int = 0) -> tuple[Message, ...]:
        """The stored messages of ``conversation_id`` from position ``start`` on.

        An unknown id is an empty conversation.
        """
        ...

    async def append_conversation(
        self, conversation_id: str, messages: Sequence[Message], *, start: int
    ) -> None:
        """Store ``messages`` at positions ``start``, ``start + 1``, ...

        Raises:
            OpenProgramError: ``start`` is not the stored length: someone else
                appended meanwhile (nothing is written).
        """
        ...
