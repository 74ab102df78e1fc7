"""L4 availability: ``requires_env``, ``check_fn()`` and ``can_use(ctx)`` must all agree.

``requires_env`` depends only on the environment, so resolution caches it;
the two predicates may change their answer at any time (a service goes
down, a user logs out), so they run again on every resolution. A predicate
that raises hides its tool (fail closed) and the exception text becomes the
reason. ``Policy(only_available=False)`` switches the whole layer off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openprogram.gates._types import L4_AVAILABILITY, PASS, GateInput, Rejection, Verdict
from openprogram.tools import Tool

__all__ = ["availability_gate", "env_gate", "has_predicates", "predicate_gate"]


def availability_gate(tool: Tool, given: GateInput) -> Verdict:
    """The whole layer: environment first (cheap), then the predicates."""
    return env_gate(tool, given) or predicate_gate(tool, given)


def env_gate(tool: Tool, given: GateInput) -> Verdict:
    """Reject tools whose ``requires_env`` variables are unset or empty."""
    if not tool.requires_env or not given.policy.only_available:
        return PASS
    env = given.context.env
    missing = [var for var in tool.requires_env if not env.get(var)]
    if not missing:
        return PASS
    return Rejection(
        L4_AVAILABILITY,
        f"{tool.name!r} requires the environment variable(s) {', '.join(missing)}, unset or "
        "empty; set them to enable it",
    )


def has_predicates(tool: Tool) -> bool:
    """Whether the tool has a ``check_fn`` or ``can_use`` (answers that can change any time)."""
    return tool.check_fn is not None or tool.can_use is not None


def predicate_gate(tool: Tool, given: GateInput) -> Verdict:
    """Run ``check_fn()`` then ``can_use(ctx)``; falsy or raising rejects."""
    if not given.policy.only_available:
        return PASS
    if tool.check_fn is not None:
        verdict = _ask(tool, "check_fn()", tool.check_fn)
        if verdict is not None:
            return verdict
    if tool.can_use is not None:
        return _ask(tool, "can_use(ctx)", tool.can_use, given.context)
    return PASS


def _ask(tool: Tool, what: str, predicate: Callable[..., Any], *args: Any) -> Verdict:
    try:
        answer = predicate(*args)
    except Exception as exc:  # noqa: BLE001 - a raising predicate fails closed (L4)
        # closed; the text is kept in the reason so explain() shows what went wrong
        return Rejection(
            L4_AVAILABILITY,
            f"{tool.name!r} is hidden because its {what} raised {type(exc).__name__}: {exc}",
        )
    if answer:
        return PASS
    return Rejection(
        L4_AVAILABILITY, f"{tool.name!r} is unavailable: its {what} returned {answer!r}"
    )
