"""A support-ticket router: the model reads the ticket, then picks the next step.

``exec(choices=...)`` makes the model's closing reply a decision among named
options: a function to run (its arguments chosen by the model), or a plain
value. Runs against any provider::

    python examples/ticket_router.py --model openai:gpt-4o-mini "I was charged twice"
"""

from __future__ import annotations

import argparse

from openprogram import Runtime, agentic_function, function

_ORDERS = {"A-1001": "paid twice on 2026-11-02", "A-1002": "delivered"}


@function(register_globally=False)
def lookup_order(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: Order id like "A-1001".
    """
    return _ORDERS.get(order_id.strip().upper(), "no such order")


def refund(order_id: str, reason: str) -> str:
    """Refund an order.

    Args:
        order_id: The order to refund.
        reason: One sentence for the customer.
    """
    return f"refund issued for {order_id}: {reason}"


def reply(message: str) -> str:
    """Answer the customer directly.

    Args:
        message: The answer to send.
    """
    return f"replied: {message}"


@agentic_function(register_globally=False)
def route_ticket(ticket: str, runtime: Runtime) -> object:
    """Route a support ticket to the right next step.

    Args:
        ticket: The customer's message.
    """
    return runtime.exec(
        f"Support ticket: {ticket!r}. Check the order if one is mentioned, then decide.",
        tools=[lookup_order],
        choices={
            "refund": refund,
            "reply": reply,
            "escalate": ("ESCALATED", "hand the ticket to a human agent"),
        },
    )


def main() -> None:
    """Route one ticket from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("ticket", nargs="?", default="Order A-1001: I was charged twice!")
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    with Runtime(args.model):
        print(route_ticket(args.ticket))


if __name__ == "__main__":
    main()
