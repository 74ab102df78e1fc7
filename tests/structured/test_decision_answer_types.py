"""At run time, exec(choices=...) answers what its overloads say it does, form by form.

``tests/typing/examples/choices.py`` pins the types mypy gives; this checks the
values behind them, for the forms whose answer is not the option itself.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import Runtime, agentic_function, function
from openprogram.testing import ScriptedProvider


class Priority(enum.Enum):
    LOW = 1
    HIGH = 2


class Escalation(BaseModel):
    team: str


def refund(amount_cents: int) -> str:
    """Refund the customer."""
    return f"refunded {amount_cents}"


async def notify(channel: str) -> bool:
    """Notify a channel."""
    return channel == "ops"


@function(register_globally=False)
def count_items(order_id: str) -> int:
    """Count an order's items."""
    return len(order_id)


@agentic_function(register_globally=False)
async def page_oncall(reason: str, runtime: Runtime) -> bool:
    """Page whoever is on call."""
    return reason == "outage"


CASES: list[tuple[str, Any, str, Any]] = [
    ("a class is returned, not called", {"scale": Priority}, '{"call": "scale"}', Priority),
    (
        "a described class too",
        {"scale": (Priority, "The scale.")},
        '{"call": "scale"}',
        Priority,
    ),
    (
        "an async function's result is awaited",
        [notify],
        '{"call": "notify", "args": {"channel": "ops"}}',
        True,
    ),
    (
        "an async agentic function's too",
        [page_oncall],
        '{"call": "page_oncall", "args": {"reason": "outage"}}',
        True,
    ),
    (
        "a tool gives its function's result",
        [count_items],
        '{"call": "count_items", "args": {"order_id": "A17"}}',
        3,
    ),
    (
        "a described function gives its result",
        [(refund, "Refund in full.")],
        '{"call": "refund", "args": {"amount_cents": 5}}',
        "refunded 5",
    ),
    (
        "a described value gives the value",
        [("yes", "Ship it."), ("no", "Hold it.")],
        '{"call": "no"}',
        "no",
    ),
    (
        "a schema option gives a dict",
        [("Hand to a team.", Escalation)],
        '{"call": "Escalation", "args": {"team": "billing"}}',
        {"decision": "Escalation", "team": "billing"},
    ),
]


@pytest.mark.parametrize(
    ("options", "pick", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_answer_is_what_the_overloads_type(options: Any, pick: str, expected: Any) -> None:
    answer = Runtime(ScriptedProvider([pick])).exec("Decide.", tools=[], choices=options)
    assert answer == expected
    assert type(answer) is type(expected)
