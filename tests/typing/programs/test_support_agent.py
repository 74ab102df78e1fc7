"""A support agent on the shipped fakes, written the way a user would, and type-checked.

The desk agent gets a ticket and hands the order to a sub-agent,
``investigate``: an agentic function whose own exec looks the order up and
tracks the parcel, then answers with a pydantic ``Finding``. The desk turns
the finding into a pydantic ``Resolution``, and a last decision tells the
customer (a function and a described value, both giving a ``str``). The
model is a ``FunctionProvider`` playing each loop from what the request holds.

Besides running here, this file must pass ``mypy --strict`` with no error
(``tests/typing/test_typing_examples.py``): the nested answers, the decision
returned from a ``-> str`` function and ``request.messages[-1].text`` are
typed as written.
"""

from __future__ import annotations

import json
import re
from typing import Literal

import pydantic

from openprogram import Runtime, agentic_function, function
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.testing import FunctionProvider, call

TOTALS = {"A-17": 1250, "B-42": 4900}
CARRIER = {"A-17": "lost in transit", "B-42": "out for delivery"}


class Finding(pydantic.BaseModel):
    """What the sub-agent found out about an order."""

    order_id: str
    total_cents: int
    lost: bool


class Resolution(pydantic.BaseModel):
    """What the desk does about the ticket."""

    action: Literal["refund", "wait"]
    amount_cents: int
    note: str


desk = Registry()


@function(registry=desk)
def lookup_order(order_id: str) -> dict[str, int]:
    """Look an order up.

    Args:
        order_id: The order number, e.g. "A-17".
    """
    return {"total_cents": TOTALS[order_id]}


@function(registry=desk)
def track_parcel(order_id: str) -> str:
    """Where the carrier says the parcel is.

    Args:
        order_id: The order number, e.g. "A-17".
    """
    return CARRIER[order_id]


@agentic_function(registry=desk, system="You investigate orders. Answer with the facts only.")
def investigate(order_id: str, runtime: Runtime) -> Finding:
    """Find out what happened to an order.

    Args:
        order_id: The order number, e.g. "A-17".
    """
    return runtime.exec(
        f"Investigate order {order_id}.",
        tools=[lookup_order, track_parcel],
        response_format=Finding,
    )


def handle_ticket(ticket: str, runtime: Runtime) -> Resolution:
    """The desk: investigate through the sub-agent, then resolve."""
    return runtime.exec(f"Ticket: {ticket}", tools=[investigate], response_format=Resolution)


def send_email(body: str) -> str:
    """Email the customer.

    Args:
        body: The email text.
    """
    return f"emailed: {body}"


def tell_customer(resolution: Resolution, runtime: Runtime) -> str:
    """The last step: every option gives a str, so the answer is a str."""
    return runtime.exec(
        f"Tell the customer: {resolution.note}",
        tools=[],
        choices={"email": send_email, "escalate": ("escalated", "Hand over to a person.")},
    )


def desk_model(request: ProviderRequest) -> str | ToolCall | list[ToolCall]:
    """A model for every loop of the program, reading what each request holds."""
    offered = {tool["name"] for tool in request.tools}
    last = request.messages[-1]
    if "investigate" in offered:  # the desk's loop
        if not isinstance(last, ToolResultMessage):
            order = re.search(r"[A-Z]-\d+", last.text)
            return call("investigate", order_id=order[0] if order else "")
        finding = Finding.model_validate_json(last.text)
        action = "refund" if finding.lost else "wait"
        amount = finding.total_cents if finding.lost else 0
        note = f"{action} for {finding.order_id}"
        return json.dumps({"action": action, "amount_cents": amount, "note": note})
    if "lookup_order" in offered:  # the sub-agent's loop
        order = re.findall(r"[A-Z]-\d+", request.messages[0].text)[-1]
        if not isinstance(last, ToolResultMessage):
            return [call("lookup_order", order_id=order), call("track_parcel", order_id=order)]
        looked_up, tracked = request.messages[-2:]
        total = int(json.loads(looked_up.text)["total_cents"])
        lost = "lost" in tracked.text
        return json.dumps({"order_id": order, "total_cents": total, "lost": lost})
    if "refund" in last.text:  # the last decision
        return '{"call": "email", "args": {"body": "Your refund is on its way."}}'
    return '{"call": "escalate"}'


def test_a_lost_parcel_is_refunded_in_full() -> None:
    provider = FunctionProvider(desk_model)
    runtime = Runtime(provider)
    resolution = handle_ticket("Order A-17 never arrived.", runtime)
    assert resolution == Resolution(action="refund", amount_cents=1250, note="refund for A-17")
    assert tell_customer(resolution, runtime) == "emailed: Your refund is on its way."


def test_the_sub_agent_works_with_its_own_menu_and_prompt() -> None:
    provider = FunctionProvider(desk_model)
    handle_ticket("Where is B-42?", Runtime(provider))
    menus = [sorted(t["name"] for t in request.tools) for request in provider.requests]
    assert menus == [
        ["investigate"],
        ["lookup_order", "track_parcel"],
        ["lookup_order", "track_parcel"],
        ["investigate"],
    ]
    assert provider.requests[1].system == "You investigate orders. Answer with the facts only."
    finding = Finding.model_validate_json(provider.requests[3].messages[-1].text)
    assert finding == Finding(order_id="B-42", total_cents=4900, lost=False)


def test_a_parcel_on_its_way_waits_and_is_escalated() -> None:
    runtime = Runtime(FunctionProvider(desk_model))
    resolution = handle_ticket("B-42 is late.", runtime)
    assert (resolution.action, resolution.amount_cents) == ("wait", 0)
    assert tell_customer(resolution, runtime) == "escalated"
