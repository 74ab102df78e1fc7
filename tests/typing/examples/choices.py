"""exec(choices=...), async_exec and decision.make: the answer is typed by the options' form."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, reveal_type

from pydantic import BaseModel

from openprogram import Runtime, agentic_function, decision, function
from openprogram.decision import DecisionMenu

runtime = Runtime("openai:gpt-4o-mini")


@function
def lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"id": order_id}


def refund(amount_cents: int, reason: str) -> str:
    """Refund the customer."""
    return f"refunded {amount_cents}: {reason}"


def reply(text: str) -> str:
    """Answer the customer."""
    return text


@agentic_function
def escalate(team: str, runtime: Runtime) -> str:
    """Hand the ticket over."""
    return runtime.exec(f"Brief the {team} team.")


def count_items(order_id: str) -> int:
    """Count the order's items."""
    return len(order_id)


async def notify(channel: str) -> bool:
    """Notify a channel."""
    return bool(channel)


@agentic_function
async def page_oncall(reason: str, runtime: Runtime) -> bool:
    """Page whoever is on call."""
    return bool(await runtime.async_exec(reason))


class Priority(enum.Enum):
    LOW = 1
    HIGH = 2


class Escalation(BaseModel):
    team: str


@dataclass
class Plan:
    steps: int


class Opaque:
    """A class of no known value kind: its values' answer is object."""


@agentic_function
def route(ticket: str, runtime: Runtime) -> str:
    """Every option returns str: the answer is a str, so returning it passes --strict."""
    return runtime.exec(f"Handle: {ticket}", tools=[lookup], choices=[refund, reply])


@agentic_function
def route_named(ticket: str, runtime: Runtime) -> str:
    """A dict of functions, tools and agentic functions, some described."""
    return runtime.exec(
        f"Handle: {ticket}",
        tools=[lookup],
        choices={"refund": (refund, "Refund in full."), "reply": reply, "escalate": escalate},
    )


@agentic_function
def pick_team(ticket: str, runtime: Runtime) -> str:
    """A dict of values: the answer has the values' type."""
    return runtime.exec(ticket, tools=[], choices={"billing": "billing-team", "tech": "tech-team"})


@agentic_function
async def route_async(ticket: str, runtime: Runtime) -> bool:
    """Async options are awaited: the answer is what they resolve to."""
    return await runtime.async_exec(ticket, choices=[notify, page_oncall])


@agentic_function
def refund_or_wait(ticket: str, runtime: Runtime) -> str:
    """A function returning str and a described str value: the answer is a str."""
    return runtime.exec(
        f"Handle: {ticket}",
        tools=[lookup],
        choices={"refund": refund, "wait": ("asked to wait", "Ask the customer to wait.")},
    )


@agentic_function
def route_mixed(ticket: str, runtime: Runtime) -> str:
    """Options returning str and int: the answer is their join, object, not a str."""
    return runtime.exec(ticket, choices=[refund, count_items])  # E: return-value


reveal_type(runtime.exec("Decide", choices=[refund, reply]))  # R: str
reveal_type(runtime.exec("Decide", choices=[refund, reply, escalate]))  # R: str
reveal_type(runtime.exec("Decide", choices=[(refund, "Refund."), (reply, "Answer.")]))  # R: str
reveal_type(runtime.exec("Decide", choices={"count": count_items}))  # R: int
# Any inside an option's type (lookup returns dict[str, Any]): mypy answers Any, its rule
# for overloaded calls whose arguments hold Any.
reveal_type(runtime.exec("Decide", choices={"look": lookup}))  # R: Any
# Options first bound to a name without a type are joined there (list[function]): object.
options = [refund, reply]
reveal_type(runtime.exec("Decide", choices=options))  # R: object
# A tuple keeps each item's type.
options_tuple = (refund, reply)
reveal_type(runtime.exec("Decide", choices=options_tuple))  # R: str
reveal_type(runtime.exec("Decide", choices=[refund, count_items]))  # R: object
reveal_type(runtime.exec("Decide", choices=[notify]))  # R: bool
reveal_type(runtime.exec("Decide", choices=[page_oncall]))  # R: bool
reveal_type(runtime.exec("Decide", choices=[notify, refund]))  # R: object
reveal_type(runtime.exec("Label", choices=["positive", "negative"]))  # R: str
reveal_type(runtime.exec("Label", choices=[Priority.LOW, Priority.HIGH]))  # R: choices.Priority
reveal_type(runtime.exec("Label", choices=[("yes", "Ship it."), ("no", "Hold it.")]))  # R: str
reveal_type(runtime.exec("Label", choices=[1, None]))  # R: int | None
reveal_type(runtime.exec("Label", choices=[Priority.LOW, 3]))  # R: choices.Priority | int
reveal_type(runtime.exec("Plan", choices={"quick": Plan(1), "full": Plan(5)}))  # R: choices.Plan
reveal_type(runtime.exec("Plan", choices={"a": Opaque(), "b": Opaque()}))  # R: object
reveal_type(runtime.exec("Route", choices=[("Hand to a team.", Escalation)]))  # R: dict[str, Any]
reveal_type(runtime.exec("Route", choices={"plan": ("Make a plan.", Plan)}))  # R: dict[str, Any]
# A class is a value option (returned, not called); a dict names it.
reveal_type(runtime.exec("Kind", choices={"scale": Priority}))  # R: type[choices.Priority]
reveal_type(runtime.exec("Kind", choices={"scale": (Priority, "The scale.")}))  # R: type[choices.Priority]  # fmt: skip
# Functions mixed with values: what the functions return or the values' type.
reveal_type(runtime.exec("Decide", choices=[refund, "wait"]))  # R: str
reveal_type(runtime.exec("Decide", choices={"refund": refund, "wait": ("asked to wait", "Ask.")}))  # R: str  # fmt: skip
reveal_type(runtime.exec("Decide", choices=[(refund, "Refund."), "wait", escalate]))  # R: str
reveal_type(runtime.exec("Decide", choices=[refund, 42]))  # R: str | int
reveal_type(runtime.exec("Decide", choices=[count_items, None]))  # R: int | None
reveal_type(runtime.exec("Decide", choices=[refund, Priority.LOW]))  # R: str | choices.Priority
reveal_type(runtime.exec("Decide", choices=[notify, "later"]))  # R: bool | str
reveal_type(runtime.exec("Decide", choices=[refund, count_items, "wait"]))  # R: object
reveal_type(runtime.exec("Decide", choices=[refund, Escalation]))  # R: object
reveal_type(runtime.exec("Decide", choices=[refund, ("Hand over.", Escalation), 42]))  # R: object
reveal_type(runtime.exec("Decide", choices=DecisionMenu.of(["a", "b"])))  # R: Any
reveal_type(runtime.exec("Decide", choices=[refund], response_format=None))  # R: str
reveal_type(decision.make("Ship?", ["yes", "no"], runtime=runtime))  # R: str
reveal_type(decision.make("Handle", [refund, reply, escalate]))  # R: str
reveal_type(decision.make("Handle", [refund, count_items]))  # R: object
reveal_type(decision.make("Handle", [refund, "wait"]))  # R: str
runtime.exec("Decide", choices=42)  # E: arg-type
runtime.exec("Decide", choices={"yes", "no"})  # E: arg-type
runtime.exec("Decide", choices=["yes"], response_format=Escalation)  # E: arg-type
wrong: str = runtime.exec("Decide", choices=[refund, count_items])  # E: assignment


async def decide_async() -> str:
    reveal_type(await runtime.async_exec("Decide", choices=[refund, reply]))  # R: str
    reveal_type(await runtime.async_exec("Decide", choices=[notify]))  # R: bool
    reveal_type(await decision.async_make("Ship?", ["yes", "no"]))  # R: str
    reveal_type(await runtime.async_exec("Decide", choices=[notify, ("later", "Wait.")]))  # R: bool | str  # fmt: skip
    reveal_type(await decision.async_make("Handle", [refund, "wait"]))  # R: str
    return await runtime.async_exec("Decide", choices={"a": refund, "b": escalate})
