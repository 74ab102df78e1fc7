"""Targets that try to break ``--json``'s promise of exactly one JSON object on stdout."""

from __future__ import annotations

import asyncio
import atexit
import sys
import threading
from typing import Any


def tuple_keys() -> dict[Any, str]:
    """A mapping whose keys JSON cannot hold as they are."""
    return {(1, 2): "pair", 3: "int", None: "none"}


def cycle() -> list[Any]:
    """A list that contains itself."""
    items: list[Any] = []
    items.append({"again": items})
    return items


def very_deep() -> list[Any]:
    """100,000 nested lists: deeper than any JSON reader goes."""
    value: list[Any] = []
    for _ in range(100_000):
        value = [value]
    return value


def exits_zero() -> None:
    """Leave through sys.exit(0) instead of returning."""
    sys.exit(0)


def cancelled() -> None:
    """Raise a BaseException that is not an Exception."""
    raise asyncio.CancelledError


class Halt(BaseException):
    """A user-defined BaseException."""


def halts() -> None:
    """Raise the user-defined BaseException."""
    raise Halt("stopped on purpose")


def not_a_number() -> dict[str, float]:
    """Floats JSON has no literal for."""
    return {"nan": float("nan"), "inf": float("inf"), "one": 1.0}


def prints_after_return() -> str:
    """Start a non-daemon thread that prints once the function has returned."""

    def later() -> None:
        threading.main_thread().join()  # returns once the interpreter starts shutting down
        print("late line from a thread")
        sys.stdout.flush()

    threading.Thread(target=later).start()
    atexit.register(print, "line from an atexit handler")
    return "returned"


def echo(value: list[Any]) -> int:
    """Take a JSON array.

    Args:
        value: Any array.
    """
    return len(value)
