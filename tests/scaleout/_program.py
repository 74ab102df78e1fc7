"""A 3-level refund program for worker processes, and the log its steps leave.

Imported by the tests and by ``openprogram worker --module tests.scaleout._program
--runtime tests.scaleout._program:runtime``. The root exec (``refund(order, amount)``
content) asks the fake model, which calls the agentic function ``handle_order``;
its exec's model calls ``lookup_order`` (idempotent) and ``issue_refund``
(``side_effect``), then answers; the root answers with its answer. A refund
over 100 EUR pauses for a manager (the approval hook).

Every model turn and tool body appends one line to ``$SCALEOUT_LOG`` (when
set; ``O_APPEND``, written before the work, so a killed worker's steps count):
the process id, what ran, the run and the step's key.
"""

from __future__ import annotations

import os
import time
from typing import Any

from openprogram import PAUSE, Runtime, ToolContext, agentic_function, function
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.testing import FunctionProvider, call

TOOLS = Registry()
"""The program's own registry (the default one stays as other tests expect it)."""

LOG_VAR = "SCALEOUT_LOG"
BODY_S = 0.01
"""How long each tool body and model turn works (so a kill lands inside one)."""


def content(order: str, amount: int) -> str:
    """The root exec's content for one refund."""
    return f"Refund order {order}: {amount} EUR."


def _log(what: str, key: str) -> None:
    path = os.environ.get(LOG_VAR)
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{os.getpid()}\t{what}\t{key}\n".encode())
    finally:
        os.close(fd)


@function(registry=TOOLS)
def lookup_order(order: str, ctx: ToolContext) -> str:
    """Look an order up.

    Args:
        order: The order's name.
    """
    _log("lookup_order", ctx.idempotency_key or "")
    time.sleep(BODY_S)
    return f"order {order}: paid by card"


@function(effect="side_effect", registry=TOOLS)
def issue_refund(order: str, amount: int, ctx: ToolContext) -> str:
    """Refund an order (money leaves the company: never twice).

    Args:
        order: The order's name.
        amount: Euros to refund.
    """
    _log("issue_refund", ctx.idempotency_key or "")
    time.sleep(BODY_S)
    return f"refunded {amount} EUR for order {order}"


@agentic_function(registry=TOOLS)
def handle_order(order: str, amount: int, runtime: Runtime) -> str:
    """Handle the refund of one order.

    Args:
        order: The order's name.
        amount: Euros to refund.
    """
    return runtime.exec(f"Handle order {order}: {amount} EUR.", tools=[lookup_order, issue_refund])


def model(request: ProviderRequest) -> Any:
    """The fake model: a function of the request."""
    first = request.messages[0].text
    turn = 1 + sum(isinstance(m, AssistantMessage) for m in request.messages)
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    words = first.rstrip(".").split()
    order, amount = words[2].rstrip(":"), int(words[3])
    _log("model", f"{first[:6]}{order}/{turn}")
    time.sleep(BODY_S)
    if first.startswith("Handle order"):
        if not results:
            return [
                call("lookup_order", order=order),
                call("issue_refund", order=order, amount=amount),
            ]
        return f"Order {order} handled."
    if not results:
        return [call("handle_order", order=order, amount=amount)]
    return f"Done: {results[0].content}"


def approval(tool_call: ToolCall) -> Any:
    """A manager approves refunds over 100 EUR."""
    if tool_call.name == "issue_refund" and tool_call.arguments.get("amount", 0) > 100:
        return PAUSE
    return None


def runtime(store: Any) -> Runtime:
    """The program's runtime on ``store`` (the workers' ``--runtime``)."""
    return Runtime(FunctionProvider(model), store=store, approval=approval, registry=TOOLS)
