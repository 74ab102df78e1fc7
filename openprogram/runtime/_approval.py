"""Approval: the hook consulted before a tool the model picked runs.

``approval(call) -> None`` allows, a string denies with that reason, ``PAUSE``
makes the call wait for a person (a durable run pauses; docs/durable.md). A
tool that ``requires_approval`` runs only when a hook allows it: with no hook,
or a hook or rule that raises or answers nonsense, the call is denied (fail
closed). The executor asks before every tool call, and the decision finale
before running a picked option, so no path skips it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from openprogram import _threads
from openprogram._pause import PAUSE, Pause
from openprogram.messages import ToolCall
from openprogram.tools import ApprovalRule

__all__ = ["Approval", "approval_denial"]

Approval: TypeAlias = Callable[[ToolCall], "str | Pause | Awaitable[str | Pause | None] | None"]
"""``approval(call) -> None`` allows, a string denies with that reason, ``PAUSE`` waits."""


async def approval_denial(
    call: ToolCall, rule: ApprovalRule, hook: Approval | None
) -> str | Pause | None:
    """``None`` when the call may run, ``PAUSE`` when the hook pauses it, else the reason it may
    not (failing closed).

    Args:
        call: The call about to run.
        rule: The tool's ``requires_approval``.
        hook: The runtime's approval hook, if any (consulted for every call).
    """
    try:
        needed = rule(call.arguments) if callable(rule) else rule
    except Exception as exc:  # noqa: BLE001 - a raising approval rule denies (fail closed)
        return f"its approval rule raised {type(exc).__name__}: {exc} (denied to be safe)"
    if hook is None:
        if not needed:
            return None
        why = f" ({needed})" if isinstance(needed, str) else ""
        return (
            f"it requires approval{why} and no approval hook is configured "
            "(set Runtime(approval=...) to review such calls)"
        )
    try:
        if inspect.iscoroutinefunction(hook):
            verdict = await hook(call)
        else:  # a sync hook may block (ask a human): keep it off the event loop thread
            verdict = await _threads.run_in_thread(hook, call)
            if inspect.isawaitable(verdict):
                verdict = await verdict
    except Exception as exc:  # noqa: BLE001 - a raising approval hook denies (fail closed)
        return f"the approval hook raised {type(exc).__name__}: {exc} (denied to be safe)"
    if verdict is None or verdict is PAUSE:
        return verdict
    if isinstance(verdict, str):
        return verdict or "denied by the approval hook"
    return (
        f"the approval hook returned {verdict!r}, not None or a reason string (or PAUSE); "
        "denied to be safe"
    )
