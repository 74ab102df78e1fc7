"""``RunResult``: what one ``exec`` did, kept on ``runtime.last_run``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from openprogram.budget import BudgetUsage
from openprogram.events import Event
from openprogram.messages import AssistantMessage, Message, Usage

__all__ = ["RunResult"]

E = TypeVar("E", bound=Event)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """The record of one run (one ``exec``), nested runs' events included."""

    run_id: str
    """Id of the run; its events carry it."""
    output: Any
    """What ``exec`` returned (``None`` when it raised)."""
    messages: tuple[Message, ...]
    """The conversation of the run: user content, replies, tool results, steering, follow-ups."""
    usage: Usage
    """Tokens of all model calls of the run and of the runs nested in it (the outermost
    run's covers the whole tree)."""
    budget_usage: BudgetUsage = field(default_factory=BudgetUsage)
    """What the run tree had spent against its budget when this run ended."""
    iterations: int
    """Model calls made."""
    stop_reason: str
    """``"stop"`` (a text answer), ``"max_iterations"``, ``"aborted"``, ``"error"``,
    ``"timeout"``, ``"budget"`` (it raised ``BudgetExceeded``), or the final reply's own
    reason (``"length"``, ``"refusal"``, ...)."""
    events: tuple[Event, ...]
    """Trace events of the run and of the runs nested in it, in emission order."""

    def events_of(self, kind: type[E]) -> list[E]:
        """The events of one class, in order: ``run.events_of(ToolCallFailed)``."""
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def text(self) -> str:
        """Text of the last assistant reply (``""`` if there was none)."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message.text
        return ""
