"""What a store shared by threads and processes does alike on every database.

``SQLiteStore`` and ``DBOSStore`` both hold a conversation for one send
first in this process (``Turns``), then across processes through a lease
row (their own ``Leases``), and both close at the end of a ``with`` block.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol, Self

from openprogram.stores._turns import Turns

__all__ = ["SharedStore"]


class _Leases(Protocol):
    def hold(self, name: str) -> AbstractAsyncContextManager[Any]: ...


class SharedStore:
    """The ``with`` block and the conversation turns of a store with ``_turns`` and ``_leases``."""

    _turns: Turns
    _leases: _Leases

    def close(self) -> None:
        """Release what the store holds (each store says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def lock_conversation(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``conversation_id`` for one send (see ``Store``): first in this process,
        then across processes through its lease."""
        return self._held(conversation_id)

    @contextlib.asynccontextmanager
    async def _held(self, conversation_id: str) -> AsyncIterator[None]:
        async with (
            self._turns.hold(conversation_id),
            self._leases.hold(f"conversation:{conversation_id}"),
        ):
            yield
