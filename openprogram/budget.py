"""Run-tree budgets: what one exec and every exec nested in it may spend together.

A model can grow a run tree exponentially: each agentic function it calls
runs an exec of its own, whose model may call more agentic functions. A
``Budget`` bounds the whole tree, not one exec: ``Runtime(budget=...)`` sets
it for the runtime's top-level execs, ``exec(budget=...)`` tightens it for
that exec and everything nested in it (a limit can only go down).

``None`` means the default: for ``Runtime(budget=...)`` that is
``DEFAULT_AGENTIC_CALLS`` agentic calls, ``DEFAULT_THREADS`` sync tool bodies
at once and no limit on the rest; for ``exec(budget=...)`` it is whatever the
enclosing tree allows.

Example:
    >>> from openprogram import Budget
    >>> Budget(model_calls=40, tokens=200_000).model_calls
    40
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeAlias

from openprogram.exceptions import UserError

__all__ = [
    "DEFAULT_AGENTIC_CALLS",
    "DEFAULT_THREADS",
    "LIMITS",
    "Budget",
    "BudgetUsage",
    "LimitName",
]

DEFAULT_AGENTIC_CALLS = 256
"""Agentic calls a run tree may make when no budget says otherwise.

Enough for programs that fan out to dozens of sub-agents; small enough that a
model calling 8 agentic functions at every level stops after a few hundred
bodies instead of ``8**(max_depth - 1)``.
"""

DEFAULT_THREADS = 32
"""Sync tool bodies a run tree may run at once when no budget says otherwise.

Four full batches (``MAX_PARALLEL`` is 8), while the threads of a fan-out of
nested sync agentic functions stay well under a hundred.
"""

LimitName: TypeAlias = Literal[
    "model_calls", "tool_calls", "agentic_calls", "tokens", "seconds", "threads"
]

LIMITS: tuple[LimitName, ...] = (
    "model_calls",
    "tool_calls",
    "agentic_calls",
    "tokens",
    "seconds",
    "threads",
)
"""The names of a budget's limits, in field order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Limits for a whole run tree (an exec and every exec nested in it).

    Raises:
        UserError: A limit that is not a positive int (``seconds``: a positive number).
    """

    model_calls: int | None = None
    """Model calls in the tree, retries not counted separately."""
    tool_calls: int | None = None
    """Tool calls the tree may run (agentic calls included)."""
    agentic_calls: int | None = None
    """Calls of agentic functions by a model (default ``DEFAULT_AGENTIC_CALLS``)."""
    tokens: int | None = None
    """Input plus output tokens of every model call, as the provider reports them."""
    seconds: float | None = None
    """Wall-clock seconds from the start of the exec that set it."""
    threads: int | None = None
    """Sync tool bodies running at once (default ``DEFAULT_THREADS``)."""

    def __post_init__(self) -> None:
        for name in LIMITS:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "seconds":
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                ok = ok and math.isfinite(value) and value > 0
                kind = "a positive number of seconds"
            else:
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
                kind = "an int >= 1"
            if not ok:
                raise UserError(f"Budget({name}={value!r}): must be None or {kind}")

    def limits(self) -> dict[LimitName, float | None]:
        """The limits by name (``None``: not limited by this budget)."""
        return {name: getattr(self, name) for name in LIMITS}

    def with_defaults(self) -> Budget:
        """This budget with the defaults filled in where it says ``None``."""
        return Budget(
            **{f.name: getattr(self, f.name) for f in fields(self)}
            | {
                "agentic_calls": self.agentic_calls or DEFAULT_AGENTIC_CALLS,
                "threads": self.threads or DEFAULT_THREADS,
            }
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetUsage:
    """What a run tree has spent, by limit name (``BudgetExceeded.usage``, ``RunResult``)."""

    model_calls: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Tool calls run (agentic ones included)."""
    agentic_calls: int = 0
    """Agentic calls run."""
    tokens: int = 0
    """Input plus output tokens."""
    seconds: float = 0.0
    """Wall-clock seconds since the tree started."""
    threads: int = 0
    """Most sync tool bodies that ran at once."""

    def __getitem__(self, name: str) -> Any:
        """The amount spent of the limit ``name`` (``usage["tokens"]``)."""
        if name not in LIMITS:
            raise KeyError(name)
        return getattr(self, name)
