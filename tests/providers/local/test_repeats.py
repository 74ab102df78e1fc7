"""A reply that only repeats calls already made is asked again without the repeated functions.

After a tool result this small model tends to call the same function again
instead of going on. The local provider then asks again with that function
left out of the prompt and the grammar (the others stay, so a look-up can be
followed by an act); with no function left the re-ask is for a plain answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openprogram import Runtime
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage

from .._helpers import drive, fail, request
from .._server import Reply, WireServer
from ._gbnf import accepts
from ._llama import call_chunks, completion, names, provider

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
LOOKUP = {"name": "lookup_order", "description": "Look an order up.", "parameters": ORDER}
REFUND = {"name": "refund_order", "description": "Refund an order.", "parameters": ORDER}


def listed(*pairs: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"name": name, "arguments": args} for name, args in pairs])


def calls(*pairs: tuple[str, dict[str, Any]]) -> Reply:
    """A completion whose text is a JSON list of calls."""
    return Reply(body=completion(listed(*pairs)))


def made(call_id: str, name: str, result: str) -> tuple[AssistantMessage, ToolResultMessage]:
    """History: a call of ``name`` for order A-1 and its result."""
    call = ToolCall(id=call_id, name=name, arguments={"order_id": "A-1"})
    return (
        AssistantMessage((call,), stop_reason="tool_calls"),
        ToolResultMessage(call_id=call_id, tool_name=name, content=result),
    )


LOOKED_UP = ("Refund A-1 if it was charged twice.", *made("c1", "lookup_order", "charged twice"))
LOOKUP_AGAIN = ("lookup_order", {"order_id": "A-1", "note": "again"})  # same required args
REFUND_A1 = ("refund_order", {"order_id": "A-1"})


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_repeated_look_up_is_asked_again_without_it_and_the_act_follows(
    wire: WireServer, stream: bool
) -> None:
    again = call_chunks(listed(LOOKUP_AGAIN)) if stream else calls(LOOKUP_AGAIN)
    wire.push(again, call_chunks(listed(REFUND_A1)) if stream else calls(REFUND_A1))
    run = drive(provider(wire, stream=stream), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    (call,) = run.message.tool_calls
    assert (call.name, dict(call.arguments)) == REFUND_A1
    assert "repeats calls already made" in run.retries[0].error.message
    first, second = (seen.json for seen in wire.requests)
    assert names(first) == ["lookup_order", "refund_order"]
    assert names(second) == ["refund_order"]  # the repeated function is left out, the other stays
    assert accepts(second["grammar"], listed(REFUND_A1))
    assert not accepts(second["grammar"], listed(LOOKUP_AGAIN))
    assert accepts(second["grammar"], "Refunded.")  # an answer stays possible
    assert second["messages"] == first["messages"]  # the same conversation, asked again


def test_with_no_function_left_the_re_ask_is_for_an_answer(wire: WireServer) -> None:
    history = (*LOOKED_UP, *made("c2", "refund_order", "refunded"))
    refund_again = ("refund_order", {"order_id": "A-1"})
    wire.push(calls(LOOKUP_AGAIN), calls(refund_again), Reply(body=completion("A-1 is refunded.")))
    run = drive(provider(wire), request(*history, tools=(LOOKUP, REFUND)))
    assert run.message.text == "A-1 is refunded."
    assert run.message.tool_calls == []
    first, second, third = (seen.json for seen in wire.requests)
    assert names(first) == ["lookup_order", "refund_order"]
    assert names(second) == ["refund_order"]
    assert "chat_template_kwargs" not in third  # answer-only: no function listed
    assert third["grammar"].startswith("root ::= text\n")
    assert not accepts(third["grammar"], listed(REFUND_A1))
    assert [r.error.message.count("repeats calls already made") for r in run.retries] == [1, 1]


def test_a_cut_call_and_two_repeats_get_three_re_asks_and_no_more(wire: WireServer) -> None:
    notify = {"name": "notify", "description": "Tell the customer.", "parameters": ORDER}
    cut = completion('[{"name": "refund_order", "arguments": {"ord')
    cut["choices"][0]["finish_reason"] = "length"
    history = (*LOOKED_UP, *made("c2", "refund_order", "refunded"))
    # The fourth reply is broken too: the provider gives up instead of asking a fourth time.
    wire.push(
        Reply(body=cut), calls(LOOKUP_AGAIN), calls(REFUND_A1), Reply(body=completion("[oops"))
    )
    options = {"extra_body": {"max_tokens": 16}}
    run = fail(provider(wire, **options), request(*history, tools=(LOOKUP, REFUND, notify)))
    assert len(run.retries) == 3
    bodies = [seen.json for seen in wire.requests]
    assert [b["max_tokens"] for b in bodies] == [16, 64, 64, 64]
    assert [names(b) for b in bodies] == [
        ["lookup_order", "refund_order", "notify"],
        ["lookup_order", "refund_order", "notify"],  # the cut reply: more room, same list
        ["refund_order", "notify"],
        ["notify"],  # hidden functions stay hidden on the next re-ask
    ]
    assert "not valid JSON" in run.failure.message


def test_an_exec_looks_up_then_acts_after_a_repeat_and_answers(wire: WireServer) -> None:
    ran: list[tuple[str, str]] = []

    def lookup_order(order_id: str, note: str = "") -> str:
        """Look an order up."""
        ran.append(("lookup_order", order_id))
        return f"order {order_id}: charged twice"

    def refund_order(order_id: str, note: str = "") -> str:
        """Refund an order."""
        ran.append(("refund_order", order_id))
        return f"refunded {order_id}"

    wire.push(
        calls(("lookup_order", {"order_id": "A-1"})),
        calls(LOOKUP_AGAIN),
        calls(REFUND_A1),
        Reply(body=completion("A-1 was charged twice; it is refunded.")),
    )
    rt = Runtime(provider(wire))
    answer = rt.exec("Refund A-1 if it was charged twice.", tools=[lookup_order, refund_order])
    assert answer == "A-1 was charged twice; it is refunded."
    assert ran == [("lookup_order", "A-1"), ("refund_order", "A-1")]  # the repeat never ran
    bodies = [seen.json for seen in wire.requests]
    assert [names(b) for b in bodies] == [
        ["lookup_order", "refund_order"],
        ["lookup_order", "refund_order"],
        ["refund_order"],  # the re-ask of the repeat
        ["lookup_order", "refund_order"],  # a new turn offers every tool again
    ]
    tool_results = [m for m in bodies[3]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["order A-1: charged twice", "refunded A-1"]
