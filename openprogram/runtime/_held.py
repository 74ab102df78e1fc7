"""The conversations whose send is in progress in this context (to refuse a send that would
wait for itself: a tool of a send, sending on the same conversation)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["get_held", "use_held"]

_held: ContextVar[frozenset[tuple[int, str]]] = ContextVar(
    "openprogram_held_conversations", default=frozenset()
)


def get_held() -> frozenset[tuple[int, str]]:
    """``(id(store), conversation_id)`` of every send in progress around this code."""
    return _held.get()


@contextlib.contextmanager
def use_held(key: tuple[int, str]) -> Iterator[None]:
    """Mark the conversation ``key`` as sending for the block (and the tools it runs)."""
    token = _held.set(_held.get() | {key})
    try:
        yield
    finally:
        _held.reset(token)
