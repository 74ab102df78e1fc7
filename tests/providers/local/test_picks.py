"""A decision's options as functions of the local model, against a scripted llama.cpp server.

With ``exec(choices=...)`` the local provider lists each option as a function
after the real tools once a tool result is in (work first; from the first turn
when no tool is offered), lets the grammar call them, and turns a reply that
calls only an option into the pick's text, which the decision layer then
carries out. Before a result is in, a pick can still be written as text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import Runtime
from openprogram.decision import DecisionMenu
from openprogram.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from openprogram.providers.local import LocalProvider

from .._helpers import ADD, WEATHER, drive, request
from .._server import Reply, WireServer
from ._gbnf import accepts
from ._llama import call_chunks, completion, names, provider

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]


class Desk:
    """The tools and the function option of a support desk, noting what ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

    def lookup_order(self, order_id: str) -> str:
        """Look an order up."""
        self.ran.append(("lookup_order", order_id))
        return f"order {order_id}: charged twice"

    def refund(self, order_id: str) -> str:
        """Refund the order."""
        self.ran.append(("refund", order_id))
        return f"refunded {order_id}"

    def choices(self) -> dict[str, Any]:
        return {"refund": self.refund, "reply": ("replied", "Answer the customer.")}


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A completion whose text is a JSON list of calls."""
    listed = [{"name": name, "arguments": args} for name, args in pairs]
    return completion(json.dumps(listed))


def local_runtime(wire: WireServer, **options: Any) -> Runtime:
    return Runtime(provider(wire, **options))


LOOKUP_A1 = ("lookup_order", {"order_id": "A-1"})
LOOKUP_A2 = ("lookup_order", {"order_id": "A-2"})
REFUND_A1 = ("refund", {"order_id": "A-1"})
PICK_SCHEMA = DecisionMenu.of(Desk().choices()).pick_schema()


def looked_up(task: str) -> tuple[Message | str, ...]:
    """``task``, then a weather look-up and its result: a tool result is in."""
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "Rome"})
    return (
        task,
        AssistantMessage((call,), stop_reason="tool_calls"),
        ToolResultMessage(call_id="c1", tool_name="get_weather", content="sunny"),
    )


# -- what is sent ----------------------------------------------------------------------------


def test_options_are_listed_as_functions_after_the_tools_once_a_result_is_in(
    wire: WireServer,
) -> None:
    desk = Desk()
    wire.push(Reply(body=calls(LOOKUP_A1)), Reply(body=calls(REFUND_A1)))
    rt = local_runtime(wire)
    result = rt.exec(
        "Order A-1 was charged twice.", tools=[desk.lookup_order], choices=desk.choices()
    )
    assert result == "refunded A-1"  # the picked function option ran
    assert desk.ran == [("lookup_order", "A-1"), ("refund", "A-1")]
    first, second = (seen.json for seen in wire.requests)
    assert names(first) == ["lookup_order"]  # work first: no option before a result is in
    assert names(second) == ["lookup_order", "refund", "reply"]
    refund, reply = second["chat_template_kwargs"]["functions"][1:]
    assert refund["description"] == "Refund the order."
    assert refund["parameters"]["required"] == ["order_id"]
    assert reply == {
        "name": "reply",
        "description": "Answer the customer.",
        "parameters": {"type": "object", "properties": {}},
    }
    grammar = second["grammar"]
    assert accepts(grammar, '[{"name": "refund", "arguments": {"order_id": "A-1"}}]')
    assert accepts(grammar, '[{"name": "reply", "arguments": {}}]')
    assert accepts(grammar, '{"call": "reply"}')  # the pick written as text stays possible
    assert not accepts(grammar, '[{"name": "cancel", "arguments": {}}]')
    assert not accepts(grammar, '{"call": "cancel"}')


def test_the_first_turn_with_tools_lists_no_option_but_a_pick_can_be_written(
    wire: WireServer,
) -> None:
    pick = '{"call": "refund", "args": {"order_id": "A-1"}}'
    wire.push(Reply(body=completion(pick)), Reply(body=calls(("add", {"a": 1, "b": 2}))))
    tools = (WEATHER, ADD)
    first = drive(provider(wire), request("x", tools=tools, answer_schema=PICK_SCHEMA))
    drive(provider(wire), request(*looked_up("x"), tools=tools, answer_schema=PICK_SCHEMA))
    before, after = (seen.json for seen in wire.requests)
    assert names(before) == ["get_weather", "add"]
    grammar = before["grammar"]
    assert accepts(grammar, '[{"name": "get_weather", "arguments": {"city": "Paris"}}]')
    assert accepts(grammar, pick)  # the pick written as text
    assert not accepts(grammar, '[{"name": "refund", "arguments": {"order_id": "A-1"}}]')
    assert not accepts(grammar, "I would refund it.")
    assert first.message.text == pick  # and it is read as the pick
    assert first.message.tool_calls == []
    assert names(after) == ["get_weather", "add", "refund", "reply"]  # a result is in
    assert accepts(after["grammar"], '[{"name": "refund", "arguments": {"order_id": "A-1"}}]')


@pytest.mark.parametrize(
    ("choice", "listed"),
    [
        ("auto", ["get_weather", "add", "refund", "reply"]),
        ("required", ["get_weather", "add"]),
        ({"type": "function", "name": "add"}, ["add"]),
    ],
    ids=["auto", "required", "forced"],
)
def test_a_forced_call_lists_no_option(wire: WireServer, choice: Any, listed: list[str]) -> None:
    wire.push(Reply(body=calls(("add", {"a": 1, "b": 2}))))
    history = looked_up("x")  # a result is in: "auto" lists the options
    drive(
        provider(wire),
        request(*history, tools=(WEATHER, ADD), tool_choice=choice, answer_schema=PICK_SCHEMA),
    )
    body = wire.requests[0].json
    assert names(body) == listed
    assert accepts(body["grammar"], '[{"name": "add", "arguments": {"a": 1, "b": 2}}]')
    assert accepts(body["grammar"], '{"call": "reply"}') is (choice == "auto")


def test_with_tool_choice_none_only_the_options_are_listed(wire: WireServer) -> None:
    wire.push(Reply(body=calls(("reply", {}))))
    schema = DecisionMenu.of(Desk().choices()).pick_schema()
    run = drive(
        provider(wire), request("x", tools=(WEATHER,), tool_choice="none", answer_schema=schema)
    )
    body = wire.requests[0].json
    assert names(body) == ["refund", "reply"]
    assert not accepts(body["grammar"], '[{"name": "get_weather", "arguments": {"city": "P"}}]')
    assert not accepts(body["grammar"], "I would reply.")
    assert accepts(body["grammar"], '{"call": "refund", "args": {"order_id": "A-1"}}')
    assert run.message.text == '{"call": "reply"}'


def test_a_broken_reply_in_a_decision_is_asked_again_with_the_options_only(
    wire: WireServer,
) -> None:
    wire.push(
        Reply(body=calls(LOOKUP_A1)),
        Reply(body=completion("[not json")),
        Reply(body=calls(("reply", {}))),
    )
    desk = Desk()
    assert local_runtime(wire).exec("Hi!", tools=[desk.lookup_order], choices=desk.choices()) == (
        "replied"
    )
    first, second = (seen.json for seen in wire.requests[1:])  # a result is in
    assert names(first) == ["lookup_order", "refund", "reply"]
    assert names(second) == ["refund", "reply"]  # no tool: it must pick now
    assert not accepts(
        second["grammar"], '[{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]'
    )
    assert not accepts(second["grammar"], "Hello!")
    assert accepts(second["grammar"], '{"call": "reply"}')


def test_an_option_named_like_an_offered_tool_is_not_a_function(wire: WireServer) -> None:
    wire.push(Reply(body=calls(("get_weather", {"city": "Paris"}))))
    schema = DecisionMenu.of({"get_weather": "sunny", "reply": "replied"}).pick_schema()
    run = drive(provider(wire), request(*looked_up("x"), tools=(WEATHER,), answer_schema=schema))
    functions = wire.requests[0].json["chat_template_kwargs"]["functions"]
    assert [f["name"] for f in functions] == ["get_weather", "reply"]
    assert functions[0]["description"] == WEATHER["description"]  # the tool, not the option
    (call,) = run.message.tool_calls  # a call of it is a call of the tool
    assert (call.name, dict(call.arguments)) == ("get_weather", {"city": "Paris"})


def test_without_choices_no_option_is_listed(wire: WireServer) -> None:
    wire.push(Reply(body=completion("Refunded.")))
    assert local_runtime(wire).exec("Refund A-1.", tools=[Desk().lookup_order]) == "Refunded."
    body = wire.requests[0].json
    assert names(body) == ["lookup_order"]
    assert body["grammar"].splitlines()[0].endswith("| text")


# -- what a reply becomes --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_reply_calling_only_an_option_is_the_pick(wire: WireServer, stream: bool) -> None:
    listed = '[{"name": "refund", "arguments": {"order_id": "A-1"}}]'
    wire.push(
        call_chunks("[", listed[1:30], listed[30:]) if stream else Reply(body=completion(listed))
    )
    sent = request(*looked_up("x"), tools=(WEATHER,), answer_schema=PICK_SCHEMA)
    run = drive(provider(wire, stream=stream), sent)
    pick = '{"call": "refund", "args": {"order_id": "A-1"}}'
    assert run.message.text == pick
    assert run.message.tool_calls == []
    assert run.message.stop_reason == "stop"
    if stream:
        assert run.text == pick  # streamed as the answer, never as call JSON


def test_an_option_without_arguments_is_picked_without_args(wire: WireServer) -> None:
    wire.push(Reply(body=calls(("reply", {}))))
    desk = Desk()
    assert local_runtime(wire).exec("Hi!", choices=desk.choices()) == "replied"
    assert desk.ran == []
    assert names(wire.requests[0].json) == ["refund", "reply"]  # no tool: listed at once


def test_a_reply_calling_a_tool_and_an_option_runs_only_the_tool(wire: WireServer) -> None:
    desk = Desk()
    wire.push(
        Reply(body=calls(LOOKUP_A1)),
        Reply(body=calls(LOOKUP_A2, REFUND_A1)),  # a result is in: the options are functions
        Reply(body=calls(REFUND_A1)),
    )
    rt = local_runtime(wire)
    result = rt.exec(
        "Orders A-1 and A-2 were charged.", tools=[desk.lookup_order], choices=desk.choices()
    )
    assert result == "refunded A-1"
    # the early pick was dropped
    assert desk.ran == [("lookup_order", "A-1"), ("lookup_order", "A-2"), ("refund", "A-1")]
    assistant = wire.requests[2].json["messages"][-2]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["lookup_order"]


def test_a_streamed_repeat_of_an_option_ends_the_reply_as_the_pick(wire: WireServer) -> None:
    reply = '{"name": "reply", "arguments": {}}'
    # What follows the repeat is never read: reading it would fail to parse.
    lookup = json.dumps([{"name": "lookup_order", "arguments": {"order_id": "A-1"}}])
    wire.push(call_chunks(lookup), call_chunks("[", reply, ", ", reply, ", {not json"))
    desk = Desk()
    rt = Runtime(LocalProvider(base_url=f"{wire.url}/v1", stream=True, max_retries=0))
    assert rt.exec("Hi!", tools=[desk.lookup_order], choices=desk.choices()) == "replied"
    assert len(wire.requests) == 2  # the look-up, then the reply that repeats the option


class Item(BaseModel):
    sku: str


class Shipment(BaseModel):
    items: list[Item]


def test_an_option_defining_types_is_a_function_that_carries_them(wire: WireServer) -> None:
    pick = ("ship", {"items": [{"sku": "X-1"}]})
    wire.push(Reply(body=calls(LOOKUP_A1)), Reply(body=calls(pick)))
    choices = {"ship": ("Ship it.", Shipment), "reply": ("replied", "Answer the customer.")}
    result = local_runtime(wire).exec("Ship X-1.", tools=[Desk().lookup_order], choices=choices)
    assert result == {"decision": "ship", "items": [{"sku": "X-1"}]}
    body = wire.requests[1].json  # a result is in
    ship = body["chat_template_kwargs"]["functions"][1]
    assert ship["parameters"]["$defs"]["Item"]["required"] == ["sku"]
    grammar = body["grammar"]
    assert accepts(grammar, '[{"name": "ship", "arguments": {"items": [{"sku": "X-1"}]}}]')
    assert not accepts(grammar, '[{"name": "ship", "arguments": {"items": [{"qty": 1}]}}]')
    assert accepts(grammar, '{"call": "ship", "args": {"items": [{"sku": "X-1"}]}}')
    assert not accepts(grammar, '{"call": "ship", "args": {"items": [{"qty": 1}]}}')


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_options_are_worked_out_once_per_request(
    wire: WireServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The body lists the options and the reply is read against them: one reckoning
    # per request, carried on the request, serves both (the re-ask of a repeat too).
    import openprogram.providers.local._pipeline as chat

    worked: list[int] = []
    real = chat.picks_of

    def counted(*args: Any, **kwargs: Any) -> Any:
        worked.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(chat, "picks_of", counted)
    repeat = json.dumps([{"name": "lookup_order", "arguments": {"order_id": "A-1"}}])
    wire.push(
        Reply(body=calls(LOOKUP_A1)),
        call_chunks(repeat) if stream else Reply(body=completion(repeat)),
        Reply(body=calls(REFUND_A1)),
    )
    desk = Desk()
    rt = local_runtime(wire, stream=stream)
    task = "Order A-1 was charged twice."
    result = rt.exec(task, tools=[desk.lookup_order], choices=desk.choices())
    assert result == "refunded A-1"
    assert desk.ran == [("lookup_order", "A-1"), ("refund", "A-1")]
    assert [names(seen.json) for seen in wire.requests][1:] == [
        ["lookup_order", "refund", "reply"],
        ["refund", "reply"],  # the re-ask of the repeat carries the same options
    ]
    # Once in all: the first model call has no result in yet (no options to work out),
    # and the second's re-ask is the same request asked again.
    assert len(worked) == 1
