"""Targets for the CLI contract tests (run in real subprocesses, on scripted fakes)."""

from __future__ import annotations

import sys

from openprogram import Runtime, agentic_function


@agentic_function(register_globally=False)
async def ask_async(question: str, runtime: Runtime) -> str:
    """An async agentic function: the CLI must await it.

    Args:
        question: What to ask.
    """
    answer = await runtime.async_exec(question, toolset="none")
    return f"async says: {answer}"


@agentic_function(register_globally=False)
def trip(destination: str, days: int, runtime: Runtime) -> str:
    """Report the argument types the function received.

    Args:
        destination: Where to go.
        days: How many days.
    """
    return f"{type(destination).__name__}:{destination} {type(days).__name__}:{days}"


def fails(x: int) -> int:
    """Raise from user code."""
    raise ValueError(f"user code failed on {x}")


def chatty(x: int) -> int:
    """Print to stdout (and from C level through the fd) before answering."""
    print("hello from user code")
    sys.stdout.flush()
    import os

    os.write(1, b"raw fd write\n")
    return x * 2


class NotAFunction:
    """A class: not something ``run`` calls."""


def quits() -> None:
    """Exit the process from user code."""
    sys.exit(3)
