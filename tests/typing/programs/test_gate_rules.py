"""Our own gating rules for a support desk, property-tested with hypothesis, and type-checked.

Two rules: money never reaches a channel customers write in (``chat``,
``email``), and closing an account is offered only to a run that came
through the staff ``console`` alone. Hypothesis draws the policies a caller
could pass (``policies_for``) and looks for a counterexample; a last property
drives the real tool loop on the shipped fakes, with a channel path drawn for
an outer exec and an agentic function's exec nested in it, and checks what the
inner model is offered.

Besides running here, this file must pass ``mypy --strict`` with no error
(``tests/typing/test_typing_examples.py``).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram import Runtime, agentic_function, function
from openprogram.gates import GateContext, Policy, resolve
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.testing import FunctionProvider, call
from openprogram.testing.strategies import policies_for

CUSTOMER_CHANNELS = frozenset({"chat", "email"})
CHANNELS = ["chat", "email", "console", "cron"]

desk = Registry()


@function(registry=desk, toolset="money", unsafe_in=sorted(CUSTOMER_CHANNELS))
def refund(order_id: str, amount_cents: int) -> str:
    """Refund an order.

    Args:
        order_id: The order number.
        amount_cents: How much to refund, in cents.
    """
    return f"refunded {amount_cents} on {order_id}"


def console_only(ctx: GateContext) -> bool:
    """Every channel the run came through is the staff console."""
    return set(ctx.sources) == {"console"}


@function(registry=desk, toolset="accounts", can_use=console_only)
def close_account(customer_id: str) -> str:
    """Close a customer's account.

    Args:
        customer_id: The customer.
    """
    return f"closed {customer_id}"


@function(registry=desk, toolset="read")
def read_order(order_id: str) -> str:
    """Read an order.

    Args:
        order_id: The order number.
    """
    return f"{order_id}: delivered"


@settings(max_examples=200, deadline=None)
@given(policies_for(desk, sources=CHANNELS))
def test_money_never_reaches_a_customer_channel(policy: Policy) -> None:
    if policy.sources & CUSTOMER_CHANNELS:
        assert "refund" not in resolve(desk, policy).offered_names


@settings(max_examples=200, deadline=None)
@given(policies_for(desk, sources=CHANNELS))
def test_closing_an_account_needs_the_console_all_the_way(policy: Policy) -> None:
    if "close_account" in resolve(desk, policy).offered_names:
        assert policy.sources == {"console"}


def test_the_rules_catch_a_counterexample() -> None:
    """Not vacuous: the console alone gets both tools, a chat nested in it neither."""
    console = resolve(desk, Policy(source="console")).offered_names
    nested = resolve(desk, Policy(source="chat", inherited_sources=["console"])).offered_names
    assert {"refund", "close_account"} <= set(console)
    assert not {"refund", "close_account"} & set(nested)


@agentic_function(registry=desk, as_tool=True)
def handle_inner(channel: str, runtime: Runtime) -> str:
    """Serve a request that arrived on another channel, inside this run.

    Args:
        channel: The channel the inner request came from.
    """
    return runtime.exec("Help the customer.", tools_source=channel)


def inner_menus(outer: str, inner: str) -> list[list[str]]:
    """Run an exec on channel ``outer`` whose tool serves ``inner``; the menus each model saw."""

    def model(request: ProviderRequest) -> str | ToolCall:
        last = request.messages[-1]
        if request.messages[0].text != "A ticket.":  # the nested exec
            return "helped"
        if isinstance(last, ToolResultMessage):
            return f"done: {last.text}"
        return call("handle_inner", channel=inner)

    provider = FunctionProvider(model)
    Runtime(provider, registry=desk).exec("A ticket.", tools_source=outer)
    return [sorted(t["name"] for t in request.tools) for request in provider.requests]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CHANNELS), st.sampled_from(CHANNELS))
def test_a_nested_exec_keeps_the_outer_channels_rules(outer: str, inner: str) -> None:
    first, nested, last = inner_menus(outer, inner)
    assert first == last
    assert set(nested) <= set(first)  # nesting only narrows
    if {outer, inner} & CUSTOMER_CHANNELS:
        assert "refund" not in nested
    if {outer, inner} != {"console"}:
        assert "close_account" not in nested
    else:
        assert {"refund", "close_account"} <= set(nested)
