"""examples/ticket_router.py: the model's closing reply picks the next step among choices."""

from __future__ import annotations

import pytest
from _example_loader import load_example

from openprogram import DecisionError, Runtime
from openprogram.testing import ScriptedProvider, call

router = load_example("ticket_router")

TICKET = "Order A-1001: I was charged twice!"


def route(*replies: object) -> tuple[object, ScriptedProvider]:
    provider = ScriptedProvider(list(replies))
    return router.route_ticket(TICKET, runtime=Runtime(provider)), provider


def test_a_refund_runs_the_refund_function_with_the_models_arguments() -> None:
    decision = '{"call": "refund", "args": {"order_id": "A-1001", "reason": "You paid twice."}}'
    result, provider = route(call("lookup_order", order_id="a-1001"), f"Refunding. {decision}")
    assert result == "refund issued for A-1001: You paid twice."
    looked_up = provider.requests[1].messages[-1]
    assert looked_up.content == "paid twice on 2026-11-02"


def test_escalate_returns_its_value() -> None:
    result, _ = route('{"call": "escalate"}')
    assert result == "ESCALATED"


def test_reply_answers_the_customer_with_the_status_from_the_order_book() -> None:
    result, _ = route('{"call": "reply", "args": {"order_id": "a-1002"}}')
    assert result == "replied: your order A-1002 is delivered on 2026-10-28."


def test_the_order_book_comes_from_the_runtimes_deps() -> None:
    orders = {"Q-7": "shipped on 2026-03-01, arriving 2026-03-09"}
    provider = ScriptedProvider(
        [call("lookup_order", order_id="Q-7"), '{"call": "reply", "args": {"order_id": "Q-7"}}']
    )
    runtime = Runtime(provider, deps={"orders": orders})
    result = router.route_ticket("Where is Q-7?", runtime=runtime)
    assert result == "replied: your order Q-7 is shipped on 2026-03-01, arriving 2026-03-09."
    assert provider.requests[1].messages[-1].content == orders["Q-7"]


def test_the_first_reply_must_look_the_order_up() -> None:
    _, provider = route(call("lookup_order", order_id="A-1001"), '{"call": "escalate"}')
    assert provider.requests[0].tool_choice == "required"


def test_the_model_is_told_every_option() -> None:
    _, provider = route('{"call": "escalate"}')
    prompt = str(provider.requests[0].system) + str(provider.requests[0].messages)
    for option in ("refund", "reply", "escalate", "hand the ticket to a human agent"):
        assert option in prompt
    assert [t["name"] for t in provider.requests[0].tools] == ["lookup_order"]


def test_a_bad_pick_is_asked_again_once_then_fails() -> None:
    result, provider = route('{"call": "cancel"}', '{"call": "escalate"}')
    assert result == "ESCALATED"
    assert len(provider.requests) == 2
    with pytest.raises(DecisionError):
        route('{"call": "cancel"}', '{"call": "delete_account"}')


def test_the_request_names_the_order_ids_the_ticket_holds() -> None:
    provider = ScriptedProvider(['{"call": "escalate"}'])
    router.route_ticket("I paid twice for r-5968 and B-12", runtime=Runtime(provider))
    asked = str(provider.requests[0].messages[0].content)
    assert "It names order r-5968." in asked
