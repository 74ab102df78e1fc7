"""Effects in a durable run: what a call whose earlier attempt never finished may do now.

A tool declares ``effect="idempotent"`` (the default) or ``"side_effect"``.
Before a ``side_effect`` body runs, a *started* mark is written (with every
step queued before it, so the reply that made the call is durable too); when
a re-run finds that mark and no result, the earlier attempt's outcome is
unknown, so the call is not run again: its result is an error saying it may or
may not have happened (journaled, so every later replay agrees). An
idempotent call without a result simply runs again (at least once). A body
given its ``ToolContext`` may read ``idempotency_key``, so the steps queued
before it are written first too: the key names a call the journal holds.

A call whose body paused (an agentic function with a call inside that waits)
gets a *paused* mark: it was approved and ran up to a pause, so a resumed run
runs its body again without asking the approval hook (its nested steps replay
from the journal); for a ``side_effect`` call, the mark of the same attempt
says its outcome is known.
"""

from __future__ import annotations

from openprogram.durable import Journal, mark_attempt, mark_step
from openprogram.tools import Tool

__all__ = ["UNKNOWN_OUTCOME", "before_body", "body_paused", "unknown_outcome"]

UNKNOWN_OUTCOME = (
    "Tool {name!r} was started by an earlier attempt of this run that ended before its result "
    "was recorded, so it may or may not have happened. It is not run again (it has "
    "effect='side_effect'): find out whether it happened before calling it again."
)
"""The result of a ``side_effect`` call whose earlier attempt's outcome is unknown."""


def unknown_outcome(journal: Journal, key: str, tool: Tool) -> str | None:
    """The error text when ``tool``'s call at ``key`` started before and never finished."""
    if tool.effect != "side_effect":
        return None
    started = mark_attempt(journal.step(key, "started"))
    if started == 0 or started <= mark_attempt(journal.step(key, "paused")):
        return None
    return UNKNOWN_OUTCOME.format(name=tool.name)


async def before_body(journal: Journal, key: str, tool: Tool) -> int:
    """Write what the body may act on; returns the attempt of a ``side_effect`` call (else 0).

    Raises:
        OpenProgramError: The store could not be written (the body does not run).
    """
    if tool.effect == "side_effect":
        attempt = mark_attempt(journal.step(key, "started")) + 1
        await journal.write_now([mark_step(key, "started", attempt)])
        return attempt
    if tool.reads_context:
        await journal.write_now()
    return 0


def body_paused(journal: Journal, key: str, attempt: int) -> None:
    """The body of the call at ``key`` paused (in ``attempt`` of a ``side_effect`` call, else
    0): it was approved, and its outcome is known."""
    journal.add(mark_step(key, "paused", attempt))
