"""Waiting for a person: the pause signal, and who decides whether a call may run.

When the approval hook returns ``PAUSE`` for a call, the executor does not run
it; the other calls of its batch finish, and the batch raises ``PauseSignal``
listing every call that waits. It is a ``BaseException``, so it goes through
an agentic body's ``except Exception`` (and ``Tool.execute``, which turns
exceptions into error results) up to the executor that ran the agentic call,
which waits for that call's siblings and raises it again, up to the outermost
exec: it records the pending calls in the journal and raises ``RunPaused``.

``verdict`` decides whether a call may run, in this order: a person's decision
recorded for its position (bound to its arguments), a call whose body ran up
to a pause in an earlier attempt (it was approved then: it goes on), a call
the run waited on when it last paused and nobody decided (it waits again; the
hook is not asked), then the approval hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from openprogram._pause import PAUSE, Pause, PendingCall
from openprogram.durable import Journal, call_print
from openprogram.exceptions import ConfigurationError
from openprogram.messages import ToolCall

__all__ = ["PauseSignal", "pause_without_store", "verdict"]


class PauseSignal(BaseException):  # a BaseException: it must pass a body's ``except Exception``
    """Calls wait for a person: raised up the run tree to the outermost exec.

    Attributes:
        pending: The waiting calls, in run-tree order.
    """

    def __init__(self, pending: Sequence[PendingCall]) -> None:
        super().__init__(f"{len(pending)} call(s) wait for a person")
        self.pending = tuple(sorted(pending, key=lambda p: _order(p.path)))


async def verdict(
    call: ToolCall,
    key: str,
    journal: Journal | None,
    ask: Callable[[], Awaitable[str | Pause | None]],
) -> str | Pause | None:
    """``None``: the call may run; a string: denied, with that reason; ``PAUSE``: it waits.

    Args:
        call: The call.
        key: Its position in the run tree as text (``""`` outside a durable run).
        journal: The run tree's journal (``None``: not a durable run).
        ask: Asks the approval hook (and the tool's ``requires_approval`` rule).

    Raises:
        ConfigurationError: The hook paused a call of a run without a store.
    """
    if journal is not None:
        decision = journal.decision(key)
        shown = decision is not None and decision.arguments_hash == call_print(
            call.name, call.arguments
        )
        if decision is not None and shown:
            return None if decision.approved else (decision.reason or "denied by a person")
        if journal.step(key, "paused") is not None:
            return None
        if journal.was_pending(key):
            return PAUSE
    answer = await ask()
    if answer is PAUSE and journal is None:
        raise pause_without_store(call.name)
    return answer


def pause_without_store(tool_name: str) -> ConfigurationError:
    """The error of a ``PAUSE`` in a run that no store journals."""
    return ConfigurationError(
        f"the approval hook returned PAUSE for a call of {tool_name!r}, but this run has no "
        "store to wait in: give the runtime one, Runtime(store=SQLiteStore(path)) (or "
        "MemoryStore() to resume in this process), so the run can pause and be resumed later"
    )


def _order(path: str) -> tuple[int, ...]:
    return tuple(int(n) for part in path.split("/") for n in part.split(".")) if path else ()
