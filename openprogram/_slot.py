"""One contextvar behind ``get()`` and ``use(value)``: the pattern every contextvar here follows.

``use`` is a context manager that sets the value for its block and resets the
token in ``__exit__``, whatever ends the block, so no value outlives the code
that set it. It is a small class rather than a ``@contextmanager`` generator:
the runtime enters one for every tool call, and a class costs a third as much.

Example:
    >>> depth = ContextSlot("example_depth", 0)
    >>> with depth.use(1):
    ...     depth.get()
    1
    >>> depth.get()
    0
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["ContextSlot"]

T = TypeVar("T")


class ContextSlot(Generic[T]):
    """A contextvar with a default, read by ``get()`` and set for a block by ``use(value)``."""

    __slots__ = ("_var",)

    def __init__(self, name: str, default: T) -> None:
        """Make the slot: ``name`` names its contextvar, ``default`` is its value."""
        self._var: ContextVar[T] = ContextVar(name, default=default)

    def get(self) -> T:
        """The value in the current context (the default when no block set one)."""
        return self._var.get()

    def use(self, value: T) -> _Use[T]:
        """A context manager making ``value`` current for its block."""
        return _Use(self._var, value)


class _Use(Generic[T]):
    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[T], value: T) -> None:
        self._var = var
        self._value = value
        self._token: Token[T] | None = None

    def __enter__(self) -> T:
        self._token = self._var.set(self._value)
        return self._value

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            self._var.reset(self._token)
            self._token = None
