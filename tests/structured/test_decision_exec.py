"""Decisions through the runtime: exec(choices=...), decision.make, nesting, the iteration cap."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import (
    ConfigurationError,
    DecisionError,
    Runtime,
    UserError,
    agentic_function,
    decision,
    set_default_runtime,
)
from openprogram.decision import DecisionMenu, PickError
from openprogram.events import AgentInvoked
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.runtime import StreamFinal
from openprogram.schema import json_schema_violations
from openprogram.testing import ScriptedProvider, call


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: not delivered"


def refund(amount: int, runtime: Runtime) -> tuple[int, Runtime]:
    """Refund the customer.

    Args:
        amount: In cents.
    """
    return amount, runtime


CHOICES = {"refund": refund, "wait": ("waiting", "Ask the customer to wait.")}


def test_the_model_works_first_then_its_pick_runs() -> None:
    provider = ScriptedProvider(
        [call("lookup", order_id="A1"), 'Lost parcel.\n{"call": "refund", "args": {"amount": 9}}']
    )
    rt = Runtime(provider)
    assert rt.exec("Handle A1.", tools=[lookup], choices=CHOICES) == (9, rt)
    first, second = provider.requests
    assert first.messages[0].text == "Handle A1.\n\n" + DecisionMenu.of(CHOICES).render()
    assert [s["name"] for s in first.tools] == ["lookup"]
    assert second.messages[-1] == ToolResultMessage(
        second.messages[-2].tool_calls[0].id,  # type: ignore[union-attr]
        "lookup",
        "order A1: not delivered",
    )
    assert rt.last_run is not None
    assert rt.last_run.output == (9, rt)
    assert rt.last_run.stop_reason == "stop"


def test_picked_value_is_returned_as_is() -> None:
    rt = Runtime(ScriptedProvider(['{"call": "wait"}']))
    assert rt.exec("Handle A1.", tools=[], choices=CHOICES) == "waiting"


def test_reask_keeps_the_callers_tool_menu() -> None:
    provider = ScriptedProvider(
        [
            '{"call": "refund", "args": {"amount": "all"}}',
            call("lookup", order_id="A1"),
            '{"call": "refund", "args": {"amount": 5}}',
        ]
    )
    rt = Runtime(provider)
    assert rt.exec("Handle A1.", tools=[lookup], choices=CHOICES)[0] == 5
    reask = provider.requests[1]
    assert [s["name"] for s in reask.tools] == ["lookup"]
    assert reask.messages[-1] == UserMessage(
        "Your pick could not be used: invalid arguments for option 'refund':\n"
        "- amount: expected integer\n"
        'End your reply with one JSON object {"call": "<option>", "args": {...}} naming one '
        "of: 'refund', 'wait'."
    )


def test_second_bad_pick_raises_decision_error() -> None:
    provider = ScriptedProvider(["I'd refund.", '{"call": "refund_all"}', "never sent"])
    rt = Runtime(provider)
    with pytest.raises(DecisionError) as info:
        rt.exec("Handle A1.", tools=[], choices=CHOICES)
    assert info.value.problem == "unknown option 'refund_all'; the options are 'refund', 'wait'"
    assert provider.remaining == 1
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "error"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"choices": CHOICES, "response_format": {"type": "object"}}, "one or the other"),
        ({"choices": []}, "choices= is empty"),
        ({"choices": ["a", "a"]}, "same name"),
    ],
)
def test_bad_choices_fail_before_any_request(kwargs: dict[str, Any], needle: str) -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(UserError, match=needle):
        Runtime(provider).exec("x", tools=[], **kwargs)
    assert provider.requests == []


# -- decision.make -----------------------------------------------------------------------------


def test_make_decides_without_tools() -> None:
    provider = ScriptedProvider(['{"call": "b"}'])
    assert decision.make("Pick one.", ["a", "b"], runtime=Runtime(provider)) == "b"
    assert provider.requests[0].tools == ()


def test_make_uses_the_current_runtime() -> None:
    rt = Runtime(ScriptedProvider(['{"call": "a"}']))
    with rt:
        assert decision.make("Pick one.", ["a", "b"]) == "a"
    assert rt.last_run is not None


def test_make_uses_the_default_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = Runtime(ScriptedProvider(['{"call": "a"}']))
    set_default_runtime(rt)
    try:
        assert decision.make("Pick one.", ["a", "b"]) == "a"
    finally:
        set_default_runtime(None)
    from openprogram.providers import local

    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    monkeypatch.setattr(local, "local_available", lambda: False)  # as without the extra
    with pytest.raises(ConfigurationError, match="no model provider is configured"):
        decision.make("Pick one.", ["a", "b"])
    set_default_runtime(None)


def test_async_make() -> None:
    rt = Runtime(ScriptedProvider(['{"call": "b"}']))
    assert asyncio.run(decision.async_make("Pick one.", ["a", "b"], runtime=rt)) == "b"


# -- nesting -----------------------------------------------------------------------------------


@agentic_function(register_globally=False)  # keep the shared registry clean
def route(ticket: str, runtime: Runtime) -> str:
    """Route a ticket to a team."""
    return runtime.exec(
        f"Route: {ticket}", tools=[], choices={"billing": "team-b", "tech": "team-t"}
    )  # type: ignore[no-any-return]


def test_nested_decision_inside_an_agentic_function() -> None:
    provider = ScriptedProvider(
        [call("route", ticket="charged twice"), '{"call": "billing"}', "Routed to team-b."]
    )
    rt = Runtime(provider)
    assert rt.exec("Handle it.", tools=[route]) == "Routed to team-b."
    assert provider.requests[2].messages[-1].content == "team-b"  # type: ignore[union-attr]


def test_picked_agentic_function_runs_nested_in_the_deciding_exec() -> None:
    provider = ScriptedProvider(
        ['{"call": "route", "args": {"ticket": "slow app"}}', '{"call": "tech"}']
    )
    rt = Runtime(provider)
    assert rt.exec("Decide.", tools=[], choices=[route]) == "team-t"
    assert rt.last_run is not None
    invoked = [e for e in rt.last_run.events if isinstance(e, AgentInvoked)]
    outer, inner = invoked
    assert inner.parent_run_id == outer.run_id
    assert inner.depth == outer.depth + 1


def test_decision_result_is_the_stream_final_output() -> None:
    rt = Runtime(ScriptedProvider(['{"call": "wait"}']))

    async def final() -> Any:
        events = [e async for e in rt.stream("Handle A1.", tools=[], choices=CHOICES)]
        assert isinstance(events[-1], StreamFinal)
        return events[-1].output

    assert asyncio.run(final()) == "waiting"


# -- the iteration cap -------------------------------------------------------------------------


def test_at_the_cap_return_judges_the_last_reply_without_a_reask() -> None:
    provider = ScriptedProvider([call("lookup", order_id="A1")])
    rt = Runtime(provider)
    with pytest.raises(DecisionError, match="and no re-ask was left: no pick was found"):
        rt.exec("Handle A1.", tools=[lookup], choices=CHOICES, max_iterations=1)
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"


def test_at_the_cap_finish_asks_for_the_pick_once_more() -> None:
    provider = ScriptedProvider([call("lookup", order_id="A1"), '{"call": "wait"}'])
    rt = Runtime(provider)
    result = rt.exec(
        "Handle A1.",
        tools=[lookup],
        choices=CHOICES,
        max_iterations=1,
        on_max_iterations="finish",
    )
    assert result == "waiting"
    assert provider.requests[1].tool_choice == "none"
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"


def test_menu_joins_block_content_as_a_last_text_block() -> None:
    provider = ScriptedProvider(['{"call": "wait"}'])
    content = ["Handle A1.", {"type": "text", "text": "It is urgent."}]
    Runtime(provider).exec(content, tools=[], choices=CHOICES)
    blocks = provider.requests[0].messages[0].content
    assert isinstance(blocks, tuple)
    assert [b.text for b in blocks[:2]] == ["Handle A1.", "It is urgent."]  # type: ignore[union-attr]
    assert blocks[2].text == "\n\n" + DecisionMenu.of(CHOICES).render()  # type: ignore[union-attr]


# -- the pick's schema on every request (ProviderRequest.answer_schema) ------------------------


def note(text: str = "", urgent: bool = False) -> str:
    """Leave a note."""
    return text


REFUND_PICK = {
    "type": "object",
    "properties": {
        "call": {"const": "refund"},
        "args": {
            "type": "object",
            "properties": {"amount": {"description": "In cents.", "type": "integer"}},
            "required": ["amount"],
            "additionalProperties": False,
        },
    },
    "description": "Refund the customer.",
    "required": ["call", "args"],
    "additionalProperties": False,
}
WAIT_PICK = {
    "type": "object",
    "properties": {"call": {"const": "wait"}},
    "description": "Ask the customer to wait.",
    "required": ["call"],
    "additionalProperties": False,
}


def test_every_request_of_a_decision_carries_the_schema_of_its_pick() -> None:
    provider = ScriptedProvider([call("lookup", order_id="A1"), '{"call": "wait"}'])
    Runtime(provider).exec("Handle A1.", tools=[lookup], choices=CHOICES)
    expected = {"anyOf": [REFUND_PICK, WAIT_PICK]}
    assert [r.answer_schema for r in provider.requests] == [expected, expected]


def test_the_re_ask_of_a_bad_pick_carries_the_schema_too() -> None:
    provider = ScriptedProvider(["I'd wait.", '{"call": "wait"}'])
    assert Runtime(provider).exec("Handle A1.", tools=[], choices=CHOICES) == "waiting"
    assert provider.requests[1].answer_schema == {"anyOf": [REFUND_PICK, WAIT_PICK]}


def test_args_are_optional_in_the_pick_when_no_argument_is_required() -> None:
    provider = ScriptedProvider(['{"call": "note", "args": {"text": "hi"}}'])
    assert Runtime(provider).exec("Decide.", tools=[], choices=[note]) == "hi"
    schema = provider.requests[0].answer_schema
    assert schema is not None
    (option,) = schema["anyOf"]
    assert option["required"] == ["call"]
    assert list(option["properties"]["args"]["properties"]) == ["text", "urgent"]
    assert json_schema_violations(schema, {"call": "note"}) == []


def test_the_pick_schema_accepts_exactly_the_picks_the_menu_accepts() -> None:
    menu = DecisionMenu.of(CHOICES)
    schema = menu.pick_schema()
    for pick in ({"call": "refund", "args": {"amount": 9}}, {"call": "wait"}):
        assert json_schema_violations(schema, pick) == []
        assert menu.pick(json.dumps(pick)).choice.name == pick["call"]
    for bad in (
        {"call": "cancel"},
        {"call": "refund"},
        {"call": "refund", "args": {"amount": "x"}},
    ):
        assert json_schema_violations(schema, bad) != []
        with pytest.raises(PickError):
            menu.pick(json.dumps(bad))


@pytest.mark.parametrize(
    "options",
    [{}, {"response_format": {"type": "object", "properties": {"a": {"type": "integer"}}}}],
    ids=["text", "structured"],
)
def test_an_exec_without_choices_sends_no_answer_schema(options: dict[str, Any]) -> None:
    provider = ScriptedProvider(['{"a": 1}'])
    Runtime(provider).exec("Answer.", tools=[], **options)
    assert provider.requests[0].answer_schema is None


class Item(BaseModel):
    sku: str


class Shipment(BaseModel):
    items: list[Item]


def gift_item() -> type[BaseModel]:
    class Item(BaseModel):  # the same name as the shipment's, another type
        message: str

    class Gift(BaseModel):
        item: Item

    return Gift


def test_options_defining_types_resolve_them_in_the_pick_schema() -> None:
    provider = ScriptedProvider(['{"call": "ship", "args": {"items": [{"sku": "X-1"}]}}'])
    choices = {"ship": ("Ship it.", Shipment), "gift": ("Wrap it.", gift_item())}
    shipped = Runtime(provider).exec("Decide.", tools=[], choices=choices)
    assert shipped == {"decision": "ship", "items": [{"sku": "X-1"}]}
    schema = provider.requests[0].answer_schema
    assert schema is not None
    fine = [
        {"call": "ship", "args": {"items": [{"sku": "X-1"}]}},
        {"call": "gift", "args": {"item": {"message": "Enjoy!"}}},
    ]
    bad = [
        {"call": "ship", "args": {"items": [{"message": "Enjoy!"}]}},
        {"call": "gift", "args": {"item": {"sku": "X-1"}}},
    ]
    assert [json_schema_violations(schema, pick) for pick in fine] == [[], []]
    assert all(json_schema_violations(schema, pick) for pick in bad)
    assert sorted(schema["$defs"]) == ["Item", "Item_2"]  # one root, two types
