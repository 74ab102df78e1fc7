"""Targets that try to break ``--json``'s promise of exactly one JSON object on stdout."""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import enum
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


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    colour: Colour


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


def odd_values() -> dict[str, Any]:
    """Values the JSON rules map: dataclass, enum, set, tuple, an object whose str() raises."""
    return {
        "point": Point(1, Colour.RED),
        "tags": frozenset({"a"}),
        "pair": (1, 2),
        "odd": Unprintable(),
    }


def interrupted() -> None:
    """Act as if Ctrl-C was pressed."""
    raise KeyboardInterrupt
