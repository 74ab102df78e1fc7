"""Decisions, unit level: option forms, the menu text, finding and checking a pick, running it."""

from __future__ import annotations

import asyncio
import enum
import threading
from typing import Any, Literal

import pydantic
import pytest

from openprogram.decision import DecisionMenu, DecisionTurns, Picked, Reask
from openprogram.exceptions import DecisionError, SchemaError, UserError
from openprogram.messages import AssistantMessage, TextContent
from openprogram.tools import Tool, ToolContext


def approve(amount: int, note: str = "", runtime: Any = None) -> dict[str, Any]:
    """Approve the refund.

    Args:
        amount: Amount in cents.
        note: Shown to the customer.
    """
    return {"amount": amount, "note": note, "runtime": runtime}


class Escalation(pydantic.BaseModel):
    """Why a human must look at it."""

    reason: Literal["billing", "fraud"]
    urgent: bool = False


class Color(enum.Enum):
    RED = (255, 0, 0)
    GREEN = (0, 255, 0)


RUNTIME = object()  # any object stands in for the runtime: run() only passes it along


def reply(text: str) -> AssistantMessage:
    return AssistantMessage((TextContent(text),))


def pick(menu: DecisionMenu, text: str) -> Picked:
    step = DecisionTurns(menu).judge(reply(text))
    assert isinstance(step, Picked), step
    return step


def problem(menu: DecisionMenu, text: str) -> str:
    step = DecisionTurns(menu).judge(reply(text))
    assert isinstance(step, Reask), step
    return step.message.text


def run(menu: DecisionMenu, text: str) -> Any:
    return asyncio.run(menu.run(pick(menu, text), RUNTIME))


# -- option forms ------------------------------------------------------------------------------


def test_function_option_takes_its_schema_from_the_generator() -> None:
    (choice,) = DecisionMenu.of([approve]).choices
    assert choice.name == "approve"
    assert choice.kind == "function"
    assert choice.description == "Approve the refund."
    assert choice.parameters["required"] == ["amount"]
    assert "runtime" not in choice.parameters["properties"]


def test_function_runs_with_converted_arguments_and_the_runtime_injected() -> None:
    menu = DecisionMenu.of({"ok": approve})
    assert run(menu, '{"call": "ok", "args": {"amount": 5}}') == {
        "amount": 5,
        "note": "",
        "runtime": RUNTIME,
    }


def test_function_pair_overrides_the_description() -> None:
    (choice,) = DecisionMenu.of([(approve, "Say yes.")]).choices
    assert (choice.name, choice.description, choice.kind) == ("approve", "Say yes.", "function")


def test_value_options_return_the_value_itself() -> None:
    sentinel = object()
    menu = DecisionMenu.of({"keep": sentinel, "drop": (None, "Throw it away.")})
    assert [c.kind for c in menu.choices] == ["value", "value"]
    assert menu.choices[1].description == "Throw it away."
    assert run(menu, '{"call": "keep"}') is sentinel
    assert run(menu, '{"call": "drop", "args": {}}') is None


def test_list_values_are_named_after_themselves() -> None:
    menu = DecisionMenu.of(["yes", ("no", "Decline."), 3, True, Color.RED])
    assert menu.names == ["yes", "no", "3", "true", "RED"]
    assert run(menu, '{"call": "RED"}') is Color.RED
    assert run(menu, '{"call": "3"}') == 3


def test_classes_are_values_not_functions() -> None:
    menu = DecisionMenu.of({"model": Escalation})
    assert menu.choices[0].kind == "value"
    assert run(menu, '{"call": "model"}') is Escalation


def test_schema_option_returns_the_decision_and_its_fields() -> None:
    menu = DecisionMenu.of(
        {
            "escalate": ("Hand it to a human.", Escalation),
            "tag": (
                "Tag it.",
                {"type": "object", "properties": {"tags": {"type": "array"}}, "required": ["tags"]},
            ),
        }
    )
    assert [c.kind for c in menu.choices] == ["schema", "schema"]
    assert run(menu, '{"call": "escalate", "args": {"reason": "fraud"}}') == {
        "decision": "escalate",
        "reason": "fraud",
        "urgent": False,
    }
    assert run(menu, '{"call": "tag", "args": {"tags": ["x"]}}') == {
        "decision": "tag",
        "tags": ["x"],
    }


def test_schema_option_in_a_list_is_named_by_its_title() -> None:
    menu = DecisionMenu.of([("Hand it to a human.", Escalation)])
    assert menu.names == ["Escalation"]


def test_tool_option_runs_as_its_tool() -> None:
    seen: list[Any] = []

    def lookup(order_id: str, context: ToolContext) -> str:
        """Look an order up."""
        seen.append(context.runtime)
        return f"order {order_id}"

    tool = Tool.from_function(lookup, name="find_order")
    menu = DecisionMenu.of([tool])
    assert menu.names == ["find_order"]
    assert menu.choices[0].description == "Look an order up."
    assert run(menu, '{"call": "find_order", "args": {"order_id": "A1"}}') == "order A1"
    assert seen == [RUNTIME]


def test_failing_tool_option_raises_decision_error_with_its_text() -> None:
    def boom() -> None:
        """Always fails."""
        raise RuntimeError("disk full")

    menu = DecisionMenu.of([Tool.from_function(boom)])
    with pytest.raises(DecisionError, match=r"running tool 'boom' failed: .*disk full"):
        run(menu, '{"call": "boom"}')


def test_failing_function_option_raises_its_own_exception() -> None:
    def boom() -> None:
        """Always fails."""
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        run(DecisionMenu.of([boom]), '{"call": "boom"}')


def test_async_function_option_is_awaited() -> None:
    async def later(n: int) -> int:
        """Later."""
        await asyncio.sleep(0)
        return n * 2

    assert run(DecisionMenu.of([later]), '{"call": "later", "args": {"n": 4}}') == 8


def test_sync_function_option_runs_off_the_event_loop_thread() -> None:
    def where() -> str:
        """Where it runs."""
        return threading.current_thread().name

    assert run(DecisionMenu.of([where]), '{"call": "where"}') != threading.current_thread().name


def test_menu_passes_through() -> None:
    menu = DecisionMenu.of(["a"])
    assert DecisionMenu.of(menu) is menu


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ([], "choices= is empty"),
        ({}, "choices= is empty"),
        ("yes", "is not a set of options: pass a dict"),
        (42, "is not a set of options"),
        (["a", "a"], "options with the same name: 'a'"),
        ({"": 1}, "option name '' is not usable"),
        ({1: "x"}, "option name 1 is not usable"),
        ({"a\nb": 1}, "is not usable"),
        ([{"x": 1}], r"choices\[0\] \({'x': 1}\) has no name the model could write"),
        ([("Pick it.", {"type": "object"})], r"choices\[0\]: a schema option needs a name"),
        ({"n": ("A number.", {"type": "integer"})}, "needs an object schema"),
        ({"n": ("Bad.", {"type": "objekt"})}, r"choices\['n'\]: not a valid JSON Schema at type"),
        (
            {"d": ("Clash.", {"type": "object", "properties": {"decision": {}}})},
            "cannot have a field named 'decision'",
        ),
    ],
)
def test_bad_options_are_user_errors(options: Any, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        DecisionMenu.of(options)


def test_function_without_a_schema_is_a_schema_error() -> None:
    def untyped(*args: Any) -> None:
        """Takes anything."""

    with pytest.raises(SchemaError):
        DecisionMenu.of([untyped])


# -- the menu text -----------------------------------------------------------------------------


def test_menu_text_is_compact_and_unambiguous() -> None:
    def ship(items: list[int], mode: Literal["air", "sea"] | None = None) -> None:
        """Ship the items.

        More detail the menu does not need.
        """

    menu = DecisionMenu.of(
        {
            "approve": approve,
            "reject": ("rejected", "Reject the request."),
            "escalate": ("Hand it to a human.", Escalation),
            "go north": "north",
            "ship": ship,
        }
    )
    assert menu.render() == (
        "Options (finish your reply by picking exactly one):\n"
        "- approve(amount: integer, note?: string): Approve the refund.\n"
        "    amount: Amount in cents.\n"
        "    note: Shown to the customer.\n"
        "- reject: Reject the request.\n"
        '- escalate(reason: "billing" | "fraud", urgent?: boolean): Hand it to a human.\n'
        '- "go north"\n'
        '- ship(items: integer[], mode?: "air" | "sea" | null): Ship the items.\n'
        'End your reply with your pick as one JSON object: {"call": "<option>", "args": {...}}\n'
        '("args" holds the option\'s arguments; leave it out when there are none.)'
    )
    assert DecisionTurns(menu).instructions == menu.render()


# -- finding the pick --------------------------------------------------------------------------


MENU = DecisionMenu.of({"approve": approve, "reject": "rejected"})


@pytest.mark.parametrize(
    "text",
    [
        '{"call": "approve", "args": {"amount": 3}}',
        'I checked everything.\n\n{"call": "approve", "args": {"amount": 3}}',
        'Decision:\n```json\n{"call": "approve", "args": {"amount": 3}}\n```\nThanks!',
        '{"call": "reject"} on second thought... {"call": "approve", "args": {"amount": 3}}',
        'Not {this} or {"call": 1 — but {"call": "approve", "arguments": {"amount": 3}}',
        '{"call": "approve", "args": {"amount": 3}, "why": "under the limit"}',
    ],
)
def test_pick_is_found_in_any_reasonable_reply(text: str) -> None:
    found = pick(MENU, text)
    assert found.choice.name == "approve"
    assert found.arguments == {"amount": 3}


def test_args_may_be_omitted_or_null() -> None:
    assert pick(MENU, '{"call": "reject"}').arguments == {}
    assert pick(MENU, '{"call": "reject", "args": null}').arguments == {}


def test_nested_objects_are_not_mistaken_for_the_pick() -> None:
    menu = DecisionMenu.of({"tag": ("Tag.", {"type": "object", "properties": {"call": {}}})})
    found = pick(menu, '{"call": "tag", "args": {"call": "inner"}}')
    assert found.arguments == {"call": "inner"}


# -- bad picks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I approve.", 'no pick was found: the reply must end with a JSON object {"call": ...}'),
        ('{"choice": "approve"}', "no pick was found"),
        ('{"call": "refund"}', "unknown option 'refund'; the options are 'approve', 'reject'"),
        ('{"call": 2}', '"call" must be the option name as a string, got 2'),
        (
            '{"call": "approve", "args": [3]}',
            "\"args\" of option 'approve' must be a JSON object of arguments, got [3]",
        ),
        (
            '{"call": "approve", "args": {"amount": "lots", "tip": 1}}',
            "invalid arguments for option 'approve':\n- amount: expected integer\n"
            "- tip: unexpected argument (allowed: amount, note)",
        ),
        ('{"call": "approve"}', "invalid arguments for option 'approve':\n- amount: missing"),
        ('{"call": "reject", "args": {"why": 1}}', "option 'reject' takes no arguments, got 'why'"),
    ],
)
def test_bad_pick_is_reasked_saying_what_was_wrong(text: str, expected: str) -> None:
    message = problem(MENU, text)
    assert message.startswith(f"Your pick could not be used: {expected}")
    assert message.endswith(
        'End your reply with one JSON object {"call": "<option>", "args": {...}} naming one of: '
        "'approve', 'reject'."
    )


def test_schema_option_fields_are_validated() -> None:
    menu = DecisionMenu.of({"escalate": ("Hand over.", Escalation)})
    text = problem(menu, '{"call": "escalate", "args": {"reason": "boredom"}}')
    assert (
        "invalid arguments for option 'escalate':\n- reason: expected 'billing' or 'fraud'" in text
    )


def test_second_bad_pick_raises_decision_error() -> None:
    turns = DecisionTurns(MENU)
    assert isinstance(turns.judge(reply("Hmm.")), Reask)
    with pytest.raises(DecisionError) as info:
        turns.judge(reply('{"call": "refund"}'))
    assert info.value.problem == "unknown option 'refund'; the options are 'approve', 'reject'"
    assert info.value.reply == '{"call": "refund"}'
    assert str(info.value).startswith(
        "the model did not pick a valid option, even after one re-ask: unknown option 'refund'"
    )


def test_good_pick_after_a_reask_is_accepted() -> None:
    turns = DecisionTurns(MENU)
    assert isinstance(turns.judge(reply("Hmm.")), Reask)
    step = turns.judge(reply('{"call": "reject"}'))
    assert isinstance(step, Picked)
    assert step.choice.name == "reject"


def test_last_chance_raises_at_the_first_bad_pick() -> None:
    turns = DecisionTurns(MENU)
    turns.last_chance()
    with pytest.raises(DecisionError, match="and no re-ask was left: no pick was found"):
        turns.judge(reply("Hmm."))
