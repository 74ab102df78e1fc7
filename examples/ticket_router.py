"""A support-ticket router: the model looks the order up, then picks the next step.

``exec(choices=...)`` makes the model's closing reply a decision among named
options: a function to run (its arguments chosen by the model), or a plain
value. The program finds the order ids in the ticket and names them in the
request (the default embedded 0.5B model looked up the example id of
``lookup_order``'s description, or made one up, on 1 of 10 generated tickets),
and the first reply must look the order up (``tool_choice="required"``):
left free, the model picked a step without looking. The
answer to a customer is written by the program from the order book, the model
only naming the order: its own answers copied the option's description or
misstated the dates. Runs on the embedded model by default, or on any
provider; ``--orders`` reads the order book from a JSON file::

    python examples/ticket_router.py "Order A-1001: I was charged twice!"
    python examples/ticket_router.py "Where is my order B-2002?" --orders orders.json
    python examples/ticket_router.py --model openai:gpt-4o-mini "I was charged twice"
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from openprogram import Runtime, ToolContext, agentic_function, function

ORDER_ID = re.compile(r"\b[A-Z]{1,3}-\d{3,6}\b", re.IGNORECASE)
"""What an order id looks like: "A-1001"."""

ORDERS = {"A-1001": "paid twice on 2026-11-02", "A-1002": "delivered on 2026-10-28"}
"""The order book used unless ``Runtime(deps={"orders": {...}})`` (``--orders``) gives one."""


@function(register_globally=False)
def lookup_order(order_id: str, ctx: ToolContext) -> str:
    """Look up an order's status.

    Args:
        order_id: The order id the ticket names, as it writes it.
    """
    return _orders(ctx.deps).get(order_id.strip().upper(), "no such order")


def refund(order_id: str, reason: str) -> str:
    """Refund an order.

    Args:
        order_id: The order to refund.
        reason: One sentence for the customer.
    """
    return f"refund issued for {order_id}: {reason}"


@agentic_function(register_globally=False)
def route_ticket(ticket: str, runtime: Runtime) -> object:
    """Route a support ticket to the right next step.

    Args:
        ticket: The customer's message.
    """
    orders = _orders(runtime.deps)

    def reply(order_id: str) -> str:
        """Answer the customer with the order's status (where it is, when it arrives).

        Args:
            order_id: The order the customer asks about.
        """
        status = orders.get(order_id.strip().upper(), "not found")
        return f"replied: your order {order_id.strip().upper()} is {status}."

    named = ORDER_ID.findall(ticket)  # the program reads the ids: the model misread them
    about = f" It names order {', '.join(named)}." if named else ""
    return runtime.exec(
        f"Support ticket: {ticket!r}.{about} Check the order if one is mentioned, then decide.",
        tools=[lookup_order],
        tool_choice="required",  # look the order up first; the decision comes after
        choices={
            "refund": refund,
            "reply": reply,
            "escalate": ("ESCALATED", "hand the ticket to a human agent"),
        },
    )


def _orders(deps: object) -> dict[str, str]:
    """The order book of ``Runtime(deps={"orders": ...})``, else ``ORDERS``."""
    book = deps.get("orders") if isinstance(deps, dict) else None
    return book if isinstance(book, dict) else ORDERS


def main() -> None:
    """Route one ticket from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("ticket", nargs="?", default="Order A-1001: I was charged twice!")
    parser.add_argument("--model", default=None)
    parser.add_argument("--orders", type=Path, help="a JSON file of order id -> status")
    args = parser.parse_args()
    orders = json.loads(args.orders.read_text(encoding="utf-8")) if args.orders else ORDERS
    with Runtime(args.model, deps={"orders": orders}):
        print(route_ticket(args.ticket))


if __name__ == "__main__":
    main()
