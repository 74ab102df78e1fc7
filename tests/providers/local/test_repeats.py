"""A reply that only repeats calls already made is asked again for an answer.

After a tool result this small model tends to call the same function again
instead of going on. The local provider then asks again with no function
listed and a text-only grammar; in a decision the options stay listed, since
the answer must be a pick (calling ``refund`` after the look-up, say).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openprogram import Runtime
from openprogram.providers.local import LOCAL_MODEL, PROFILES

from .._helpers import drive, fail, request
from .._server import Reply, WireServer
from ._gbnf import accepts
from ._llama import answered, call_chunks, completion, names, provider

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
LOOKUP_AGAIN = ("lookup_order", {"order_id": "A-1", "note": "again"})  # same required args
REFUND_A1 = ("refund_order", {"order_id": "A-1"})


def listed(*pairs: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"name": name, "arguments": args} for name, args in pairs])


def calls(*pairs: tuple[str, dict[str, Any]]) -> Reply:
    """A completion whose text is a JSON list of calls."""
    return Reply(body=completion(listed(*pairs)))


LOOKED_UP = answered(
    "Refund A-1 if it was charged twice.", "lookup_order", {"order_id": "A-1"}, "charged twice"
)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_repeat_beside_other_tools_is_asked_again_for_an_answer(
    wire: WireServer, stream: bool
) -> None:
    again = call_chunks(listed(LOOKUP_AGAIN)) if stream else calls(LOOKUP_AGAIN)
    wire.push(again, Reply(body=completion("A-1 was charged twice.")))
    run = drive(provider(wire, stream=stream), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    assert run.message.text == "A-1 was charged twice."
    assert "repeats calls already made" in run.retries[0].error.message
    first, second = (seen.json for seen in wire.requests)
    assert names(first) == ["lookup_order", "refund_order"]
    assert "chat_template_kwargs" not in second  # no function, not even the unrepeated one
    assert not accepts(second["grammar"], listed(REFUND_A1))
    bare = json.dumps({"name": "refund_order", "arguments": {"order_id": "A-1"}})
    assert not accepts(second["grammar"], bare)  # nor a call written as the answer
    assert second["messages"] == first["messages"]  # the same conversation, asked again


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_new_call_written_as_the_answer_is_read_as_that_call(
    wire: WireServer, stream: bool
) -> None:
    written = json.dumps({"name": "refund_order", "arguments": {"order_id": "A-1"}})
    answer = call_chunks(written) if stream else Reply(body=completion(written))
    wire.push(calls(LOOKUP_AGAIN), answer)
    run = drive(provider(wire, stream=stream), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    (made,) = run.message.tool_calls
    assert (made.name, made.arguments) == REFUND_A1
    assert run.message.text == ""  # never an answer


def test_a_repeated_call_written_as_the_answer_fails_the_call(wire: WireServer) -> None:
    written = "```json\n" + listed(LOOKUP_AGAIN) + "\n```"
    wire.push(calls(LOOKUP_AGAIN), Reply(body=completion(written)))
    run = fail(provider(wire), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    assert run.error is not None
    assert "wrote calls already made as text" in run.error.message
    assert len(wire.requests) == 2  # the re-ask was the one chance


class Desk:
    """A look-up tool and a refund option, noting what ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

    def lookup_order(self, order_id: str, note: str = "") -> str:
        """Look an order up."""
        self.ran.append(("lookup_order", order_id))
        return f"order {order_id}: charged twice"

    def refund(self, order_id: str) -> str:
        """Refund the order."""
        self.ran.append(("refund", order_id))
        return f"refunded {order_id}"


def test_a_repeat_in_a_decision_is_asked_again_with_the_options_only(wire: WireServer) -> None:
    desk = Desk()
    wire.push(
        calls(("lookup_order", {"order_id": "A-1"})),
        calls(LOOKUP_AGAIN),
        calls(("refund", {"order_id": "A-1"})),
    )
    choices = {"refund": desk.refund, "reply": ("replied", "Answer the customer.")}
    rt = Runtime(provider(wire))
    result = rt.exec(
        "Refund A-1 if it was charged twice.", tools=[desk.lookup_order], choices=choices
    )
    assert result == "refunded A-1"
    assert desk.ran == [("lookup_order", "A-1"), ("refund", "A-1")]  # the repeat never ran
    bodies = [seen.json for seen in wire.requests]
    assert [names(b) for b in bodies] == [
        ["lookup_order"],  # work first: the options are listed once a result is in
        ["lookup_order", "refund", "reply"],
        ["refund", "reply"],  # the re-ask of the repeat: it must pick now
    ]
    grammar = bodies[2]["grammar"]
    assert accepts(grammar, '[{"name": "refund", "arguments": {"order_id": "A-1"}}]')
    assert accepts(grammar, '{"call": "reply"}')
    assert not accepts(grammar, listed(("lookup_order", {"order_id": "A-1"})))
    assert not accepts(grammar, "It was charged twice.")
    assert bodies[2]["messages"] == bodies[1]["messages"]


def test_the_re_ask_lets_the_server_move_the_cached_conversation(wire: WireServer) -> None:
    # Without the function list at its front, nothing of the re-ask's prompt matches the
    # cache as a prefix: llama.cpp computes it all again unless told to shift it in.
    wire.push(calls(LOOKUP_AGAIN), Reply(body=completion("A-1 was charged twice.")))
    drive(provider(wire), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    first, second = (seen.json for seen in wire.requests)
    assert "n_cache_reuse" not in first  # its prompt extends the cached one
    assert second["n_cache_reuse"] == PROFILES[LOCAL_MODEL].reuse_chunk


def test_a_cache_reuse_of_the_users_own_is_sent_as_given(wire: WireServer) -> None:
    wire.push(calls(LOOKUP_AGAIN), Reply(body=completion("A-1 was charged twice.")))
    options = {"extra_body": {"n_cache_reuse": 256}}
    drive(provider(wire, **options), request(*LOOKED_UP, tools=(LOOKUP, REFUND)))
    assert [seen.json["n_cache_reuse"] for seen in wire.requests] == [256, 256]
