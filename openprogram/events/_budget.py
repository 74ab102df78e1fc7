"""Events of run-tree budgets: a limit running low, a limit spent."""

from __future__ import annotations

from dataclasses import dataclass

from openprogram.events._event import Event

__all__ = ["BudgetExhausted", "BudgetWarning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetWarning(Event):
    """A run-tree budget is nearly spent: this model call is asked to answer now, tools withdrawn.

    Emitted once per limit by each budget (the tree's, and each ``exec(budget=...)``).
    """

    limit: str
    """The limit running low: ``"model_calls"``, ``"tokens"``, ``"seconds"``, ``"tool_calls"``."""
    used: float
    """How much of it the tree has spent."""
    allowed: float
    """The limit's value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetExhausted(Event):
    """A run-tree budget is spent: an exec raises ``BudgetExceeded`` or a call is refused.

    Emitted once per limit by each budget, by the run that hit it.
    """

    limit: str
    """The limit spent (see ``BudgetWarning.limit``; also ``"agentic_calls"``, ``"threads"``)."""
    used: float
    """How much of it the tree had spent."""
    allowed: float
    """The limit's value."""
